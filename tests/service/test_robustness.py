"""A real `memoryd run` on a bad day: a hanging model at shutdown, a busy OpenCode, a broken
index, a source that is not a database, a worker that cannot start."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

from daemon.config import Config, load_settings
from daemon.service.loop import EXIT_START_FAILED, Daemon
from daemon.service.notify import Notifier
from tests.capture.helpers import add_message, max_time
from tests.service.conftest import wait_for
from tests.service.test_daemon import session_notes


def events(output: str) -> list[str]:
    """The daemon's log events, in order (its JSON lines on stderr)."""
    found = []
    for line in output.splitlines():
        try:
            found.append(json.loads(line)["event"])
        except (ValueError, KeyError, TypeError):
            continue
    return found


def test_sigterm_with_a_hanging_model_stops_all_work_and_keeps_the_lock_until_the_process_ends(
    home, fixture_db, daemon, daemon_env, hanging_model
):
    server = hanging_model
    daemon.env.update(
        MEMORYD_LLM__TIMEOUT_S="60",
        MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S="5",
    )
    first = daemon.start()
    wait_for(lambda: server.requests, what="a model call in flight")
    daemon.signal(15)
    # While the first one winds down, a second instance must not start.
    second = subprocess.run(
        [sys.executable, "-m", "daemon", "run"], env=daemon.env, capture_output=True, text=True, timeout=30
    )
    assert second.returncode == 2 and "already running" in second.stderr
    assert first.wait(30) == 0
    seen = events(daemon.output())
    assert "daemon.worker_abandoned" in seen
    assert seen[-1] == "daemon.stopped"  # nothing logged (or done) after it
    assert session_notes(home) == []  # no note from a call that was cut off
    conn = sqlite3.connect(f"file:{home.state / 'memoryd' / 'state.db'}?mode=ro", uri=True)
    try:
        statuses = {row[0] for row in conn.execute("SELECT status FROM session")}
    finally:
        conn.close()
    assert "distilled" not in statuses and "failed" not in statuses


def test_a_session_finished_while_another_is_written_every_100_ms_gets_its_note(
    home, fixture_db, fixture_sessions, daemon, notify
):
    # A debounce window longer than the writes' interval: without a maximum delay it never closes.
    daemon.env.update(MEMORYD_CAPTURE__SETTLE_SECONDS="1", MEMORYD_WATCH__DEBOUNCE_MS="1000")
    busy = fixture_sessions["deploy-pnpm"]["session"]
    done = fixture_sessions["cjk-deploy"]["session"]
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    wait_for(lambda: len(session_notes(home)) == 6, what="the fixture's notes")
    stop = threading.Event()

    def write_busy_session() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            at = int(time.time() * 1000)
            add_message(fixture_db, busy, f"msg_zzbusy{n:05d}", "user",
                        [(f"prt_zzbusy{n:05d}", {"type": "text", "text": f"still typing {n}"})], at)
            stop.wait(0.1)

    writer = threading.Thread(target=write_busy_session, name="busy-opencode")
    writer.start()
    try:
        time.sleep(0.5)  # the burst is under way
        at = max(max_time(fixture_db), int(time.time() * 1000))
        add_message(fixture_db, done, "msg_zzdone", "user", [("prt_zzdone", {"type": "text", "text": "部署完成了"})], at)
        note = next(n for n in session_notes(home) if done in n.read_text())
        # settle_seconds (1) + 2 s is the promise; the deadline is generous for a loaded machine.
        wait_for(lambda: "部署完成了" in note.read_text(), timeout=8, what="the finished session's note")
    finally:
        stop.set()
        writer.join(5)
    assert daemon.stop() == 0


def test_a_corrupt_index_at_start_is_moved_aside_and_rebuilt(home, fixture_db, daemon, notify):
    _, paths = load_settings()
    paths.index_db.parent.mkdir(parents=True, exist_ok=True)
    paths.index_db.write_bytes(os.urandom(8192))
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), timeout=10, what="READY=1 despite the broken index")
    wait_for(lambda: len(session_notes(home)) == 6, what="the notes")

    def indexed() -> int:
        conn = sqlite3.connect(f"file:{paths.index_db}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT COUNT(*) FROM doc").fetchone()[0]
        finally:
            conn.close()

    wait_for(lambda: indexed() >= 6, what="the rebuilt index")
    assert list(paths.index_db.parent.glob("index.db.broken-*"))
    assert events(daemon.output()).count("index.rebuilt") == 1
    shown = subprocess.run([sys.executable, "-m", "daemon", "status"], env=daemon.env, capture_output=True, text=True)
    assert "Rebuilt: " in shown.stdout and "search index" in shown.stdout
    assert daemon.stop() == 0


def test_a_worker_that_cannot_start_stops_the_daemon_with_the_reason(home, fixture_db):
    settings, paths = load_settings()
    logged: list[str] = []

    def broken_jobs(config, fence):  # noqa: ANN001, ANN202
        raise PermissionError(13, "Permission denied", str(config.paths.state_db))

    daemon = Daemon(Config(settings, paths), notifier=Notifier(env={}), jobs_factory=broken_jobs)
    daemon.log = _Recorder(logged)
    assert daemon.run() == EXIT_START_FAILED
    assert any("start_failed" in line and "Permission denied" in line for line in logged)
    assert not daemon.ready.is_set()


class _Recorder:
    """Stands in for the daemon's logger: keeps each event with its fields."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def _log(self, event: str, **fields: object) -> None:
        self.lines.append(f"{event} {fields}")

    info = warning = error = exception = debug = _log
