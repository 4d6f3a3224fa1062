"""The watchdog's view of the worker: a long pass that makes progress is alive, a stuck one is not."""

from __future__ import annotations

import threading
import time

import daemon.service.loop as loop
from daemon.config import Config, load_settings
from daemon.service.generation import Health
from daemon.service.loop import Daemon
from daemon.service.notify import Notifier
from tests.capture.distill.conftest import ANY_SESSION_NOTE, ModelServer, openai_reply
from tests.service.conftest import wait_for
from tests.service.test_daemon import session_notes


def test_progress_moves_the_busy_mark_only_while_busy() -> None:
    health = Health()
    health.progressed()
    assert health.busy_since is None, "an idle worker stays idle"
    health.busy_since = 0.0
    health.progressed()
    assert health.busy_since > 0.0


def test_a_long_pass_through_a_slow_model_keeps_the_daemon_healthy(home, fixture_db, monkeypatch):
    """A backfill through a slow local model takes far longer than one step may: the
    watchdog judges the step (one session), not the pass, or systemd would kill it."""
    monkeypatch.setattr(loop, "STEP_FLOOR_S", 0.5)
    server = ModelServer()
    reply = openai_reply(ANY_SESSION_NOTE)
    reply.delay = 1.0  # each note takes a second; the pass, six
    server.default = reply
    server.start()
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", server.url + "/v1", "m"
    settings.llm.timeout_s, settings.llm.max_retries, settings.llm.concurrency = 1.5, 0, 1  # a step: 3 s at most
    daemon = Daemon(Config(settings, paths), notifier=Notifier(env={}))
    unhealthy: list[float] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if not daemon._healthy():
                unhealthy.append(time.monotonic())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    daemon._start()
    try:
        watcher.start()
        wait_for(lambda: len(session_notes(home)) == 6, timeout=60, what="six notes, one a second")
        assert len(server.requests) >= 6, "the pass took longer than one step may"
    finally:
        done.set()
        watcher.join(5)
        daemon._shutdown()
        server.stop()
    assert unhealthy == [], "a pass that finishes a session every second is not hung"
