"""One block per session: three turns through one real `opencode serve` (1.18.33).

The daemon writes the session's note after each turn, which changes the trees (and the
block a new session would get). The running session keeps the block it got first, byte
for byte, and its own note never appears in it; the plugin rechecks often here, so a
block that followed the trees would show.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.opencode import require_opencode
from tests.e2e.test_opencode_inject import BLOCK, RULE, World, _serve, make_world, stop, system_messages
from tests.service.conftest import wait_for

pytestmark = pytest.mark.e2e

THIRD = "Run the deploy script's syntax check once more"


@pytest.fixture
def world() -> Iterator[World]:
    yield from make_world(require_opencode())


def _post(url: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read() or b"null")


def test_three_turns_keep_one_block_without_the_sessions_own_note(world: World) -> None:
    world.model.add_session(THIRD, [{"text": "The syntax check passes."}])
    world.home.extra_env["MEMORYD_PLUGIN_RECHECK_MS"] = "100"  # recheck before every turn
    daemon = world.start_daemon(settle=1)
    sessions = world.worktree / ".memory" / "sessions"

    def note_with(text: str) -> list[str]:
        return [p.read_text() for p in sessions.glob("*.md") if p.name != "index.md" and text in p.read_text()]

    proc, url = _serve(world)
    try:
        where = f"?directory={world.worktree}"
        sid = _post(url, f"/session{where}", {})["id"]
        model = {"providerID": "fake", "modelID": "fake-model"}
        prompts = [world.scenario["prompt"], world.scenario["followups"][0]["prompt"], THIRD]
        facts = ["pnpm install --frozen-lockfile", "/srv/webapp", "syntax check passes"]
        starts = []
        for prompt, fact in zip(prompts, facts, strict=True):
            starts.append(len(world.model.requests))
            _post(url, f"/session/{sid}/message{where}", {"parts": [{"type": "text", "text": prompt}], "model": model})
            wait_for(lambda fact=fact: note_with(fact), timeout=30, what=f"the note holding {fact!r}")
    finally:
        proc.terminate()
        proc.wait(20)
        stop(daemon)
    blocks = []
    for start, end in zip(starts, [*starts[1:], len(world.model.requests)], strict=True):
        turn = [r for r in world.model.requests[start:end] if r.get("tools")]
        assert turn, "a turn sent no agent request"
        for request in turn:
            systems = system_messages(request)
            assert len(systems) == 1 and len(BLOCK.findall(systems[0])) == 1
            blocks.append(BLOCK.findall(systems[0])[0])
    assert len(set(blocks)) == 1, "the block changed during the session"
    assert RULE in blocks[0]
    own = note_with(sid)
    assert own, "the session has no note"
    assert sid not in blocks[0], "the session's own note is in its block"
