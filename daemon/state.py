"""The state database: watermark, one record per session, model spend, recent errors.

Bookkeeping only: deleting it loses nothing a re-distill cannot rebuild. SQLite in WAL
mode so `memoryd status` can read while the daemon writes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from daemon.files import ensure_dir, private_file

# Append-only: each entry upgrades the schema by one version. Never edit a shipped one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE session (
        session_id     TEXT PRIMARY KEY,
        project_dir    TEXT NOT NULL DEFAULT '',
        title          TEXT NOT NULL DEFAULT '',
        max_updated    INTEGER NOT NULL DEFAULT 0,  -- highest time_updated over session/message/part rows
        transcript_hash TEXT NOT NULL DEFAULT '',   -- of the last transcript acted on
        note_path      TEXT NOT NULL DEFAULT '',
        status         TEXT NOT NULL DEFAULT 'pending',  -- pending | distilled | junk | failed
        attempts       INTEGER NOT NULL DEFAULT 0,  -- failed passes on failed_hash
        failed_hash    TEXT NOT NULL DEFAULT '',
        last_error     TEXT NOT NULL DEFAULT '',
        distiller      TEXT NOT NULL DEFAULT '',
        prompt_version TEXT NOT NULL DEFAULT '',
        needs_upgrade  INTEGER NOT NULL DEFAULT 0,  -- extractive fallback note awaiting a model
        time_done      INTEGER NOT NULL DEFAULT 0   -- epoch ms of the last status change
    );
    CREATE INDEX session_status_idx ON session (status);
    CREATE TABLE spend (
        day    TEXT PRIMARY KEY,  -- YYYY-MM-DD, local time
        calls  INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE error_log (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        time       INTEGER NOT NULL,
        session_id TEXT NOT NULL DEFAULT '',
        message    TEXT NOT NULL
    );
    """,
)

STATUSES = ("pending", "distilled", "junk", "failed")


@dataclass(slots=True)
class SessionRecord:
    session_id: str
    project_dir: str = ""
    title: str = ""
    max_updated: int = 0
    transcript_hash: str = ""
    note_path: str = ""
    status: str = "pending"
    attempts: int = 0
    failed_hash: str = ""
    last_error: str = ""
    distiller: str = ""
    prompt_version: str = ""
    needs_upgrade: int = 0
    time_done: int = 0


_COLUMNS = tuple(SessionRecord.__dataclass_fields__)


class StateDB:
    """memoryd's own SQLite file. One instance per thread that uses it."""

    def __init__(self, path: Path) -> None:
        ensure_dir(path.parent)
        self.path = path
        # Private before SQLite opens it: its -wal and -shm files copy the database's mode.
        private_file(path)
        self.conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self._migrate()

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.transaction():
                for statement in script.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version={number}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()

    # -- meta ---------------------------------------------------------------

    def get_meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    @property
    def watermark(self) -> int:
        """Epoch ms: every row updated before this has been seen."""
        return int(self.get_meta("watermark", "0"))

    def set_watermark(self, value: int) -> None:
        self.set_meta("watermark", str(value))

    # -- sessions -------------------------------------------------------------

    def get(self, session_id: str) -> SessionRecord | None:
        row = self.conn.execute("SELECT * FROM session WHERE session_id = ?", (session_id,)).fetchone()
        return SessionRecord(**{k: row[k] for k in _COLUMNS}) if row else None

    def get_many(self, session_ids: Iterable[str]) -> dict[str, SessionRecord]:
        ids = list(session_ids)
        found: dict[str, SessionRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT * FROM session WHERE session_id IN ({marks})", chunk):
                found[row["session_id"]] = SessionRecord(**{k: row[k] for k in _COLUMNS})
        return found

    def put(self, record: SessionRecord) -> None:
        marks = ",".join("?" * len(_COLUMNS))
        updates = ",".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:])
        self.conn.execute(
            f"INSERT INTO session ({','.join(_COLUMNS)}) VALUES ({marks}) "
            f"ON CONFLICT(session_id) DO UPDATE SET {updates}",
            [getattr(record, c) for c in _COLUMNS],
        )

    def records(self, status: str | None = None) -> list[SessionRecord]:
        sql, args = "SELECT * FROM session", ()
        if status:
            sql, args = sql + " WHERE status = ?", (status,)
        return [SessionRecord(**{k: r[k] for k in _COLUMNS}) for r in self.conn.execute(sql + " ORDER BY session_id", args)]

    def ids_to_revisit(self, upgrades: bool, stopped: bool = True) -> list[str]:
        """Sessions a pass must look at even if their rows did not move.

        Pending ones (settling; and, with `stopped`, those a failure or a stop left
        pending) and, when a model is configured, extractive fallback notes waiting for
        their upgrade.
        """
        sql = "SELECT session_id FROM session WHERE (status = 'pending'"
        sql += ")" if stopped else " AND last_error = '')"
        if upgrades:
            sql += " OR needs_upgrade = 1"
        return [row[0] for row in self.conn.execute(sql)]

    def project_dirs(self) -> set[str]:
        """The directories sessions ran in: where project memory trees may be."""
        return {row[0] for row in self.conn.execute("SELECT DISTINCT project_dir FROM session WHERE project_dir != ''")}

    def count_records(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM session").fetchone()[0]

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for status, n in self.conn.execute("SELECT status, COUNT(*) FROM session GROUP BY status"):
            counts[status] = n
        return counts

    # -- errors -----------------------------------------------------------------

    def log_error(self, message: str, session_id: str = "", now_ms: int | None = None) -> None:
        """Keep the last 200 errors for `memoryd status`."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        self.conn.execute(
            "INSERT INTO error_log (time, session_id, message) VALUES (?, ?, ?)", (now_ms, session_id, message)
        )
        self.conn.execute("DELETE FROM error_log WHERE id <= (SELECT MAX(id) FROM error_log) - 200")

    def recent_errors(self, limit: int = 5) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT time, session_id, message FROM error_log ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()

    # -- model spend --------------------------------------------------------------

    def spend(self, day: str) -> tuple[int, int]:
        """Return (calls, tokens) spent on `day` (YYYY-MM-DD)."""
        row = self.conn.execute("SELECT calls, tokens FROM spend WHERE day = ?", (day,)).fetchone()
        return (row[0], row[1]) if row else (0, 0)

    def add_spend(self, day: str, calls: int, tokens: int) -> None:
        self.conn.execute(
            "INSERT INTO spend (day, calls, tokens) VALUES (?, ?, ?) ON CONFLICT(day) DO UPDATE SET "
            "calls = calls + excluded.calls, tokens = tokens + excluded.tokens",
            (day, calls, tokens),
        )
