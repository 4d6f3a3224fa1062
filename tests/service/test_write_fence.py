"""One write fence per daemon generation: after `daemon.stopped`, not one row of state.db moves,
not even from a sink thread the stop had to leave behind in a request to a hanging Cognee."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from daemon.config import Config, load_settings
from daemon.service.loop import Daemon
from daemon.service.notify import Notifier
from tests.service.conftest import wait_for


class HangingCognee:
    """A real HTTP server on 127.0.0.1 that holds every request until `release()`, then fails it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.answered = 0
        self._release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _hold(self) -> None:
                server.requests.append(f"{self.command} {self.path}")
                server._release.wait(30)
                try:
                    self.send_response(503)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    server.answered += 1
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_DELETE = _hold  # noqa: N815 - http.server's names

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False  # server_close() joins the handler threads
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), name="hanging-cognee")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def release(self) -> None:
        self._release.set()

    def stop(self) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def hanging_cognee() -> Iterator[HangingCognee]:
    server = HangingCognee()
    server.thread.start()
    yield server
    server.stop()


def dump(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table of `db`, read on a read-only connection."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(map(tuple, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}  # noqa: S608
    finally:
        conn.close()


def test_no_row_of_state_db_changes_after_stopped_even_from_a_sink_thread_left_in_a_request(
    home, fixture_db, hanging_cognee, monkeypatch
):
    monkeypatch.setenv("MEMORYD_CAPTURE__SETTLE_SECONDS", "0")
    monkeypatch.setenv("MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S", "0.5")  # the stop leaves the sink thread behind
    monkeypatch.setenv("MEMORYD_SINKS__COGNEE__URL", hanging_cognee.url)
    monkeypatch.setenv("MEMORYD_SINKS__COGNEE__COGNIFY", "never")
    monkeypatch.setenv("MEMORYD_SINKS__COGNEE__TIMEOUT_S", "60")
    settings, paths = load_settings()
    daemon = Daemon(Config(settings, paths), notifier=Notifier(env={}))

    def sigterm_once_the_sink_waits() -> None:
        wait_for(lambda: hanging_cognee.requests, 30, "the sink thread's request to Cognee")
        wait_for(daemon.first_pass.is_set, 30, "the first pass")
        os.kill(os.getpid(), signal.SIGTERM)  # the real signal, through the daemon's handlers

    signaller = threading.Thread(target=sigterm_once_the_sink_waits, name="test-sigterm")
    signaller.start()
    try:
        assert daemon.run() == 0  # logs daemon.stopped as its last word, then returns
    finally:
        signaller.join(40)
    at_stop = dump(paths.state_db)
    sink = next((t for t in threading.enumerate() if t.name == "memoryd-sink"), None)
    assert sink is not None and sink.is_alive()  # still in its request: the case under test
    assert at_stop["sink_outbox"], "the sink had queued the notes before it hung"

    # The request comes back (a 503): the thread the stop left behind would record the
    # failure and try the next batch. Its writes are fenced off.
    hanging_cognee.release()
    sink.join(30)
    assert not sink.is_alive()
    assert hanging_cognee.answered >= 1
    assert dump(paths.state_db) == at_stop
