"""`python -m daemon.mcpfront`: the MCP server behind a front that answers the handshake from
what the real server answered last time, as a client drives it (a subprocess on stdio)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LESSON = "---\ntitle: Cache the pnpm store\nkind: lesson\n---\nKey it on pnpm-lock.yaml.\n"


def _session(project: Path) -> list[dict]:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "pnpm store"}}},
    ]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "daemon.mcpfront"], cwd=project, env=dict(os.environ), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    answers = []
    for request in requests:  # as a client does: the next request once the last is answered
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        if "id" in request:
            answers.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    assert proc.wait(60) == 0, proc.stderr.read()
    assert proc.stdout.read() == ""  # nothing more: none of the front's own answers leak out
    return answers


def test_the_front_answers_as_the_server_does_and_keeps_its_handshake(home):  # noqa: ANN001
    project = home.root / "code" / "shop"
    (project / ".memory" / "lesson").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".memory" / "lesson" / "pnpm.md").write_text(LESSON)
    first = _session(project)
    kept = home.state / "memoryd" / "mcp-handshake.json"
    assert kept.exists()
    second = _session(project)  # the handshake from what the first run kept, the call from the real server
    for answers in (first, second):
        assert [a["id"] for a in answers] == [1, 2, 3]  # none of the front's own requests leak out
        assert "recall" in [tool["name"] for tool in answers[1]["result"]["tools"]]
        assert "Cache the pnpm store" in answers[2]["result"]["content"][0]["text"]
    assert second[0]["result"] == first[0]["result"] and second[1]["result"] == first[1]["result"]
