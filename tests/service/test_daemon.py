"""`memoryd run` as a real process: capture, edits, trees, signals, notify, single instance."""

from __future__ import annotations

import signal
import subprocess
import sys

import frontmatter

from tests.capture.helpers import add_message, max_time
from tests.service.conftest import wait_for


def session_notes(home):
    return sorted(p for p in (home.global_root / "sessions").glob("*.md") if p.name != "index.md")


def test_daemon_captures_recompiles_and_stops_cleanly(home, fixture_db, fixture_sessions, daemon, notify):
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    wait_for(lambda: len(session_notes(home)) == 6, what="6 session notes")
    index = home.global_root / "sessions" / "index.md"
    wait_for(index.exists, what="sessions/index.md compiled")
    wait_for(lambda: (home.global_root / "ROOT.md").exists(), what="ROOT.md compiled")
    wait_for(lambda: any(m.startswith("STATUS=") for m in notify.drain()), what="STATUS= after the first pass")

    # OpenCode continues a session: the same note is rewritten, no second file.
    sid = fixture_sessions["deploy-pnpm"]["session"]
    (note,) = [n for n in session_notes(home) if frontmatter.load(n)["session_id"] == sid]
    at = max_time(fixture_db) + 1000
    add_message(fixture_db, sid, "msg_zzzz9", "user", [("prt_zzzz9", {"type": "text", "text": "Also cache the pnpm store in CI"})], at)
    wait_for(lambda: "cache the pnpm store" in note.read_text(), what="the continued session's note rewritten")
    assert len(session_notes(home)) == 6

    # A memory written by hand is compiled into its category's index.md.
    lesson = home.global_root / "lesson" / "pnpm-store.md"
    lesson.parent.mkdir(parents=True, exist_ok=True)
    lesson.write_text("---\ntitle: Cache the pnpm store\ndescription: saves 2 minutes per CI run\nkind: lesson\n---\nUse actions/cache.\n")
    lesson_index = home.global_root / "lesson" / "index.md"
    wait_for(lambda: lesson_index.exists() and "Cache the pnpm store" in lesson_index.read_text(), what="lesson/index.md")

    assert daemon.stop() == 0, daemon.output()
    assert notify.saw("STOPPING=1")
    assert "Traceback" not in daemon.output()


def test_second_instance_exits_2_naming_the_pid(home, fixture_db, daemon, notify, daemon_env):
    proc = daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    second = subprocess.run([sys.executable, "-m", "daemon", "run"], env=daemon_env, capture_output=True, text=True, timeout=30)
    assert second.returncode == 2
    assert f"pid {proc.pid}" in second.stderr
    assert daemon.stop() == 0


def test_database_created_after_start_is_picked_up(home, daemon, notify):
    import shutil

    from tests.conftest import OPENCODE_FIXTURE

    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1 without a database")
    home.opencode_db.parent.mkdir(parents=True)
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", home.opencode_db)
    wait_for(lambda: len(session_notes(home)) == 6, timeout=30, what="notes once the database appeared")
    assert daemon.stop() == 0


def test_sighup_reloads_configuration(home, fixture_db, daemon, notify):
    config = home.config / "memoryd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[notes]\ncategory = \"sessions\"\n")
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    wait_for(lambda: len(session_notes(home)) == 6, what="notes")
    config.write_text("[log]\nlevel = \"info\"\n[capture]\nsettle_seconds = 0\n")
    daemon.signal(signal.SIGHUP)
    wait_for(lambda: notify.saw("RELOADING=1"), what="RELOADING=1")
    wait_for(lambda: "daemon.reloaded" in daemon.output(), what="reload logged")
    config.write_text("[log]\nlevel = \"loud\"\n")  # a bad reload keeps the old config running
    daemon.signal(signal.SIGHUP)
    wait_for(lambda: "daemon.reload_failed" in daemon.output(), what="bad reload reported")
    assert daemon.proc.poll() is None
    assert daemon.stop() == 0


def test_database_replaced_is_reopened(home, fixture_db, fixture_sessions, daemon, notify, tmp_path):
    """OpenCode's database swapped for another file (a restore, a migration): read the new one."""
    import os
    import shutil

    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    wait_for(lambda: len(session_notes(home)) == 6, what="notes from the first database")
    sid = fixture_sessions["big-log"]["session"]
    replacement = tmp_path / "restored.db"
    shutil.copy(fixture_db, replacement)
    add_message(replacement, sid, "msg_zzzz8", "user", [("prt_zzzz8", {"type": "text", "text": "restored from backup: raise WORKER_DEADLINE_S to 60"})], max_time(fixture_db) + 1000)
    os.replace(replacement, fixture_db)
    note = next(n for n in session_notes(home) if frontmatter.load(n)["session_id"] == sid)
    wait_for(lambda: "WORKER_DEADLINE_S to 60" in note.read_text(), what="the note from the replaced database")
    assert "source.reopened" in daemon.output()
    assert daemon.stop() == 0


def test_ready_does_not_wait_for_a_hanging_model_and_never_follows_stopping(
    home, fixture_db, daemon, notify, hanging_model
):
    """READY=1 once the daemon can serve; the first pass (stuck on the model) comes after it."""
    from daemon.service.context_server import request

    daemon.env.update(MEMORYD_LLM__TIMEOUT_S="120", MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S="2")
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), timeout=30, what="READY=1 while the model hangs")
    # Ready means serving: the socket answers although the first pass is still on its first call.
    status, body = request(home.state_dir / "memoryd.sock", "GET", "/health")
    assert status == 200 and body["ok"]
    wait_for(lambda: hanging_model.requests, timeout=30, what="the first pass's model call, after READY=1")
    assert session_notes(home) == []
    daemon.signal(signal.SIGTERM)
    daemon.proc.wait(30)
    messages = [line for m in notify.drain() for line in m.splitlines()]
    assert messages.count("READY=1") == 1
    assert messages.index("READY=1") < messages.index("STOPPING=1")
    assert "READY=1" not in messages[messages.index("STOPPING=1"):]
