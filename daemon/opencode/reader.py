"""OpenCode's database as a session source (`daemon.source`), both table families.

OpenCode 1.x keeps sessions in `session`/`message`/`part` (`daemon.opencode.v1`);
OpenCode 2 in `session_v2`/`session_message` (`daemon.opencode.v2`), and on its first
start copies every 1.x session there under the same id, leaving the 1.x rows in place
(and 1.x, still runnable, may write more). Each session is read from exactly one family:
the one with the newest activity (1.x on a tie, so an upgrade alone changes no note).

The database is opened read-only (`mode=ro`) and nothing is ever created, altered,
vacuumed or indexed in it. Columns are read by name after checking `PRAGMA table_info`,
because the schema moves between OpenCode releases. All of OpenCode's SQL lives in this
package.
"""

from __future__ import annotations

import functools
import sqlite3
import time
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from daemon.opencode import v1, v2
from daemon.source import MessageRow, PartRow, SessionInfo, SessionRows

__all__ = ["MessageRow", "OpenCodeReader", "PartRow", "SessionInfo", "SessionRows", "SourceBusy", "SourceError"]

T = TypeVar("T")


FAMILIES = {v1.FAMILY: v1.REQUIRED, v2.FAMILY: v2.REQUIRED}
# The table whose presence says a family is there: an empty `session_message` already
# exists in 1.18 databases, so OpenCode 2 is told apart by `session_v2`.
MARKERS = {v1.FAMILY: "session", v2.FAMILY: "session_v2"}
LABELS = {v1.FAMILY: "OpenCode 1.x (session, message, part)", v2.FAMILY: "OpenCode 2 (session_v2, session_message)"}
CHUNK = 500  # ids per IN (…) query


class SourceError(Exception):
    """OpenCode's database cannot be used; the message says why and what to do."""


class SourceMissing(SourceError):
    pass


class SchemaError(SourceError):
    pass


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


class SourceBusy(SourceError):
    """Another program holds a lock on the database longer than we wait: not damage."""


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "busy": another program holds a lock."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def unreadable(path: Path, exc: sqlite3.DatabaseError) -> SourceError:
    """The error for a database SQLite cannot read (locked, truncated, corrupt, unreadable)."""
    if is_busy(exc):
        return SourceBusy(
            f"{path}: OpenCode's database is busy, retrying: another program holds a lock on it ({exc}). "
            f"If this lasts, find the program keeping it locked (`fuser -v {path}`)"
        )
    return SourceError(f"{path}: OpenCode's database cannot be read ({exc}); is it truncated or damaged?")


def retry_busy(fn: Callable[[], T], attempts: int = 5, sleep: Callable[[float], None] = time.sleep) -> T:
    """Call `fn`, retrying while OpenCode holds a lock longer than the busy timeout."""
    for attempt in range(attempts):
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or attempt == attempts - 1:
                raise
            sleep(0.1 * 2**attempt)
    raise AssertionError("unreachable")




class OpenCodeReader:
    """Sessions of OpenCode 1.x and OpenCode 2 from one database: a `SessionSource`."""

    agents = ("opencode",)

    def __init__(self, path: Path, busy_timeout_ms: int = 5000) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.conn = connect_read_only(path, busy_timeout_ms)
        st = path.stat()  # the file this connection reads (a cursor is only good for it)
        self._file = f"{st.st_dev}:{st.st_ino}"
        try:
            self.columns = self._check_schema()
        except BaseException:
            self.conn.close()
            raise
        self.tables: dict[str, v1.V1Tables | v2.V2Tables] = {}
        if MARKERS[v1.FAMILY] in self.columns:
            self.tables[v1.FAMILY] = v1.V1Tables(self.conn, self.columns)
        if MARKERS[v2.FAMILY] in self.columns:
            self.tables[v2.FAMILY] = v2.V2Tables(self.conn, self.columns)
        # (data_version, cursor) when changed_since last found nothing: while no other
        # connection commits, the same question has the same answer without any SQL.
        self._quiet: tuple[int, str] | None = None

    def close(self) -> None:
        self.conn.close()

    def opener(self) -> Callable[[], OpenCodeReader]:
        """The same database opened again (by a worker process)."""
        return functools.partial(OpenCodeReader, self.path, self.busy_timeout_ms)

    def __enter__(self) -> OpenCodeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def families(self) -> list[str]:
        """The table families this database holds ("v1", "v2")."""
        return list(self.tables)

    def _check_schema(self) -> dict[str, set[str]]:
        try:
            return self._read_schema()
        except sqlite3.DatabaseError as exc:
            raise unreadable(self.path, exc) from exc

    def _read_schema(self) -> dict[str, set[str]]:
        # One wait at open: a database held locked is said at once (and retried by the
        # caller: the daemon's backoff), not after five busy timeouts.
        tables = {r[0] for r in retry_busy(lambda: self.conn.execute("SELECT name FROM sqlite_master").fetchall(), 1)}
        present = [family for family, marker in MARKERS.items() if marker in tables]
        if not present:
            raise SchemaError(
                f"{self.path} has no 'session' or 'session_v2' table: is it an OpenCode database? "
                "memoryd reads OpenCode ≥ 1.0 (SQLite storage) and OpenCode 2; older releases kept sessions as JSON files."
            )
        found: dict[str, set[str]] = {}
        for family in present:
            for table, required in FAMILIES[family].items():
                cols = {row[1] for row in retry_busy(lambda t=table: self.conn.execute(f"PRAGMA table_info({t})").fetchall())}
                if not cols:
                    raise SchemaError(
                        f"{self.path} has a '{MARKERS[family]}' table but no '{table}' table: "
                        f"an {LABELS[family]} database memoryd does not know; please report `opencode --version`."
                    )
                missing = [c for c in required if c not in cols]
                if missing:
                    raise SchemaError(
                        f"{self.path}: table '{table}' has no column {', '.join(missing)}. "
                        "This OpenCode release stores sessions differently from the ones memoryd knows "
                        "(tested with 1.18.33 and 2.0.15); please report the OpenCode version (`opencode --version`)."
                    )
                found[table] = cols
        return found

    def data_version(self) -> int:
        """SQLite's change counter: it moves when another connection commits."""
        return retry_busy(lambda: self.conn.execute("PRAGMA data_version").fetchone()[0])

    # -- the source interface ---------------------------------------------------------

    def cursor(self) -> str:
        """A mark of every row stored now (the file, each family's newest rowids), as JSON."""
        marks: dict[str, object] = retry_busy(lambda: {f: t.cursor() for f, t in self.tables.items()})
        marks["file"] = self._file
        return json.dumps(marks, sort_keys=True, separators=(",", ":"))

    def changed_since(self, cursor: str) -> set[str]:
        """Ids of sessions (roots or subagents) with rows inserted after `cursor`.

        A missing or unreadable cursor (a first pass, an older memoryd's), or one taken
        on another file, means every session. A family the cursor does not name is new
        since (OpenCode 2 just migrated): all of its rows count as new; so do all of a
        family whose tables shrank below the cursor (rows deleted, a file rebuilt).
        """
        version = self.data_version()
        if self._quiet == (version, cursor):
            return set()
        try:
            marks = json.loads(cursor) if cursor else None
        except ValueError:
            marks = None
        if not isinstance(marks, dict) or marks.get("file") != self._file:
            return retry_busy(lambda: set().union(*(tables.ids() for tables in self.tables.values())))
        ids: set[str] = set()
        for family, tables in self.tables.items():
            mark = marks.get(family) if isinstance(marks.get(family), dict) else {}
            ids |= retry_busy(lambda t=tables, m=mark: self._changed(t, m))
        self._quiet = (version, cursor) if not ids else None
        return ids

    @staticmethod
    def _changed(tables: v1.V1Tables | v2.V2Tables, mark: dict) -> set[str]:
        now = tables.cursor()
        if any(now[key] < mark.get(key, 0) for key in now):
            return tables.ids()
        return tables.changed_since({key: mark.get(key, 0) for key in now})

    def sessions(self, ids: Sequence[str] | None = None) -> list[SessionInfo]:
        """Return sessions (all, or these ids) oldest first by (time_created, id).

        A session both families hold is read from the one with the newest activity.
        """
        chosen: dict[str, SessionInfo] = {}
        for info in self._all_families(None if ids is None else list(ids)):
            other = chosen.get(info.id)
            if other is None or info.time_updated > other.time_updated:
                chosen[info.id] = info
        return sorted(chosen.values(), key=lambda s: (s.time_created, s.id))

    def _all_families(self, ids: list[str] | None) -> list[SessionInfo]:
        # 1.x first: on a tie (a migrated session nobody continued) its rows are kept.
        found: list[SessionInfo] = []
        for tables in self.tables.values():
            if ids is None:
                found += retry_busy(lambda t=tables: t.sessions(None))
                continue
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                found += retry_busy(lambda t=tables, c=chunk: t.sessions(c))
        return found

    def session_rows(self, session: SessionInfo) -> SessionRows:
        """The session's rows, from its family, in transcript order."""
        tables = self.tables.get(session.family) or next(iter(self.tables.values()))
        return retry_busy(lambda: tables.rows(session))

    def newest_update(self) -> int | None:
        """Epoch ms of the newest row over both families (for the watermark and status lag)."""
        found = [t for t in retry_busy(lambda: [tables.newest_update() for tables in self.tables.values()]) if t]
        return max(found) if found else None

    def describe(self) -> dict[str, object]:
        """For `memoryd status`: each family present with its label and counts (root
        sessions, subagents, rows), and how many sessions both families hold."""
        families = {f: {"label": LABELS[f], **retry_busy(t.counts)} for f, t in self.tables.items()}
        both = 0
        if len(self.tables) == 2:
            sql = "SELECT COUNT(*) FROM session_v2 WHERE id IN (SELECT id FROM session)"
            both = retry_busy(lambda: self.conn.execute(sql).fetchone()[0])
        return {"families": families, "in_both": int(both)}
