"""A client that goes away (exits without reading, closes our stdout) ends `memoryd mcp`
quietly: exit 0, no traceback, nothing logged as an error."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.mcp.helpers import make_git_worktree

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "gone", "version": "1"}}}


def test_a_client_that_exits_without_reading_ends_the_server_quietly(home, tmp_path):
    project = make_git_worktree(tmp_path / "app")
    server = subprocess.Popen([sys.executable, "-m", "daemon", "mcp"], cwd=project, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    server.stdout.close()  # the client is gone: the answer meets a closed pipe
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    stderr = server.stderr.read().decode()
    server.stderr.close()
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    events = [json.loads(line) for line in (home.state_dir / "memoryd.log").read_text().splitlines()]
    assert [e for e in events if e["level"] in ("error", "critical")] == []
    assert "Traceback" not in "".join(json.dumps(e) for e in events)
    assert [e["event"] for e in events][-1] == "mcp.stopped"
