"""End to end on OpenCode 2.0.15: memory reaches real sessions through the same plugin file.

The assertions of the 1.x injection test (tests/e2e/test_opencode_inject.py), on the 2.0
binary: `memoryd opencode install` into a fake home, a scripted model recording every
request, `opencode run --standalone` (no background service on the fixed port).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.opencode2 import OpenCode2Home, require_opencode2, serve
from tests.e2e.test_opencode_inject import (  # the 1.x test below runs again here, on 2.0's world
    LESSON,
    World,
    assert_fallback_injects,
    assert_injected,
    assert_note_soon,
    first_turn,
    make_world,
    stop,
    system_messages,
    test_a_broken_daemon_socket_never_breaks_a_session,  # noqa: F401 (collected here)
)
from tests.service.conftest import wait_for

pytestmark = pytest.mark.e2e

#: V2 rejects a compaction summary that does not follow its template.
SUMMARY = """## Objective
- Fix scripts/deploy.sh for pnpm.

## Requirements
- (none)

## Decisions
- Deploy with pnpm install --frozen-lockfile.

## Work State
### Completed
- scripts/deploy.sh uses pnpm.

### Active
- (none)

### Blocked
- (none)

## Next Move
1. (none)

## Relevant Files
- `scripts/deploy.sh`: the deploy script

## Important Context
- (none)
"""


@pytest.fixture
def world() -> Iterator[World]:
    yield from make_world(require_opencode2(), OpenCode2Home)


def test_the_daemon_gives_every_step_the_block_and_notes_the_turn_at_once(world: World) -> None:
    daemon = world.start_daemon(settle=30)
    try:
        sid, returned = first_turn(world)
        assert not world.home.log_lines("LoadError"), world.home.log_lines("LoadError")
        # The plugin told the daemon of the turn's end (2.0: session.execution.succeeded).
        wait_for(lambda: sid in (world.base / "daemon.out").read_text(), timeout=10, what="the idle notice")
        log = (world.base / "daemon.out").read_text()
        assert "session.idle" in log and "Traceback" not in log
        assert_note_soon(world, sid, returned, timeout=20)
    finally:
        stop(daemon)


def test_without_daemon_the_plugin_runs_memoryd_context(world: World) -> None:
    assert_fallback_injects(world)  # 2.0 has no context hook for titles: they are untouched too
    # `memoryd opencode status` names this OpenCode and reads from its log that the plugin loaded.
    path = f"{world.home.binary.parent}{os.pathsep}{world.env.get('PATH', '')}"
    status = subprocess.run([sys.executable, "-m", "daemon", "opencode", "status"], env={**world.env, "PATH": path},
                            capture_output=True, text=True)  # fmt: skip
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"OpenCode: 2.0.15 ({world.home.binary})" in status.stdout and "plugin load: loaded" in status.stdout


def test_compaction_carries_the_inventory_and_the_save_instruction(world: World) -> None:
    world.model.add_session("Return only the structured summary", [{"text": SUMMARY}])  # it offers tools
    sid = world.home.run(world.scenario["prompt"], world.worktree)
    start = len(world.model.requests)

    def compactions() -> list[dict]:
        return [r for r in world.model.requests[start:] if "structured summary" in json.dumps(r["messages"])]

    with serve(world.home, world.worktree) as server:
        server.post(f"/api/session/{sid}/compact")
        wait_for(lambda: [m for m in world.home.messages(sid) if m["type"] == "compaction"
                          and m["data"].get("status") in ("completed", "failed")],
                 timeout=60, what="the compaction's end")  # fmt: skip
    assert compactions(), "no compaction request reached the model"
    systems = system_messages(compactions()[0])
    assert len(systems) == 1, f"{len(systems)} system messages"
    assert "Before this conversation is summarised" in systems[0]
    assert LESSON in systems[0] and "## Memories" in systems[0] and "tools.memoryd.remember" in systems[0]
    done = [m["data"] for m in world.home.messages(sid) if m["type"] == "compaction"]
    assert done[-1].get("status") == "completed", done


def test_three_turns_on_one_server_keep_one_block(world: World) -> None:
    """#21 on 2.0: the plugin instance lives in the server; the note is rewritten between turns."""
    third = "Run the deploy script's syntax check once more"
    world.model.add_session(third, [{"text": "The syntax check passes."}])
    world.home.extra_env["MEMORYD_PLUGIN_RECHECK_MS"] = "100"  # recheck before every turn
    daemon = world.start_daemon(settle=1)
    sessions = world.worktree / ".memory" / "sessions"
    prompts = [world.scenario["prompt"], world.scenario["followups"][0]["prompt"], third]
    facts = ["pnpm install --frozen-lockfile", "/srv/webapp", "syntax check passes"]
    starts, sid = [], None
    try:
        with serve(world.home, world.worktree) as server:
            for prompt, fact in zip(prompts, facts, strict=True):
                starts.append(len(world.model.requests))
                sid = world.home.run(prompt, world.worktree, session=sid, server=server)
                wait_for(lambda fact=fact: [p for p in sessions.glob("*.md") if fact in p.read_text()], timeout=30,
                         what=f"the note holding {fact!r}")  # fmt: skip
    finally:
        stop(daemon)
    blocks = {assert_injected(world.model, since=start) for start in starts}
    assert len(blocks) == 1, "the block changed between turns"
    assert sid is not None and sid not in blocks.pop(), "the session's own note is in its block"
