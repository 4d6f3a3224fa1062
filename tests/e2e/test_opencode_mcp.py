"""Real OpenCode with `memoryd mcp` as a local MCP server: remember in one session, recall in the next."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import OpenCodeHome, make_worktree, require_opencode

REPO = Path(__file__).resolve().parents[2]
REMEMBER_PROMPT = "We settled the index question: remember it for later sessions."
RECALL_PROMPT = "What did we decide about the search index?"
BODY = "The search index runs SQLite in WAL mode so the daemon and the MCP server never block each other."


def memoryd_server(home_root: Path) -> dict[str, Any]:
    """The `mcp` entry for opencode.json: this checkout's memoryd, in the test's fake home."""
    environment = {
        "HOME": str(home_root),
        "XDG_CONFIG_HOME": str(home_root / ".config"),
        "XDG_DATA_HOME": str(home_root / ".local" / "share"),
        "XDG_STATE_HOME": str(home_root / ".local" / "state"),
        "PYTHONPATH": str(REPO),
    }
    # A generous tool-listing timeout: the runner's two cores are shared.
    return {
        "memoryd": {
            "type": "local",
            "command": [sys.executable, "-m", "daemon", "mcp"],
            "environment": environment,
            "timeout": 60_000,
        }
    }


def tool_names(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", []) if tool.get("type") == "function"}


@pytest.mark.e2e
def test_opencode_remembers_then_recalls_through_memoryd_mcp(tmp_path: Path) -> None:
    binary = require_opencode()
    worktree = make_worktree(tmp_path / "src" / "webapp", {"README.md": "# webapp\n"}).resolve()
    (worktree / ".memory").mkdir()  # the project opts in to project memory
    home_root = tmp_path / "home"

    with ScriptedModel() as model:
        model.add_session(
            REMEMBER_PROMPT,
            [
                {
                    "text": "Saving that decision.",
                    "tools": [
                        {
                            "name": "memoryd_remember",
                            "args": {
                                "kind": "decision",
                                "title": "Index in WAL mode",
                                "body": BODY,
                                "tags": ["sqlite"],
                            },
                        }
                    ],
                },
                {"text": "Saved it."},
            ],
            title="Remember the index decision",
        )
        model.add_session(
            RECALL_PROMPT,
            [
                {"tools": [{"name": "memoryd_recall", "args": {"query": "search index"}}]},
                {"text": "We run the index in WAL mode."},
            ],
            title="Recall the index decision",
        )
        home = OpenCodeHome(home_root, model.url, binary=binary, mcp=memoryd_server(home_root))

        first = home.run(REMEMBER_PROMPT, worktree)
        memory = worktree / ".memory" / "decision" / "index-in-wal-mode.md"
        assert memory.exists(), home.last_run.stdout if home.last_run else "no run"
        assert BODY in memory.read_text() and "title: Index in WAL mode" in memory.read_text()

        second = home.run(RECALL_PROMPT, worktree)
        assert second != first

    assert not model.errors, model.errors
    # OpenCode offered memoryd's tools under `<server>_<tool>` names.
    offered = tool_names(model.chat_requests[0])
    memoryd_tools = {"recall", "remember", "forget", "inspect", "list_memories"}
    assert {f"memoryd_{name}" for name in memoryd_tools} <= offered
    # The server's instructions reached the model's system prompt.
    system = " ".join(str(m.get("content")) for m in model.chat_requests[0]["messages"] if m.get("role") == "system")
    assert "call recall" in system and "Never save credentials" in system
    # Every scripted step was served, in two separate sessions.
    steps = [(s.key, s.step) for s in model.served if s.kind == "step"]
    assert steps == [(REMEMBER_PROMPT, 0), (REMEMBER_PROMPT, 1), (RECALL_PROMPT, 0), (RECALL_PROMPT, 1)]
    # The remember result, then the recall result, reached the model in tool messages.
    results = model.tool_results()
    assert any(r.startswith("Saved decision 'Index in WAL mode' (project, id ") for r in results), results
    recalled = [r for r in results if "Index in WAL mode  (decision, project," in r]
    assert recalled and str(memory) in recalled[0] and "SQLite in WAL mode" in recalled[0], results
    # The recall request belongs to the second session: its history has no remember call.
    last = model.chat_requests[-1]
    assert all("memoryd_remember" not in str(m.get("tool_calls", "")) for m in last["messages"])
