"""The threads that answer the daemon's socket: kept, not started per request.

Each worker blocks in `accept()` on the listening socket and answers the connection it
gets itself: a request costs neither a thread start nor a hand-off between threads (a
thread started per connection cost ~0.3 ms of CPU and more of wall time under load, on a
context answer of ~3 ms). When the last idle worker takes a connection, another one is
started (a slow client or a long first build never holds up the rest), up to
MAX_WORKERS; beyond KEPT, a worker that finishes while SPARE others wait ends, so a burst
leaves no crowd behind (and one client after another starts none).

`Deadlines` cuts off requests that outlive their deadline, from one thread for all.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

KEPT = 4  # workers that never end (a burst's extra ones do)
SPARE = 2  # idle workers an extra one leaves waiting when it ends
MAX_WORKERS = 64  # beyond, connections wait in the listen queue


class Deadlines:
    """Cuts off requests that outlive their deadline, from one thread for all of them.

    A timer thread per request would cost a thread start on every session's first step;
    here a request only registers. The reaper sleeps while nothing is registered and, while
    requests come and go, looks every tenth of a deadline, so a request is cut off at
    most 10 % after its deadline."""

    def __init__(self) -> None:
        self._active: dict[Any, float] = {}  # handler -> monotonic deadline
        self._wake = threading.Condition()
        self._idle = True  # the reaper waits for a registration, not for a time
        self._stopped = False
        self._thread: threading.Thread | None = None

    def add(self, handler: Any, seconds: float) -> None:
        with self._wake:
            self._active[handler] = time.monotonic() + seconds
            self._interval = seconds / 10
            if self._thread is None:
                self._thread = threading.Thread(target=self._reap, name="memoryd-socket-deadline", daemon=True)
                self._thread.start()
            elif self._idle:
                self._wake.notify()

    def remove(self, handler: Any) -> None:
        with self._wake:
            self._active.pop(handler, None)

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(5)

    def _reap(self) -> None:
        with self._wake:
            while not self._stopped:
                self._idle = not self._active
                self._wake.wait(None if self._idle else self._interval)
                now = time.monotonic()
                late = [handler for handler, deadline in self._active.items() if deadline <= now]
                for handler in late:
                    del self._active[handler]
                    handler.expire()


class AcceptPool:
    """Workers that accept connections on `listener` and pass each to `handle(conn)`.

    `handle` owns the connection while it runs (and must not raise); `finish(conn)` ends the
    answer once the worker is ready for the next one; the pool closes it afterwards."""

    def __init__(
        self,
        listener: socket.socket,
        handle: Callable[[socket.socket], None],
        finish: Callable[[socket.socket], None] = lambda conn: None,
        name: str = "memoryd-socket",
    ) -> None:
        self._listener = listener
        self._handle = handle
        self._finish = finish
        self._name = name
        self._lock = threading.Lock()
        self._workers: set[threading.Thread] = set()
        self._waiting: set[threading.Thread] = set()  # in accept(), or about to be
        self._stopped = False
        self._started = 0  # workers started so far: names them

    @property
    def size(self) -> int:
        """How many workers there are now (busy or waiting)."""
        with self._lock:
            return len(self._workers)

    def start(self) -> None:
        with self._lock:
            for _ in range(KEPT):
                self._spawn()

    def _spawn(self) -> None:
        """One more worker, waiting; call with `_lock` held."""
        self._started += 1
        worker = threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True)
        self._workers.add(worker)
        self._waiting.add(worker)
        worker.start()

    def _work(self) -> None:
        me = threading.current_thread()
        try:
            while True:
                try:
                    conn, _ = self._listener.accept()
                except OSError:  # the listener was shut: the pool is stopping
                    return
                with self._lock:
                    self._waiting.discard(me)
                    if self._stopped:
                        conn.close()  # a wake-up from close(), or a client too late
                        return
                    if not self._waiting and len(self._workers) < MAX_WORKERS:
                        self._spawn()
                try:
                    self._handle(conn)
                    # Back among the waiting before the client sees its answer end: a client
                    # that sends its next request then finds this worker idle, not a reason
                    # to start one more.
                    with self._lock:
                        ending = self._stopped or (len(self._workers) > KEPT and len(self._waiting) >= SPARE)
                        if not ending:
                            self._waiting.add(me)
                    self._finish(conn)
                finally:
                    conn.close()
                if ending:
                    return
        finally:
            with self._lock:
                self._workers.discard(me)
                self._waiting.discard(me)

    def close(self, address: str, timeout: float = 5.0) -> None:
        """Stop accepting; wake the workers waiting in accept() and wait for them, not for
        those still answering a request (each ends when its answer is sent)."""
        with self._lock:
            self._stopped = True
            waiting = list(self._waiting)
        # A connection each wakes them: closing (or, off Linux, shutting) a listening
        # socket does not wake a thread blocked in accept() everywhere.
        for _ in waiting:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
                wake.settimeout(1.0)
                try:
                    wake.connect(address)
                except OSError:  # the socket file was removed under us: the waiting
                    break  # workers are daemon threads, they end with the process
        deadline = time.monotonic() + timeout
        for worker in waiting:
            worker.join(max(0.0, deadline - time.monotonic()))
        self._listener.close()
