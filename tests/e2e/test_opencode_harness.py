"""Smoke test for the e2e harness: real OpenCode, scripted model, real database."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import OpenCodeHome, make_worktree, require_opencode

SCENARIOS = Path(__file__).parents[1] / "fixtures" / "opencode-1.18.33" / "scenarios.json"


def load_scenario(scenario_id: str) -> dict[str, Any]:
    """One entry of the fixture's ``scenarios.json``."""
    scenarios = json.loads(SCENARIOS.read_text())
    return next(s for s in scenarios if s["id"] == scenario_id)


def tool_states(parts: list[dict[str, Any]]) -> dict[str, str]:
    """Tool name → status for the tool parts in ``parts``."""
    return {
        p["data"]["tool"]: p["data"]["state"]["status"]
        for p in parts
        if p["data"]["type"] == "tool"
    }


def texts(parts: list[dict[str, Any]]) -> str:
    """All text parts joined."""
    return "\n".join(p["data"]["text"] for p in parts if p["data"]["type"] == "text")


@pytest.mark.e2e
def test_deploy_pnpm_session_then_followup(tmp_path: Path) -> None:
    binary = require_opencode()
    scenario = load_scenario("deploy-pnpm")
    root = tmp_path / "src"
    worktree = make_worktree(root / scenario["project"], scenario["files"]).resolve()
    deploy = worktree / "scripts" / "deploy.sh"
    followup = scenario["followups"][0]["prompt"]

    with ScriptedModel() as model:
        model.add_scenario(scenario, root.resolve())
        home = OpenCodeHome(tmp_path / "home", model.url, binary=binary)

        sid = home.run(scenario["prompt"], worktree)
        first = home.session(sid)
        assert first["parent_id"] is None
        assert first["directory"] == str(worktree)
        assert first["title"] == scenario["title"]
        assert first["version"] == "1.18.33"

        roles = [m["data"]["role"] for m in home.messages(sid)]
        assert roles[0] == "user" and roles.count("assistant") == 4, roles
        parts = home.parts(sid)
        assert scenario["prompt"] in texts(parts)
        assert "Let me look at the deploy script." in texts(parts)
        assert "pnpm install --frozen-lockfile" in texts(parts)
        assert tool_states(parts) == {"read": "completed", "edit": "completed", "bash": "completed"}
        assert any(p["data"]["type"] == "reasoning" for p in parts)
        assert "pnpm install --frozen-lockfile" in deploy.read_text()

        same = home.run(followup, worktree, session=sid)
        assert same == sid
        later = home.session(sid)
        assert later["time_updated"] > first["time_updated"]
        seen = {p["id"] for p in parts}
        new = [p for p in home.parts(sid) if p["id"] not in seen]
        assert followup in texts(new)
        assert "Updated the rsync target to prod:/srv/webapp." in texts(new)
        edits = [p["data"] for p in new if p["data"].get("tool") == "edit"]
        assert edits and edits[0]["state"]["status"] == "completed"
        assert "prod:/srv/webapp" in deploy.read_text()
        assert [s["id"] for s in home.sessions()] == [sid]

    # The model saw the tool results, and every request matched a script step.
    assert any("syntax-ok" in result for result in model.tool_results())
    assert [(s.kind, s.step) for s in model.served if s.kind != "title"] == [
        ("step", 0), ("step", 1), ("step", 2), ("step", 3), ("step", 0), ("step", 1),
    ]  # fmt: skip


# -- the scripted model alone (no OpenCode needed) ---------------------------------------


def post(model: ScriptedModel, body: dict[str, Any]) -> list[Any]:
    """POST a chat request; return the decoded SSE ``data:`` payloads."""
    request = urllib.request.Request(
        f"{model.url}/chat/completions",
        data=json.dumps({"model": "fake-model", "stream": True, **body}).encode(),
        headers={"Content-Type": "application/json"},
    )
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore *_PROXY
    with direct.open(request, timeout=10) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        lines = response.read().decode().split("\n\n")
    payloads = [line.removeprefix("data: ") for line in lines if line]
    assert payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads[:-1]]


def answer_of(chunks: list[Any]) -> dict[str, Any]:
    """Fold stream chunks into text, reasoning, tool calls, finish reason and usage."""
    deltas = [c["choices"][0]["delta"] for c in chunks]
    return {
        "text": "".join(d.get("content") or "" for d in deltas),
        "reasoning": "".join(d.get("reasoning_content") or "" for d in deltas),
        "tools": [call for d in deltas for call in d.get("tool_calls", [])],
        "finish": chunks[-1]["choices"][0]["finish_reason"],
        "usage": chunks[-1].get("usage"),
    }


TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {}}}]


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": f'"{text}"'}  # quoted, as `opencode run` sends it


def assistant() -> dict[str, str]:
    return {"role": "assistant", "content": "..."}


def test_scripted_model_streams_a_step() -> None:
    with ScriptedModel() as model:
        model.add_session(
            "fix deploy",
            [
                {
                    "text": "Looking.",
                    "reasoning": "hmm",
                    "tools": [{"name": "read", "args": {"x": 1}}],
                }
            ],
        )
        chunks = post(model, {"tools": TOOLS, "messages": [user("please fix deploy now")]})
    answer = answer_of(chunks)
    assert answer["text"] == "Looking." and answer["reasoning"] == "hmm"
    [call] = answer["tools"]
    assert call["index"] == 0 and call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"] == {"name": "read", "arguments": '{"x": 1}'}
    assert answer["finish"] == "tool_calls" and answer["usage"]["total_tokens"] > 0
    assert model.requests[0]["messages"][0]["content"] == '"please fix deploy now"'


def test_scripted_model_titles_steps_and_followups() -> None:
    with ScriptedModel() as model:
        model.add_session("hi", [{"text": "Hello!"}], title="Greeting")
        model.add_session(
            "fix it", [{"tools": [{"name": "bash"}]}, {"text": "Fixed."}], title="Fix"
        )
        model.add_session("and this", [{"text": "Also done."}])
        title = [{"role": "user", "content": "Generate a title for this conversation:\n"}]
        assert answer_of(post(model, {"messages": [*title, user("fix it")]}))["text"] == "Fix"
        assert answer_of(post(model, {"messages": [*title, user("hi")]}))["text"] == "Greeting"
        history = [user("fix it"), assistant(), {"role": "tool", "content": "ok"}, assistant()]
        assert answer_of(post(model, {"tools": TOOLS, "messages": history[:1]}))["tools"]
        assert answer_of(post(model, {"tools": TOOLS, "messages": history[:3]}))["text"] == "Fixed."
        # A continued session starts the follow-up's own script...
        followup = [*history, user("and this")]
        assert (
            answer_of(post(model, {"tools": TOOLS, "messages": followup}))["text"] == "Also done."
        )
        # ...an unregistered follow-up continues the flat script, which is used up.
        other = [*history, user("this one")]  # "hi" must not match inside "this"
        done = answer_of(post(model, {"tools": TOOLS, "messages": other}))
        assert done["text"] == "Done." and done["finish"] == "stop"
        unknown = answer_of(post(model, {"tools": TOOLS, "messages": [user("what?")]}))
        assert unknown["text"] == "Done."
    assert [(s.kind, s.key, s.step) for s in model.served] == [
        ("title", "fix it", None),
        ("title", "hi", None),
        ("step", "fix it", 0),
        ("step", "fix it", 1),
        ("step", "and this", 0),
        ("done", "fix it", 2),
        ("unmatched", None, None),
    ]
    assert not model.errors
