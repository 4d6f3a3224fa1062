"""The only module that knows OpenCode's schema and SQL.

The database is opened read-only (`mode=ro`) and nothing is ever created, altered,
vacuumed or indexed in it. Columns are read by name after checking `PRAGMA table_info`,
because the schema moves between OpenCode releases.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from daemon.scrub import redact

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One OpenCode session as the reader sees it."""

    id: str
    title: str
    directory: str
    project_id: str
    parent_id: str | None
    time_created: int  # epoch ms
    time_updated: int  # epoch ms, highest over the session's own row
    message_count: int = 0

# Columns memoryd cannot work without, and the OpenCode release that added them.
REQUIRED: dict[str, tuple[str, ...]] = {
    "session": ("id", "directory", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "time_updated", "data"),
    "part": ("id", "message_id", "session_id", "time_updated", "data"),
}
# Read when present: `title` became nullable, `parent_id`/`project_id` came later.
OPTIONAL = {"session": ("title", "parent_id", "project_id")}


class SourceError(Exception):
    """OpenCode's database cannot be used; the message says why and what to do."""


class SourceMissing(SourceError):
    pass


class SchemaError(SourceError):
    pass


@dataclass(frozen=True)
class MessageRow:
    id: str
    time_created: int
    data: bytes


@dataclass(frozen=True)
class PartRow:
    id: str
    message_id: str
    data: bytes


@dataclass(frozen=True)
class SessionRows:
    """Everything stored for one session, in transcript order."""

    session: SessionInfo
    messages: list[MessageRow]
    parts: list[PartRow]  # ordered by their message's (time_created, id), then part id


def connect_read_only(path: Path, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    """Open `path` read-only; raise SourceMissing with advice if it is not there."""
    if not path.exists():
        # OpenCode builds from other release channels write opencode-<channel>.db.
        others = sorted(path.parent.glob("opencode-*.db")) if path.parent.is_dir() else []
        hint = f"\nFound {', '.join(str(p) for p in others)}: a non-default OpenCode channel?" if others else ""
        raise SourceMissing(
            f"OpenCode database not found at {path}.{hint}\n"
            "Run OpenCode once to create it, or point memoryd at it with "
            "OPENCODE_DB=/path/to/opencode.db or [source] db = \"…\" in the config file."
        )
    _check_file(path)
    # check_same_thread=False: the daemon hands the reader to its worker thread.
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=busy_timeout_ms / 1000, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise unreadable(path, exc) from exc
    return conn


SQLITE_MAGIC = b"SQLite format 3\x00"


def _check_file(path: Path) -> None:
    """Raise SourceError naming what `path` is when it cannot be an SQLite database."""
    if path.is_dir():
        raise SourceError(
            f"{path} is a folder, not OpenCode's database file: point OPENCODE_DB or [source] db at opencode.db"
        )
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
            size = path.stat().st_size
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror}); check its permissions") from exc
    head = header[: len(SQLITE_MAGIC)]
    if not head:
        raise SourceError(f"{path} is empty (0 bytes), not an OpenCode database: is OPENCODE_DB / [source] db right?")
    if head != SQLITE_MAGIC:
        raise SourceError(
            f"{path} is not an SQLite database (it starts with {head[:8]!r}): is OPENCODE_DB / [source] db right?"
        )
    expected = _expected_size(header)
    if expected and size < expected:
        raise SourceError(
            f"{path} is truncated ({size} bytes; its header says {expected}): a partial copy? "
            "OpenCode's own file is complete"
        )


def _expected_size(header: bytes) -> int:
    """The file size an SQLite header promises (0 when it does not say reliably)."""
    if len(header) < 100:
        return 0
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is only valid when the change counter matches "version-valid-for".
    valid = header[24:28] == header[92:96]
    return page_size * pages if valid else 0


def unreadable(path: Path, exc: sqlite3.DatabaseError) -> SourceError:
    """The error for a database SQLite cannot read (truncated, corrupt, unreadable)."""
    return SourceError(f"{path}: OpenCode's database cannot be read ({exc}); is it truncated or damaged?")


def retry_busy(fn: Callable[[], T], attempts: int = 5, sleep: Callable[[float], None] = time.sleep) -> T:
    """Call `fn`, retrying while OpenCode holds a lock longer than the busy timeout."""
    for attempt in range(attempts):
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or attempt == attempts - 1:
                raise
            sleep(0.1 * 2**attempt)
    raise AssertionError("unreachable")


class OpenCodeReader:
    """Read sessions, messages and parts from OpenCode's database."""

    def __init__(self, path: Path, busy_timeout_ms: int = 5000) -> None:
        self.path = path
        self.conn = connect_read_only(path, busy_timeout_ms)
        try:
            self.columns = self._check_schema()
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> OpenCodeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_schema(self) -> dict[str, set[str]]:
        try:
            return self._read_schema()
        except sqlite3.DatabaseError as exc:
            raise unreadable(self.path, exc) from exc

    def _read_schema(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for table, required in REQUIRED.items():
            cols = {row[1] for row in retry_busy(lambda t=table: self.conn.execute(f"PRAGMA table_info({t})").fetchall())}
            if not cols:
                raise SchemaError(
                    f"{self.path} has no '{table}' table: is it an OpenCode database? "
                    "memoryd reads OpenCode ≥ 1.0 (SQLite storage); older releases kept sessions as JSON files."
                )
            missing = [c for c in required if c not in cols]
            if missing:
                raise SchemaError(
                    f"{self.path}: table '{table}' has no column {', '.join(missing)}. "
                    "This OpenCode release stores sessions differently from the ones memoryd knows "
                    "(tested with 1.18.33); please report the OpenCode version (`opencode --version`)."
                )
            found[table] = cols
        return found

    def data_version(self) -> int:
        """SQLite's change counter: it moves when another connection commits."""
        return retry_busy(lambda: self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _session_select(self) -> str:
        cols = self.columns["session"]
        title = "COALESCE(s.title, '')" if "title" in cols else "''"
        parent = "s.parent_id" if "parent_id" in cols else "NULL"
        project = "COALESCE(s.project_id, '')" if "project_id" in cols else "''"
        # max_updated: the session's own row, and every message and part of it
        # (both tables are indexed by session id, so this is per-session work).
        return (
            f"SELECT s.id, {title}, s.directory, {project}, {parent}, s.time_created, "
            "MAX(s.time_updated, "
            "  COALESCE((SELECT MAX(m.time_updated) FROM message m WHERE m.session_id = s.id), 0), "
            "  COALESCE((SELECT MAX(p.time_updated) FROM part p WHERE p.session_id = s.id), 0)), "
            "(SELECT COUNT(*) FROM message m WHERE m.session_id = s.id) "
            "FROM session s"
        )

    @staticmethod
    def _info(row: tuple) -> SessionInfo:
        return SessionInfo(
            id=row[0],
            # Scrubbed here, once: the title becomes a file name, a state row, log fields.
            title=redact(row[1] or ""),
            directory=row[2] or "",
            project_id=row[3] or "",
            parent_id=row[4] or None,
            time_created=int(row[5]),
            time_updated=int(row[6]),
            message_count=int(row[7]),
        )

    def sessions(self, ids: list[str] | None = None) -> list[SessionInfo]:
        """Return sessions (all, or these ids) oldest first by (time_created, id)."""
        sql = self._session_select()
        args: list[str] = []
        if ids is not None:
            if not ids:
                return []
            result: list[SessionInfo] = []
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                q = f"{sql} WHERE s.id IN ({','.join('?' * len(chunk))})"
                result += [self._info(r) for r in retry_busy(lambda q=q, c=chunk: self.conn.execute(q, c).fetchall())]
            return sorted(result, key=lambda s: (s.time_created, s.id))
        rows = retry_busy(lambda: self.conn.execute(f"{sql} ORDER BY s.time_created, s.id", args).fetchall())
        return [self._info(r) for r in rows]

    def changed_session_ids(self, since_ms: int, after_message_id: str = "") -> set[str]:
        """Return ids of sessions whose rows moved after `since_ms`.

        Two cheap probes: the session table (one row per session, touched when a session
        continues) and messages created after the newest one seen (a primary-key range).
        Parts and messages are then checked per candidate session by `sessions()`.
        """
        ids = {
            r[0]
            for r in retry_busy(
                lambda: self.conn.execute("SELECT id FROM session WHERE time_updated > ?", (since_ms,)).fetchall()
            )
        }
        ids.update(
            r[0]
            for r in retry_busy(
                lambda: self.conn.execute(
                    "SELECT DISTINCT session_id FROM message WHERE id > ?", (after_message_id,)
                ).fetchall()
            )
        )
        return ids

    def newest_update(self) -> int | None:
        """Epoch ms of the most recently updated session row (for the status lag)."""
        return retry_busy(lambda: self.conn.execute("SELECT MAX(time_updated) FROM session").fetchone()[0])

    def newest_message_id(self) -> str:
        row = retry_busy(lambda: self.conn.execute("SELECT MAX(id) FROM message").fetchone())
        return row[0] or ""

    def session_rows(self, session: SessionInfo) -> SessionRows:
        """Return the session's messages and parts in transcript order (data as raw bytes)."""

        def read() -> SessionRows:
            # CAST to BLOB: a row with invalid UTF-8 must not fail the whole query.
            messages = [
                MessageRow(r[0], int(r[1]), r[2])
                for r in self.conn.execute(
                    "SELECT id, time_created, CAST(data AS BLOB) FROM message WHERE session_id = ? "
                    "ORDER BY time_created, id",
                    (session.id,),
                )
            ]
            order = {m.id: i for i, m in enumerate(messages)}
            parts = [
                PartRow(r[0], r[1], r[2])
                for r in self.conn.execute(
                    "SELECT id, message_id, CAST(data AS BLOB) FROM part WHERE session_id = ?", (session.id,)
                )
            ]
            parts.sort(key=lambda p: (order.get(p.message_id, len(order)), p.id))
            return SessionRows(session, messages, parts)

        return retry_busy(read)
