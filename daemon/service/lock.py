"""One memoryd daemon per user: an flock on a file in the state folder.

The kernel drops an flock when its holder dies (even by SIGKILL), so a crash never
leaves a stale lock behind. Whether a daemon is running is decided by trying the lock,
never by looking for the pid alone: pids are reused.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from daemon.diskfull import raise_if_disk_full
from daemon.files import ensure_dir

# `memoryd status` briefly holds a shared lock to test it; a starting daemon retries
# for this long so that such a probe is not mistaken for a running daemon.
_ACQUIRE_GRACE_S = 0.5
_RETRY_S = 0.05


class AlreadyRunning(Exception):
    """Another memoryd daemon holds the lock."""

    def __init__(self, pid: int | None, path: Path) -> None:
        self.pid = pid
        self.path = path
        who = f"pid {pid}" if pid else "unknown pid"
        super().__init__(
            f"memoryd is already running ({who}, lock {path}). "
            "Stop it first (`systemctl --user stop memoryd`, or `kill "
            f"{pid or '<pid>'}`), or use `memoryd status` to see what it is doing."
        )


@dataclass(frozen=True)
class LockInfo:
    """What the lock file says, and whether its holder is alive."""

    pid: int | None
    started: datetime | None
    alive: bool

    def uptime(self, now: datetime) -> timedelta | None:
        """Return how long the holder has run, or None when not running or unknown."""
        if not self.alive or self.started is None:
            return None
        return max(now - self.started, timedelta(0))


def _parse(text: str) -> tuple[int | None, datetime | None]:
    """Return (pid, started) from the lock file's JSON, tolerating a blank or odd file."""
    try:
        data = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    pid = data.get("pid")
    pid = pid if isinstance(pid, int) and pid > 0 else None
    try:
        started = datetime.fromisoformat(data["started"])
    except (KeyError, TypeError, ValueError):
        started = None
    return pid, started


def read_lock(path: Path) -> LockInfo | None:
    """Return the lock's pid, start time and liveness; None when there is no lock file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            pid, started = _parse(handle.read().decode("utf-8", "replace"))
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockInfo(pid, started, alive=True)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return LockInfo(pid, started, alive=False)
    finally:
        os.close(fd)


class InstanceLock:
    """Hold the single-instance lock while inside the `with` block.

    Raises AlreadyRunning (with the holder's pid) when another process holds it.
    """

    def __init__(
        self,
        path: Path,
        pid: int | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        grace_s: float = _ACQUIRE_GRACE_S,
    ) -> None:
        self.path = path
        self._pid = os.getpid() if pid is None else pid
        self._now = now
        self._grace_s = grace_s
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock and record our pid and start time in the file."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: lock already held by this object")
        ensure_dir(self.path.parent)
        # os.open is close-on-exec, so a child process never inherits (and keeps) the lock.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self._grace_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid, _ = _parse(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
                    os.close(fd)
                    raise AlreadyRunning(pid, self.path) from None
                time.sleep(_RETRY_S)
            except OSError:
                os.close(fd)
                raise
        record = json.dumps({"pid": self._pid, "started": self._now().isoformat()}) + "\n"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, record.encode(), 0)
        except OSError as exc:
            os.close(fd)
            raise_if_disk_full(exc, self.path)
            raise
        self._fd = fd

    def release(self) -> None:
        """Let the lock go; the file stays (with the last pid) for `memoryd status`."""
        # Not unlinked: a second process may have the old inode open, about to lock it,
        # while a third creates and locks a new file at the same path: two daemons.
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
