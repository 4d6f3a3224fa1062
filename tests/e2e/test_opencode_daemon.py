"""End to end: real OpenCode writes sessions while `memoryd run` watches, offline."""

from __future__ import annotations

import signal
from pathlib import Path

import frontmatter
import pytest

from tests.e2e.daemon_run import notes, running_daemon
from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import OpenCodeHome, make_worktree, require_opencode
from tests.e2e.test_opencode_harness import load_scenario
from tests.service.conftest import wait_for


@pytest.mark.e2e
def test_memoryd_run_follows_real_opencode(tmp_path: Path) -> None:
    binary = require_opencode()
    scenario = load_scenario("deploy-pnpm")
    root = (tmp_path / "src").resolve()
    worktree = make_worktree(root / scenario["project"], scenario["files"]).resolve()
    (worktree / ".memory").mkdir()  # this project keeps its own memory tree
    sessions = worktree / ".memory" / "sessions"

    with ScriptedModel() as model:
        model.add_scenario(scenario, root)
        home = OpenCodeHome(tmp_path / "home", model.url, binary=binary)
        global_root = home.config / "opencode" / "memory"
        expired = global_root / "fact" / "old-port.md"
        expired.parent.mkdir(parents=True)
        expired.write_text("---\ntitle: Old port\nkind: fact\nexpires: 2020-01-01\n---\nThe API ran on 8080.\n")

        with running_daemon(tmp_path, home.env, MEMORYD_CAPTURE__SETTLE_SECONDS="2", MEMORYD_SWEEP__INTERVAL_MINUTES="0.05") as (daemon, notify):

            # 1. A new OpenCode session becomes a note in the project's tree.
            sid = home.run(scenario["prompt"], worktree)
            note = wait_for(lambda: notes(sessions) and notes(sessions)[0], timeout=30, what="the session's note")
            meta = frontmatter.load(note)
            assert meta["session_id"] == sid and meta["project"] == str(worktree)
            # OpenCode may pause longer than the settle time between model steps; the
            # note then catches up as the session goes on.
            wait_for(lambda: all(f in note.read_text() for f in scenario["facts"]), timeout=30, what="every fact in the note")

            # 2. Continuing the session rewrites the same note.
            home.run(scenario["followups"][0]["prompt"], worktree, session=sid)
            wait_for(lambda: "/srv/webapp" in note.read_text(), timeout=30, what="the note rewritten after the follow-up")
            assert notes(sessions) == [note]
            wait_for(lambda: (sessions / "index.md").exists() and note.name in (sessions / "index.md").read_text(),
                     what="sessions/index.md listing the note")

            # 3. A memory edited by hand is recompiled into its index.md.
            gotcha = worktree / ".memory" / "gotcha" / "lockfile.md"
            gotcha.parent.mkdir()
            gotcha.write_text("---\ntitle: Never npm ci here\ndescription: pnpm only\nkind: gotcha\n---\nnpm ci deletes the pnpm lockfile.\n")
            index = gotcha.parent / "index.md"
            wait_for(lambda: index.exists() and "Never npm ci here" in index.read_text(), what="gotcha/index.md")

            # 4. The expired memory is swept out of the live tree.
            wait_for(lambda: not expired.exists(), timeout=30, what="the expired memory swept")
            assert (global_root / ".expired" / "fact" / "old-port.md").exists()

            # 5. SIGTERM: a clean exit.
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(30) == 0
            assert notify.saw("STOPPING=1")
    output = (tmp_path / "daemon.out").read_text()
    assert "Traceback" not in output, output[-3000:]
