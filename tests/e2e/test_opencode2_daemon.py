"""End to end on OpenCode 2.0.15 without the plugin: the `idle` row alone ends the wait."""

from __future__ import annotations

import time
from pathlib import Path

import frontmatter
import pytest

from tests.e2e.daemon_run import notes, running_daemon
from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import make_worktree
from tests.e2e.opencode2 import OpenCode2Home, require_opencode2, v2_scenario
from tests.e2e.test_opencode_harness import load_scenario
from tests.service.conftest import wait_for

SETTLE_SECONDS = 30


@pytest.mark.e2e
def test_a_2_0_session_s_note_is_written_when_its_turn_ends_without_waiting_to_settle(tmp_path: Path) -> None:
    binary = require_opencode2()
    scenario = v2_scenario(load_scenario("deploy-pnpm"))
    root = (tmp_path / "src").resolve()
    worktree = make_worktree(root / scenario["project"], scenario["files"]).resolve()
    (worktree / ".memory").mkdir()
    sessions = worktree / ".memory" / "sessions"

    with ScriptedModel() as model:
        model.add_scenario(scenario, root)
        home = OpenCode2Home(tmp_path / "home", model.url, binary=binary)
        assert not (home.config_dir / "plugins").exists()  # no plugin: nobody tells the daemon
        with running_daemon(tmp_path, home.env, MEMORYD_CAPTURE__SETTLE_SECONDS=str(SETTLE_SECONDS)) as (daemon, notify):
            sid = home.run(scenario["prompt"], worktree)
            returned = time.monotonic()
            # Well inside settle_seconds: only the ended turn can have made the note this soon.
            note = wait_for(lambda: notes(sessions) and notes(sessions)[0], timeout=SETTLE_SECONDS / 3, what="the note")
            print(f"note on disk {time.monotonic() - returned:.2f}s after opencode run returned")
            assert frontmatter.load(note)["session_id"] == sid
            first_turn = [f for f in scenario["facts"] if f != "/srv/webapp"]
            wait_for(lambda: all(f in note.read_text() for f in first_turn), timeout=5, what="every fact in the note")

            # The next turn of the same session: its own idle row rewrites the same note.
            home.run(scenario["followups"][0]["prompt"], worktree, session=sid)
            wait_for(lambda: "/srv/webapp" in note.read_text(), timeout=SETTLE_SECONDS / 3, what="the follow-up")
            assert notes(sessions) == [note]
    output = (tmp_path / "daemon.out").read_text()
    assert "Traceback" not in output, output[-3000:]
    assert "session.idle" not in output  # the plugin's notice never came: the idle row did it
