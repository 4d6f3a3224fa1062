"""Signal handling for the daemon loop, the uvicorn way.

The first SIGTERM or SIGINT asks for a graceful stop; a second one, while that stop is
still running, forces the process out. SIGHUP asks for a reload (systemd's ExecReload
sends it). The previous handlers come back when the `with` block ends.

The work is done on a thread of its own, woken through `signal.set_wakeup_fd`, not in a
Python signal handler: such a handler runs between two bytecodes of the main thread,
which may be in the middle of a log line (a log call there re-enters that write:
`RuntimeError: reentrant call inside BufferedWriter`, a traceback instead of the line)
or hold an Event's lock (setting that Event there deadlocks). The handlers do nothing.
The wakeup fd is one per process: nothing else in the daemon may set it (an asyncio loop
in the main thread would, and stop signals would then go unseen).
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
FORCED_LOG_WAIT_S = 1.0  # how long a forced exit waits for its log line
_QUIT = b"\0"  # no signal has number 0: the watcher's end


def _wake_only(_signum: int, _frame: FrameType | None) -> None:
    """The Python-level handler: the signal's number already went to the wakeup fd."""


class SignalHandlers:
    """Install stop/reload handlers for the lifetime of a `with` block (main thread only).

    `stop` is set by the first SIGTERM/SIGINT; `reload` by each SIGHUP, which also calls
    `on_reload` (on the signal thread: keep it short, e.g. put to a queue).
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
        self._previous_wakeup: int | None = None
        self._pipe: tuple[int, int] | None = None
        self._watcher: threading.Thread | None = None

    def _handle(self, sig: signal.Signals) -> None:
        self.received.append(sig)
        if sig == RELOAD_SIGNAL:
            log.info("reload_requested", signal=sig.name)
            self.reload.set()
            if self._on_reload is not None:
                self._on_reload()
        elif self.stop.is_set():
            # The line is written by another thread, waited for a moment only: a stalled
            # journal may hold a log handler's lock, and the exit must not wait on it.
            line = threading.Thread(
                target=log.error, args=("forced_exit",), daemon=True,
                kwargs={"signal": sig.name, "reason": "second stop signal during shutdown"},
            )
            line.start()
            line.join(FORCED_LOG_WAIT_S)
            # os._exit skips atexit and finally blocks: the graceful path already had its chance.
            self._force_exit(FORCED_EXIT_CODE)
        else:
            log.info("stop_requested", signal=sig.name, hint="send it again to force an exit")
            self.stop.set()

    def _watch(self, read_fd: int) -> None:
        """Handle each signal the wakeup fd names, in order, until the block ends."""
        ours = {*STOP_SIGNALS, RELOAD_SIGNAL}
        while data := os.read(read_fd, 64):
            for number in data:
                if number == _QUIT[0]:
                    return
                if number in ours:
                    self._handle(signal.Signals(number))

    def __enter__(self) -> SignalHandlers:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("signal handlers can only be installed from the main thread")
        read_fd, write_fd = self._pipe = os.pipe()
        os.set_blocking(write_fd, False)  # set_wakeup_fd's rule: a signal never blocks on it
        try:
            for sig in (*STOP_SIGNALS, RELOAD_SIGNAL):
                self._previous[sig] = signal.signal(sig, _wake_only)
            self._previous_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        except BaseException:
            self._restore()
            raise
        self._watcher = threading.Thread(target=self._watch, args=(read_fd,), name="memoryd-signals", daemon=True)
        self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        if self._previous_wakeup is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            self._previous_wakeup = None
        for sig, previous in self._previous.items():
            # None means the old handler was not set from Python; the default is the best match.
            signal.signal(sig, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()
        if self._pipe is None:
            return
        read_fd, write_fd = self._pipe
        if self._watcher is not None:
            os.write(write_fd, _QUIT)  # after every signal already written: those are handled first
            self._watcher.join(FORCED_LOG_WAIT_S)
            if self._watcher.is_alive():  # stuck in a log call: its pipe stays open (the process is ending)
                return
            self._watcher = None
        os.close(read_fd)
        os.close(write_fd)
        self._pipe = None
