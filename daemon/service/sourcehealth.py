"""Is OpenCode's database still the file the daemon opened, and can it be used?

Two questions the daemon asks before each capture pass, answered from the file itself
(no SQL: that lives in daemon/opencode):

- *Replaced?* `mv new.db opencode.db` gives another inode; `cp older.db opencode.db`
  keeps the inode and rewrites the bytes under an open connection, which SQLite does not
  notice (no commit went through it). So the identity compared is the inode **and** the
  file's size, mtime and 100-byte header: any change reopens the connection (cheap; a
  checkpoint does it too), and a file that went back (an older change counter, fewer
  pages, a smaller file) gets one full pass, since rows it holds may be older than
  anything the daemon would otherwise look at.
- *Usable?* A database damaged inside a valid header, vanished, or unreadable is
  reported once (per distinct error), shown by `memoryd status`, and retried with
  backoff (1 s, 2 s, 4 s, … up to 5 min) instead of at every file event; another file
  (a new inode, or other bytes in its header or size) is tried at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

FIRST_RETRY_S = 1.0
MAX_RETRY_S = 300.0
HEADER_BYTES = 100


@dataclass(frozen=True)
class FileIdentity:
    """What the file is now: inode, size, mtime and header."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    header: bytes

    @property
    def inode(self) -> tuple[int, int]:
        return self.dev, self.ino

    @property
    def change_counter(self) -> int:
        return int.from_bytes(self.header[24:28], "big") if len(self.header) >= 28 else 0

    @property
    def pages(self) -> int:
        return int.from_bytes(self.header[28:32], "big") if len(self.header) >= 32 else 0


def file_identity(path: Path) -> FileIdentity | None:
    """The file's identity now; None when it is not there (or cannot be read)."""
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            header = handle.read(HEADER_BYTES)
    except OSError:
        return None
    return FileIdentity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, header)


def went_back(seen: FileIdentity | None, now: FileIdentity | None) -> str | None:
    """Why `now` looks like an older or another file than `seen` (same path), or None."""
    if seen is None or now is None:
        return None
    if now.inode != seen.inode:
        return "another file (a new inode)"
    if now.change_counter < seen.change_counter:
        return "rewritten in place with an older copy (its change counter went back)"
    if now.pages < seen.pages or now.size < seen.size:
        return "rewritten in place with a smaller file (an older copy?)"
    return None


def _content(identity: FileIdentity | None) -> tuple[object, ...] | None:
    """What says another file is there: not the mtime, which every write (or touch) moves."""
    return None if identity is None else (identity.inode, identity.size, identity.header)


@dataclass
class SourceHealth:
    """The source's failures: reported once, retried with backoff, cleared by a good pass."""

    error: str = ""
    failures: int = 0
    retry_at: float = 0.0
    failed_on: FileIdentity | None = None

    def failed(self, error: str, now: float, identity: FileIdentity | None) -> bool:
        """Record a failed attempt; True when this error is new (the caller reports it)."""
        new = error != self.error
        self.failures = 1 if new else self.failures + 1
        self.error = error
        self.retry_at = now + min(MAX_RETRY_S, FIRST_RETRY_S * 2 ** (self.failures - 1))
        self.failed_on = identity
        return new

    def wait(self, now: float, identity: FileIdentity | None) -> float | None:
        """Seconds to wait before the next attempt, or None to try now (no failure, the
        backoff is over, or the file is not the one that failed)."""
        if not self.error or now >= self.retry_at or _content(identity) != _content(self.failed_on):
            return None
        return self.retry_at - now

    def recovered(self) -> bool:
        """A pass went through: forget the failure; True when there was one."""
        had = bool(self.error)
        self.error, self.failures, self.retry_at, self.failed_on = "", 0, 0.0, None
        return had
