"""The daemon at its edges: settling without further events, SIGTERM mid-distill, no leaks."""

from __future__ import annotations

import sqlite3
import time

from daemon.capture.lifecycle import session_counts
from daemon.config import Config, load_settings
from daemon.service.loop import Daemon
from daemon.service.notify import Notifier
from tests.capture.distill.conftest import ANY_SESSION_NOTE, ModelServer, Reply, openai_reply
from tests.capture.helpers import add_message
from tests.service.conftest import wait_for
from tests.service.test_daemon import session_notes


def test_a_session_that_goes_quiet_is_captured_without_another_event(home, fixture_db, fixture_sessions, daemon, notify):
    daemon.env["MEMORYD_CAPTURE__SETTLE_SECONDS"] = "2"
    sid = fixture_sessions["cjk-deploy"]["session"]
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    wait_for(lambda: len(session_notes(home)) == 6, what="the fixture's notes")
    now_ms = int(time.time() * 1000)
    add_message(fixture_db, sid, "msg_zzzz7", "user", [("prt_zzzz7", {"type": "text", "text": "同时把 CI 也改成 pnpm"})], now_ms)
    note = next(n for n in session_notes(home) if sid in n.read_text())
    time.sleep(1.0)
    assert "CI 也改成 pnpm" not in note.read_text()  # still settling: not yet
    wait_for(lambda: "CI 也改成 pnpm" in note.read_text(), timeout=10, what="the settled session's note")
    assert daemon.stop() == 0


def test_sigterm_mid_distill_leaves_no_partial_file_and_redoes_the_session(home, fixture_db, daemon, notify, hanging_model):
    server = hanging_model  # every model call hangs: the daemon is mid-distill
    daemon.env.update(
        MEMORYD_LLM__CONCURRENCY="1",
        MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S="2",
    )
    daemon.start()
    wait_for(lambda: server.requests, what="a model call in flight")
    started = time.monotonic()
    assert daemon.stop(timeout=15) == 0, daemon.output()
    assert time.monotonic() - started < 8  # within shutdown_timeout_s, plus start-up slack
    assert notify.saw("STOPPING=1")
    assert session_notes(home) == []
    assert not list(home.root.rglob(".memoryd-tmp-*"))

    server.released.set()
    server.default = openai_reply(ANY_SESSION_NOTE)
    daemon.start()
    wait_for(lambda: len(session_notes(home)) == 6, timeout=30, what="every session redone after the restart")
    assert daemon.stop() == 0


def test_start_and_shutdown_leave_no_thread_behind(home, fixture_db):
    """The observer, the scheduler and the worker all end (the autouse check fails otherwise)."""
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    daemon = Daemon(Config(settings, paths), notifier=Notifier(env={}))
    daemon._start()
    wait_for(daemon.first_pass.is_set, what="the first reconcile")
    assert len(session_notes(home)) == 6
    daemon._shutdown()
    conn = sqlite3.connect(paths.state_db)
    assert conn.execute("SELECT COUNT(*) FROM session WHERE status = 'distilled'").fetchone()[0] == 6
    conn.close()


def test_a_replaced_database_is_noticed_even_without_a_file_event(home, fixture_db, fixture_sessions, tmp_path):
    """Network file systems miss events: the reconcile pass sees the new inode itself."""
    import os
    import shutil

    import frontmatter

    from daemon.service.jobs import Jobs
    from tests.capture.helpers import max_time

    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    jobs = Jobs(Config(settings, paths))
    try:
        jobs.capture(full=True)
        sid = fixture_sessions["secrets"]["session"]
        note = next(n for n in session_notes(home) if frontmatter.load(n)["session_id"] == sid)
        copy = tmp_path / "copy.db"
        shutil.copy(fixture_db, copy)
        add_message(copy, sid, "msg_zzzz6", "user", [("prt_zzzz6", {"type": "text", "text": "rotated the key in vault"})], max_time(fixture_db) + 1000)
        os.replace(copy, fixture_db)  # no watcher runs here: nobody calls source_replaced()
        jobs.capture(full=True)
        assert "rotated the key in vault" in note.read_text()
    finally:
        jobs.close()


def test_a_reload_that_leaves_a_busy_worker_behind_keeps_the_new_one_working(home, fixture_db):
    """The old worker finishes its long item with its own jobs; it never closes the new ones."""
    import threading

    from daemon.service.jobs import Jobs

    release = threading.Event()

    class SlowFirstPass(Jobs):
        calls = 0

        def capture(self, full=False, idle=frozenset()):
            SlowFirstPass.calls += 1
            if SlowFirstPass.calls == 1:
                release.wait(10)  # a long model call
            return super().capture(full, idle)

    settings, paths = load_settings()
    settings.service.shutdown_timeout_s = 0.2
    daemon = Daemon(Config(settings, paths), notifier=Notifier(env={}), jobs_factory=SlowFirstPass)
    daemon._start()
    try:
        wait_for(lambda: SlowFirstPass.calls == 1, what="the first pass under way")
        old = daemon.gen
        old_worker, old_jobs = old.worker, old.jobs
        daemon._do_reload()
        # A new generation swapped in whole; the old one's writes are fenced off, not the new one's.
        assert daemon.gen is not old and daemon.jobs is not old_jobs and old_worker.is_alive()
        assert old.fence.closed and not daemon.gen.fence.closed
        assert daemon.jobs.fence is daemon.gen.fence
        release.set()
        old_worker.join(10)
        assert not old_worker.is_alive()
        daemon.queue.mark("capture")
        # The new jobs' database is still open and sees every session recorded.
        wait_for(lambda: session_counts(daemon.jobs.state)["distilled"] == 6, what="6 sessions recorded")
        assert len(session_notes(home)) == 6
    finally:
        release.set()
        daemon._shutdown()


def test_after_a_stop_the_daemon_leaves_the_model_and_the_pending_sessions_alone(home, fixture_db, fixture_sessions, monkeypatch):
    """Server says "come back in an hour": no request and no rebuild on every write, until the hold lifts."""
    import daemon.capture.run as runner
    from daemon.service.jobs import Jobs
    from tests.capture.helpers import max_time

    server = ModelServer()
    server.default = Reply(503, {"error": "overloaded"}, headers={"Retry-After": "3600"})
    server.start()
    try:
        monkeypatch.setenv("MEMORYD_LLM__PROVIDER", "openai")
        monkeypatch.setenv("MEMORYD_LLM__BASE_URL", server.url + "/v1")
        monkeypatch.setenv("MEMORYD_LLM__MODEL", "m")
        monkeypatch.setenv("MEMORYD_CAPTURE__SETTLE_SECONDS", "0")
        settings, paths = load_settings()
        now = [time.time()]
        jobs = Jobs(Config(settings, paths), clock=lambda: now[0])
        try:
            jobs.capture(full=True)
            assert len(server.requests) == 1  # one answer stops the pass
            assert session_counts(jobs.state)["held"] == 6
            assert "model held (rate_limit)" in jobs.status_line()
            builds = []
            original = runner._build
            monkeypatch.setattr(runner, "_build", lambda p, info, *a: builds.append(info.id) or original(p, info, *a))
            sid = fixture_sessions["cjk-deploy"]["session"]
            add_message(fixture_db, sid, "msg_zzzz5", "user", [("prt_zzzz5", {"type": "text", "text": "再试一次"})], max_time(fixture_db) + 1000)
            result = jobs.capture()
            assert builds == [sid]  # only the session that changed; the held ones stay as they are
            assert len(server.requests) == 1  # and no call while the hold lasts
            assert result.recheck_in is not None and result.recheck_in > 3600 - 5  # as long as the server asked
            now[0] += 3600 + 1
            server.default = Reply(json={"choices": [{"message": {"role": "assistant", "content": ANY_SESSION_NOTE}}]})
            jobs.capture()
            assert session_counts(jobs.state)["distilled"] == 6  # the hold lifted: everything is done
        finally:
            jobs.close()
    finally:
        server.stop()
