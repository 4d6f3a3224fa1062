"""Signal handling for the daemon loop, the uvicorn way.

The first SIGTERM or SIGINT asks for a graceful stop; a second one, while that stop is
still running, forces the process out. SIGHUP asks for a reload (systemd's ExecReload
sends it). The previous handlers come back when the `with` block ends.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import structlog

log = structlog.get_logger("memoryd.signals")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RELOAD_SIGNAL = signal.SIGHUP
FORCED_EXIT_CODE = 1


class SignalHandlers:
    """Install stop/reload handlers for the lifetime of a `with` block (main thread only).

    `stop` is set by the first SIGTERM/SIGINT; `reload` by each SIGHUP, which also calls
    `on_reload` (it runs inside the signal handler: keep it short, e.g. put to a queue).
    """

    def __init__(
        self,
        stop: threading.Event | None = None,
        on_reload: Callable[[], None] | None = None,
        force_exit: Callable[[int], Any] = os._exit,
    ) -> None:
        self.stop = stop if stop is not None else threading.Event()
        self.reload = threading.Event()
        self.received: list[signal.Signals] = []
        self._on_reload = on_reload
        self._force_exit = force_exit
        self._previous: dict[signal.Signals, Any] = {}

    def _handle_stop(self, signum: int, _frame: FrameType | None) -> None:
        sig = signal.Signals(signum)
        self.received.append(sig)
        if self.stop.is_set():
            log.error("forced_exit", signal=sig.name, reason="second stop signal during shutdown")
            # os._exit skips atexit and finally blocks: the graceful path already had its chance.
            self._force_exit(FORCED_EXIT_CODE)
            return
        log.info("stop_requested", signal=sig.name, hint="send it again to force an exit")
        self.stop.set()

    def _handle_reload(self, signum: int, _frame: FrameType | None) -> None:
        self.received.append(signal.Signals(signum))
        log.info("reload_requested", signal=signal.Signals(signum).name)
        self.reload.set()
        if self._on_reload is not None:
            self._on_reload()

    def __enter__(self) -> SignalHandlers:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("signal handlers can only be installed from the main thread")
        try:
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle_stop)
            self._previous[RELOAD_SIGNAL] = signal.signal(RELOAD_SIGNAL, self._handle_reload)
        except BaseException:
            self._restore()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        for sig, previous in self._previous.items():
            # None means the old handler was not set from Python; the default is the best match.
            signal.signal(sig, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()
