"""Real OpenCode 2.0.15 with `memoryd mcp`: the model remembers, then recalls, through `execute`.

OpenCode 2 offers MCP tools only inside its `execute` code tool (`await
tools.memoryd.<tool>(…)`). It connects MCP servers in the background and does not wait for
them before a session's first model request, so the sessions run against one private
`opencode serve` (as the TUI uses the background service) once memoryd is connected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.fake_model import ScriptedModel, message_text
from tests.e2e.opencode import make_worktree
from tests.e2e.opencode2 import OpenCode2Home, require_opencode2, serve
from tests.e2e.test_opencode_mcp import BODY, RECALL_PROMPT, REMEMBER_PROMPT, memoryd_server

REMEMBER = (
    "return await tools.memoryd.remember({kind: 'decision', title: 'Index in WAL mode', "
    f"body: {json.dumps(BODY)}, tags: ['sqlite']}})"
)
RECALL = "return await tools.memoryd.recall({query: 'search index'})"


def execute(code: str) -> dict[str, object]:
    return {"tools": [{"name": "execute", "args": {"code": code}}]}


@pytest.mark.e2e
def test_opencode2_remembers_then_recalls_through_execute(tmp_path: Path) -> None:
    binary = require_opencode2()
    worktree = make_worktree(tmp_path / "src" / "webapp", {"README.md": "# webapp\n"}).resolve()
    (worktree / ".memory").mkdir()
    elsewhere = (tmp_path / "elsewhere").resolve()  # not a worktree: the server starts here
    elsewhere.mkdir()
    home_root = tmp_path / "home"

    with ScriptedModel() as model:
        model.add_session(REMEMBER_PROMPT, [execute(REMEMBER), {"text": "Saved it."}], title="Remember")
        model.add_session(RECALL_PROMPT, [execute(RECALL), {"text": "We run the index in WAL mode."}], title="Recall")
        mcp = memoryd_server(home_root)
        mcp["memoryd"]["cwd"] = str(elsewhere)  # so only the call's session id can name the project
        home = OpenCode2Home(home_root, model.url, binary=binary, mcp=mcp)
        with serve(home, worktree) as server:
            server.wait_for_mcp(worktree, "memoryd")
            first = home.run(REMEMBER_PROMPT, worktree, server=server)
            memory = worktree / ".memory" / "decision" / "index-in-wal-mode.md"
            assert memory.exists(), model.tool_results()
            assert BODY in memory.read_text() and "title: Index in WAL mode" in memory.read_text()
            second = home.run(RECALL_PROMPT, worktree, server=server)
        assert second != first

    assert not model.errors, model.errors
    # The tools are not offered directly: only through `execute`, listed in the catalog.
    request = model.chat_requests[0]
    offered = {tool["function"]["name"] for tool in request["tools"]}
    assert "execute" in offered and not any(name.startswith("memoryd") for name in offered)
    prompt = " ".join(message_text(m) for m in request["messages"] if m.get("role") == "system")
    assert "tools.memoryd.recall(" in prompt and "tools.memoryd.remember(" in prompt
    # The server's instructions say how to reach the tools there.
    assert "through its `execute` tool" in prompt and "Never save credentials" in prompt
    results = model.tool_results()
    assert any("Saved decision 'Index in WAL mode' (project, id " in r for r in results), results
    recalled = [r for r in results if "Index in WAL mode  (decision, project," in r]
    assert recalled and "SQLite in WAL mode" in recalled[0], results
