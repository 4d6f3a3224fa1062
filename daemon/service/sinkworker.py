"""The daemon's sink thread: delivers in the background so capture never waits on a server.

It owns its own state-database connection and HTTP client; the connection writes through
the daemon's fence, so a thread the stop had to leave in a request writes nothing after it. It wakes when the worker has
done something (a capture pass, a tree refresh, a sweep), when a backoff ends, and on the
cognify schedule; otherwise it sleeps. A dead or slow Cognee only ever blocks this thread.
"""

from __future__ import annotations

import threading
import time

from daemon.config import Config
from daemon.logs import get_logger
from daemon.state import StateFenced, WriteFence

IDLE_S = 3600.0  # nothing due: sleep until woken (or this long)


class SinkWorker:
    """Runs `Sink.round` on a thread of its own until stopped."""

    def __init__(self, config: Config, fence: WriteFence) -> None:
        self.config = config
        self.fence = fence
        self.settings, self.paths = config.settings, config.paths
        self.log = get_logger("memoryd.sink")
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memoryd-sink", daemon=True)
        self._next_cognify = 0.0

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            # Mid-request to a slow server: what it sent is confirmed next time (at-least-once).
            self.log.warning("sink.abandoned", hint="a request was still running; it is redone at the next start")

    def _run(self) -> None:
        from daemon.sinks.cognee import SinkError
        from daemon.sinks.run import Sink
        from daemon.state import StateDB

        state = StateDB(self.paths.state_db, self.fence)
        try:
            sink = Sink(self.config, state)
        except SinkError as exc:
            self.log.error("sink.unusable", error=str(exc))
            state.close()
            return
        config = self.settings.sinks.cognee
        self._next_cognify = time.monotonic() + config.cognify_interval_minutes * 60
        # The first round waits for the worker's first item (the reconcile after start):
        # a round during that pass would send a few of its notes and, with a slow server,
        # leave the rest waiting for that request to end.
        self._wake.wait(IDLE_S)
        try:
            while not self._stop.is_set():
                self._wake.clear()
                self._one(sink)
                self._wake.wait(self._sleep_s(sink))
        except StateFenced:
            pass  # the daemon stopped: what was sent is confirmed at the next start (at-least-once)
        finally:
            sink.close()
            state.close()

    def _one(self, sink) -> None:
        from daemon.sinks.cognee import SinkError

        try:
            sink.round(should_stop=self._stop.is_set)
            if self.settings.sinks.cognee.cognify == "schedule" and time.monotonic() >= self._next_cognify:
                self._next_cognify = time.monotonic() + self.settings.sinks.cognee.cognify_interval_minutes * 60
                if sink.outbox.stats()["delivered_total"]:
                    sink.deliverer.request_cognify()
        except (SinkError, OSError) as exc:
            self.log.warning("sink.round_failed", error=str(exc))

    def _sleep_s(self, sink) -> float:
        due_ms = sink.outbox.next_due_ms()
        wait = IDLE_S if due_ms is None else max(0.5, due_ms / 1000 - time.time())
        if self.settings.sinks.cognee.cognify == "schedule":
            wait = min(wait, max(1.0, self._next_cognify - time.monotonic()))
        return wait
