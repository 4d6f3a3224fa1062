"""The state database: watermark, one record per session, model spend, recent errors.

Bookkeeping only: deleting it loses nothing a re-distill cannot rebuild. SQLite in WAL
mode so `memoryd status` can read while the daemon writes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from daemon.diskfull import immediate_transaction, raise_if_disk_full
from daemon.files import ensure_dir, private_file
from daemon.scrub import redact
from daemon.sqlscript import split_sql

# The sinks' outbox (daemon/sinks/outbox.py): what is still to deliver, and what was.
# One pending operation per document: a newer version replaces a queued older one.
SINK_OUTBOX = """
    CREATE TABLE IF NOT EXISTS sink_outbox (
        sink         TEXT NOT NULL,            -- 'cognee'
        doc_key      TEXT NOT NULL,            -- a note's session id, a memory's id
        op           TEXT NOT NULL,            -- put | delete
        content_hash TEXT NOT NULL DEFAULT '',
        content      TEXT NOT NULL DEFAULT '', -- the text as it was when queued
        filename     TEXT NOT NULL DEFAULT '',
        metadata     TEXT NOT NULL DEFAULT '{}',
        root         TEXT NOT NULL DEFAULT '',
        path         TEXT NOT NULL DEFAULT '',
        queued_at    INTEGER NOT NULL,
        attempts     INTEGER NOT NULL DEFAULT 0,
        next_try_at  INTEGER NOT NULL DEFAULT 0,  -- epoch ms: backoff after a failure
        last_error   TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (sink, doc_key)
    );
    CREATE TABLE IF NOT EXISTS sink_doc (
        sink         TEXT NOT NULL,
        doc_key      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        remote_id    TEXT NOT NULL,            -- Cognee's data id
        dataset_id   TEXT NOT NULL DEFAULT '',
        root         TEXT NOT NULL DEFAULT '',
        path         TEXT NOT NULL DEFAULT '',
        delivered_at INTEGER NOT NULL,
        PRIMARY KEY (sink, doc_key)
    );
"""

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
        status         TEXT NOT NULL DEFAULT 'pending',  -- capture.lifecycle.Status (the second migration renamed pending)
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
    # Explicit session states: "pending" meant settling, waiting to retry or held by a
    # stop, told apart by last_error and failed_hash. Now each has its name, and a retry
    # has its own time.
    """
    ALTER TABLE session ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;
    UPDATE session SET status = CASE
        WHEN last_error = '' THEN 'settling'
        WHEN failed_hash != '' THEN 'retry'
        ELSE 'held' END
    WHERE status = 'pending';
    """,
    SINK_OUTBOX,
)

@dataclass(slots=True)
class SessionRecord:
    """One session as memoryd last left it; what each status means is daemon.capture.lifecycle's."""

    session_id: str
    project_dir: str = ""
    title: str = ""
    max_updated: int = 0
    transcript_hash: str = ""
    note_path: str = ""
    status: str = "settling"
    attempts: int = 0
    failed_hash: str = ""
    last_error: str = ""
    distiller: str = ""
    prompt_version: str = ""
    needs_upgrade: int = 0
    time_done: int = 0
    retry_at: int = 0  # epoch ms: a `retry` session is not tried again before this


_COLUMNS = tuple(SessionRecord.__dataclass_fields__)
_PUT_SQL = (
    f"INSERT INTO session ({','.join(_COLUMNS)}) VALUES ({','.join('?' * len(_COLUMNS))}) "
    f"ON CONFLICT(session_id) DO UPDATE SET {','.join(f'{c} = excluded.{c}' for c in _COLUMNS[1:])}"
)
# A pass that did nothing refreshes `last_pass` at most this often (`memoryd status` shows it).
PASS_MARK_MS = 60_000


def move_aside(path: Path) -> Path:
    """Rename a broken SQLite file (and its -wal/-shm) out of the way; return the new name."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.broken-{stamp}")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(aside.with_name(aside.name + suffix))
    path.replace(aside)
    return aside


class StateFenced(Exception):
    """A write after the daemon's stop: nothing may be written once it logs `stopped`."""


class WriteFence:
    """Shared by every connection of one daemon; `close()` ends all their writes.

    A write in progress when the fence closes finishes first (they hold the same lock),
    so once `close()` returns no write is under way and none can start.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False

    def close(self) -> None:
        with self._lock:
            self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    @contextmanager
    def guard(self) -> Iterator[None]:
        with self._lock:
            if self._closed:
                raise StateFenced("memoryd is stopping: nothing more is written")
            yield


class StateUnusable(Exception):
    """state.db is not a database, or not memoryd's: the message says which file and why."""


class StateDB:
    """memoryd's own SQLite file. One instance per thread that uses it."""

    def __init__(self, path: Path, fence: WriteFence | None = None) -> None:
        ensure_dir(path.parent)
        self.path = path
        self.fence = fence or WriteFence()
        # Private before SQLite opens it: its -wal and -shm files copy the database's mode.
        private_file(path)
        self.conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA busy_timeout=10000")
            self._migrate()
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise_if_disk_full(exc, path)  # a full disk is no reason to move the file aside
            raise StateUnusable(f"{path}: not a memoryd state database ({exc})") from exc
        except StateUnusable:
            self.conn.close()
            raise

    def _check_schema(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(session)")}
        missing = [c for c in _COLUMNS if c not in columns]
        if version != len(MIGRATIONS) or missing:
            what = f"schema version {version}, memoryd knows {len(MIGRATIONS)}"
            raise StateUnusable(
                f"{self.path}: not this memoryd's state database ({what}; missing {missing or 'nothing'})"
            )

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.transaction():
                for statement in split_sql(script):
                    self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version={number}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.fence.guard(), immediate_transaction(self.conn, self.path) as conn:
            yield conn

    def close(self) -> None:
        self.conn.close()

    @classmethod
    def open_or_rebuild(cls, path: Path, fence: WriteFence | None = None) -> tuple[StateDB, str]:
        """Open `path`; a corrupt or foreign file is moved aside and a fresh one made.

        Returns the database and, when it had to be rebuilt, what happened (for the log
        and `memoryd status`, which reads it back from the meta key "rebuilt").
        """
        try:
            return cls(path, fence), ""
        except StateUnusable as exc:
            aside = move_aside(path)
            note = f"{exc}; moved to {aside.name} and started afresh (sessions are distilled again)"
            db = cls(path, fence)
            db.set_meta("rebuilt", note)
            return db, note

    # -- meta ---------------------------------------------------------------

    def get_meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        """Store `value` under `key`; a value already stored is not written again (a pass
        with nothing new then writes nothing: no write lock, no WAL frame)."""
        with self.fence.guard():
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row is not None and row[0] == value:
                return
            self.conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def mark_pass(self, now_ms: int, worked: bool) -> None:
        """Record when a pass ran, for `memoryd status`: after a pass that did work, and
        otherwise at most once every PASS_MARK_MS, so the daemon's idle passes write nothing."""
        if worked or now_ms - int(self.get_meta("last_pass", "0")) >= PASS_MARK_MS:
            self.set_meta("last_pass", str(now_ms))
        # The pass read the source well: an error recorded before is over, whoever recorded it.
        self.set_meta("source_error", "")

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
        self.put_many([record])

    def put_many(self, records: Iterable[SessionRecord]) -> None:
        """Insert or update records with one statement (a pass's batch: one executemany)."""
        with self.fence.guard():
            self.conn.executemany(
                _PUT_SQL,
                # Titles and errors are text from sessions and servers: scrubbed on the way in.
                ([redact(getattr(r, c)) if c in ("title", "last_error") else getattr(r, c) for c in _COLUMNS] for r in records),
            )

    def rescrub(self, dry_run: bool = False) -> int:
        """Apply the current secret rules to the text already stored (session titles and
        errors, the error log, the hold); return how many values changed."""
        found = [
            (table, column, rowid, clean)
            for table, column in (("session", "title"), ("session", "last_error"), ("error_log", "message"))
            for rowid, value in self.conn.execute(f"SELECT rowid, {column} FROM {table}")  # noqa: S608 - fixed names
            if isinstance(value, str) and (clean := redact(value)) != value
        ]
        hold = json.loads(self.get_meta("hold") or "{}")  # capture.lifecycle's Hold: its strings are scrubbed
        clean_hold = {key: redact(value) if isinstance(value, str) else value for key, value in hold.items()}
        stale_hold = clean_hold != hold
        if not dry_run:
            with self.fence.guard():
                for table, column, rowid, clean in found:
                    self.conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (clean, rowid))  # noqa: S608
            if stale_hold:
                self.set_meta("hold", json.dumps(clean_hold))
        return len(found) + stale_hold

    def rename_note(self, old: str, new: str) -> None:
        """A note file was renamed (its name held a secret): its sessions follow it."""
        with self.fence.guard():
            self.conn.execute("UPDATE session SET note_path = ? WHERE note_path = ?", (new, old))

    def records(self, status: str | None = None) -> list[SessionRecord]:
        sql, args = "SELECT * FROM session", ()
        if status:
            sql, args = sql + " WHERE status = ?", (status,)
        return [SessionRecord(**{k: r[k] for k in _COLUMNS}) for r in self.conn.execute(sql + " ORDER BY session_id", args)]

    def session_ids(
        self, statuses: Iterable[str], retry: str = "", retry_due_by: int | None = None, needs_upgrade: bool = False
    ) -> list[str]:
        """Ids of the sessions in one of `statuses`; in status `retry` with `retry_at` at
        or before `retry_due_by` (any, when None); or, with `needs_upgrade`, flagged so."""
        wanted = list(statuses)
        clauses = [f"status IN ({','.join('?' * len(wanted))})"] if wanted else []
        args: list[object] = [*wanted]
        if retry:
            clauses.append("(status = ? AND retry_at <= ?)" if retry_due_by is not None else "status = ?")
            args += [retry, retry_due_by] if retry_due_by is not None else [retry]
        if needs_upgrade:
            clauses.append("needs_upgrade = 1")
        if not clauses:
            return []
        sql = "SELECT session_id FROM session WHERE " + " OR ".join(clauses)
        return [row[0] for row in self.conn.execute(sql, args)]

    def soonest_retry_at(self, status: str, after_ms: int) -> int | None:
        """The smallest `retry_at` later than `after_ms` among sessions in `status`, or None."""
        sql = "SELECT MIN(retry_at) FROM session WHERE status = ? AND retry_at > ?"
        return self.conn.execute(sql, (status, after_ms)).fetchone()[0]

    def project_dirs(self) -> set[str]:
        """The directories sessions ran in: where project memory trees may be."""
        return {row[0] for row in self.conn.execute("SELECT DISTINCT project_dir FROM session WHERE project_dir != ''")}

    def count_records(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM session").fetchone()[0]

    def counts(self) -> dict[str, int]:
        """Sessions per stored status (statuses no session has are absent)."""
        return dict(self.conn.execute("SELECT status, COUNT(*) FROM session GROUP BY status").fetchall())

    # -- errors -----------------------------------------------------------------

    def log_error(self, message: str, session_id: str = "", now_ms: int | None = None) -> None:
        """Keep the last 200 errors for `memoryd status`."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        with self.fence.guard():
            self.conn.execute(
                "INSERT INTO error_log (time, session_id, message) VALUES (?, ?, ?)", (now_ms, session_id, redact(message))
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
        with self.fence.guard():
            self.conn.execute(
                "INSERT INTO spend (day, calls, tokens) VALUES (?, ?, ?) ON CONFLICT(day) DO UPDATE SET "
                "calls = calls + excluded.calls, tokens = tokens + excluded.tokens",
                (day, calls, tokens),
            )
