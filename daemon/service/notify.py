"""systemd's notify protocol: a few text lines sent over the NOTIFY_SOCKET datagram socket.

No systemd library needed. Without NOTIFY_SOCKET (a terminal, launchd, another
supervisor) every method is a no-op, so the daemon calls them unconditionally.
memoryd never daemonizes: the service manager owns the process.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping

import structlog

log = structlog.get_logger("memoryd.notify")


def notify_address(value: str | None) -> str | bytes | None:
    """Return the socket address for a NOTIFY_SOCKET value, or None when unusable.

    `@name` is a Linux abstract socket (a leading NUL byte); `/path` a file socket.
    """
    if not value:
        return None
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    if value.startswith("/"):
        return value
    # systemd ≥ 253 may also hand out `vsock:` addresses (VMs); memoryd runs on the host.
    return None


def watchdog_interval_from(env: Mapping[str, str], pid: int) -> float | None:
    """Return how often to send WATCHDOG=1 (half the period), or None when not asked to."""
    usec = env.get("WATCHDOG_USEC", "")
    owner = env.get("WATCHDOG_PID", "")
    # WATCHDOG_PID names the process the watchdog is meant for; a child that inherited
    # the environment must not ping on its parent's behalf.
    if owner and (not owner.isdigit() or int(owner) != pid):
        return None
    if not usec.isdigit() or int(usec) == 0:
        return None
    return int(usec) / 1_000_000 / 2


class Notifier:
    """Send sd_notify messages to the service manager; does nothing without NOTIFY_SOCKET."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        pid: int | None = None,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        env = os.environ if env is None else env
        self._raw = env.get("NOTIFY_SOCKET")
        self._address = notify_address(self._raw)
        self._watchdog = watchdog_interval_from(env, os.getpid() if pid is None else pid)
        self._monotonic_ns = monotonic_ns
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        if self._raw and self._address is None:
            log.warning("notify_socket_unsupported", notify_socket=self._raw)

    @property
    def enabled(self) -> bool:
        """True when a service manager is listening."""
        return self._address is not None

    def send(self, *fields: str) -> bool:
        """Send one message made of `KEY=value` fields; return whether it was delivered."""
        if self._address is None:
            return False
        message = "\n".join(fields).encode()
        try:
            with self._lock:  # the main thread pings the watchdog while the worker sets STATUS
                if self._sock is None:
                    self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                    # Never block the daemon on a listener that does not read (a full
                    # datagram queue): a dropped status line is better than a hung worker.
                    self._sock.setblocking(False)
                self._sock.sendto(message, self._address)
        except BlockingIOError:
            log.debug("notify_dropped", notify_socket=self._raw, message=fields[0], reason="listener queue full")
            return False
        except OSError as exc:
            # A lost notification must not take the daemon down; systemd will time the
            # start out or restart us on a missed watchdog, which is the right outcome.
            log.warning("notify_failed", notify_socket=self._raw, error=str(exc), message=fields[0])
            return False
        return True

    def ready(self) -> bool:
        """Tell systemd the daemon can do its work now (also ends a reload)."""
        return self.send("READY=1")

    def status(self, text: str) -> bool:
        """Set the one-line status shown by `systemctl status`."""
        # A newline would start a new protocol field, so the text stays on one line.
        return self.send("STATUS=" + " ".join(text.split()))

    def watchdog(self) -> bool:
        """Keep-alive ping for WatchdogSec=."""
        return self.send("WATCHDOG=1")

    def stopping(self) -> bool:
        """Tell systemd a graceful stop has begun."""
        return self.send("STOPPING=1")

    def reloading(self) -> bool:
        """Tell systemd a reload has begun; send ready() once it is done."""
        # MONOTONIC_USEC is required by Type=notify-reload (systemd ≥ 253), ignored before.
        return self.send("RELOADING=1", f"MONOTONIC_USEC={self._monotonic_ns() // 1000}")

    def watchdog_interval(self) -> float | None:
        """Seconds between watchdog() calls (half of WatchdogSec), or None when not asked."""
        return self._watchdog

    def close(self) -> None:
        """Close the socket; later messages reopen it."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
