"""A full disk, named as such: every command says "disk full" and the path it could not write.

SQLite reports a full disk as `database or disk is full` (SQLITE_FULL), or, when the WAL's
shared-memory file cannot grow, as `disk I/O error`; the file system as ENOSPC or EDQUOT.
Left alone these read like a damaged database (and a damaged state database is moved
aside), so the places that write turn them into `DiskFull`, and the CLI prints it in one
line. Nothing here is torn by a full disk: writes are atomic, and all recovers once there
is space again.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
# Below this much free space a SQLite I/O error on the file system is taken for a full disk.
NEARLY_FULL_BYTES = 256 * 1024


class DiskFull(Exception):
    """No space left where memoryd writes: `path` names the file it could not write.

    Not an OSError on purpose: the handlers that let one session fail on an unwritable
    folder must not catch it, because on a full disk every session would fail alike
    (and be charged an attempt). It ends the pass, or the command, and says why.
    """

    errno = errno.ENOSPC

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        super().__init__(str(path), detail)
        self.path = Path(path)
        self.detail = detail

    def __str__(self) -> str:
        return (f"disk full: cannot write {self.path} ({self.detail}); "
                "free some space on that file system and run it again (nothing was damaged)")


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """Bytes an unprivileged writer may still use where `path` is (its nearest existing folder)."""
    here = Path(path)
    while not here.exists() and here != here.parent:
        here = here.parent
    try:
        stats = os.statvfs(here)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def is_disk_full(exc: BaseException, path: str | os.PathLike[str] | None = None) -> bool:
    """True when `exc` (or what caused it) says the disk is full; `path` settles SQLite's
    vaguer `disk I/O error` by looking at the free space there."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFull):
            return True
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return True
        if isinstance(current, sqlite3.Error):
            code = getattr(current, "sqlite_errorcode", None)
            if code == sqlite3.SQLITE_FULL or "database or disk is full" in str(current):
                return True
            io_error = code is not None and code & 0xFF == sqlite3.SQLITE_IOERR or "disk I/O error" in str(current)
            if io_error and path is not None:
                free = free_bytes(path)
                if free is not None and free < NEARLY_FULL_BYTES:
                    return True
        current = current.__cause__ or current.__context__
    return False


def raise_if_disk_full(exc: BaseException, path: str | os.PathLike[str]) -> None:
    """Raise DiskFull (from `exc`) naming `path` when `exc` is a full disk; else return."""
    if isinstance(exc, DiskFull):
        raise exc
    if is_disk_full(exc, path):
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise DiskFull(path, detail) from exc


def find_disk_full(exc: BaseException, fallback: str | os.PathLike[str] | None = None) -> DiskFull | None:
    """The DiskFull behind `exc`, or one made for a bare ENOSPC/SQLITE_FULL (its file name,
    else `fallback`); None when `exc` is not a full disk."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DiskFull):
            return current
        current = current.__cause__ or current.__context__
    if not is_disk_full(exc, fallback):
        return None
    name = getattr(exc, "filename", None) or fallback or "memoryd's files"
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return DiskFull(name, detail)


@contextmanager
def immediate_transaction(conn: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """One write transaction on `conn` (in autocommit mode) of the database at `path`.

    IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout
    instead of failing half-way with SQLITE_BUSY. Any failure rolls back; a full disk
    is raised as DiskFull naming `path`.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException as exc:
        conn.execute("ROLLBACK")
        raise_if_disk_full(exc, path)
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if conn.in_transaction:  # a failed COMMIT (SQLITE_FULL) leaves it open
            conn.execute("ROLLBACK")
        raise_if_disk_full(exc, path)
        raise
