"""The outbox in the state database: what a sink still has to do, and what it has done.

At-least-once: an entry leaves the outbox only after the server confirmed it, in the
same transaction that records the delivery. Idempotent by content hash: a document whose
delivered hash equals its current one is never queued again, and a newer version replaces
a queued older one (one pending operation per document). It survives restarts and
kill -9 because it is SQLite (WAL), committed before anything is sent.
"""

from __future__ import annotations

import fcntl
import json
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.scrub import redact
from daemon.state import StateDB

SINK = "cognee"
PUT, DELETE = "put", "delete"


@dataclass(frozen=True)
class Entry:
    """One queued operation."""

    doc_key: str
    op: str
    content_hash: str = ""
    content: str = ""
    filename: str = ""
    metadata: dict[str, Any] | None = None
    root: str = ""
    path: str = ""
    attempts: int = 0
    last_error: str = ""


@dataclass(frozen=True)
class Delivered:
    """A document the server holds, as memoryd last sent it."""

    doc_key: str
    content_hash: str
    remote_id: str
    dataset_id: str
    root: str
    path: str


def _now_ms() -> int:
    return int(time.time() * 1000)


def backoff_s(attempts: int, cap: float) -> float:
    """Seconds to wait after `attempts` failures in a row: doubling from 2 s, capped, jittered
    so that several daemons do not hammer a server that comes back all at once."""
    return min(cap, 2.0 * 2 ** max(0, attempts - 1)) * random.uniform(0.8, 1.0)


class Outbox:
    """The outbox and delivery records of one sink, on a StateDB connection."""

    def __init__(self, state: StateDB, sink: str = SINK) -> None:
        self.state = state
        self.conn = state.conn
        self.sink = sink

    # -- queueing -------------------------------------------------------------------

    def put(self, entry: Entry, now_ms: int | None = None) -> None:
        """Queue an operation, replacing whatever was queued for the same document. What is
        queued goes to a server: content, file name and metadata pass the scrubber first (a
        memory written by hand may hold what capture never saw)."""
        metadata = {k: redact(v) if isinstance(v, str) else v for k, v in (entry.metadata or {}).items()}
        with self.state.fence.guard():
            self._put(entry, metadata, now_ms)

    def _put(self, entry: Entry, metadata: dict[str, Any], now_ms: int | None) -> None:
        self.conn.execute(
            "INSERT INTO sink_outbox (sink, doc_key, op, content_hash, content, filename, metadata, root, path,"
            " queued_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(sink, doc_key) DO UPDATE SET op = excluded.op,"
            " content_hash = excluded.content_hash, content = excluded.content, filename = excluded.filename,"
            " metadata = excluded.metadata, root = excluded.root, path = excluded.path, queued_at = excluded.queued_at",
            (
                self.sink, entry.doc_key, entry.op, entry.content_hash, redact(entry.content), redact(entry.filename),
                json.dumps(metadata, ensure_ascii=False, sort_keys=True), entry.root, entry.path,
                _now_ms() if now_ms is None else now_ms,
            ),
        )

    def rescrub(self, dry_run: bool = False) -> int:
        """Apply the current secret rules to everything queued; return how many entries changed."""
        changed = []
        rows = self.conn.execute("SELECT rowid, content, filename, metadata FROM sink_outbox WHERE sink = ?", (self.sink,))
        for rowid, content, filename, metadata in rows.fetchall():
            meta = json.loads(metadata or "{}")
            clean_meta = json.dumps({k: redact(v) if isinstance(v, str) else v for k, v in meta.items()}, ensure_ascii=False, sort_keys=True)
            clean = (redact(content or ""), redact(filename or ""), clean_meta)
            if clean != (content or "", filename or "", json.dumps(meta, ensure_ascii=False, sort_keys=True)):
                changed.append((*clean, rowid))
        if not dry_run and changed:
            with self.state.fence.guard():
                self.conn.executemany("UPDATE sink_outbox SET content = ?, filename = ?, metadata = ? WHERE rowid = ?", changed)
        return len(changed)

    def rename_path(self, old: str, new: str) -> None:
        """A file was renamed (its name held a secret): queued and delivered records follow it."""
        with self.state.fence.guard():
            for table in ("sink_outbox", "sink_doc"):
                self.conn.execute(f"UPDATE {table} SET path = ? WHERE path = ? AND sink = ?", (new, old, self.sink))  # noqa: S608

    def drop(self, doc_key: str) -> None:
        with self.state.fence.guard():
            self.conn.execute("DELETE FROM sink_outbox WHERE sink = ? AND doc_key = ?", (self.sink, doc_key))

    def queued(self) -> dict[str, tuple[str, str]]:
        """doc key → (op, content hash) of everything queued."""
        rows = self.conn.execute("SELECT doc_key, op, content_hash FROM sink_outbox WHERE sink = ?", (self.sink,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def due(self, limit: int, now_ms: int | None = None) -> list[Entry]:
        """Entries whose backoff has passed, oldest first."""
        now_ms = _now_ms() if now_ms is None else now_ms
        rows = self.conn.execute(
            "SELECT * FROM sink_outbox WHERE sink = ? AND next_try_at <= ? ORDER BY queued_at, doc_key LIMIT ?",
            (self.sink, now_ms, limit),
        )
        return [
            Entry(r["doc_key"], r["op"], r["content_hash"], r["content"], r["filename"], json.loads(r["metadata"]),
                  r["root"], r["path"], r["attempts"], r["last_error"])
            for r in rows
        ]

    def next_due_ms(self) -> int | None:
        row = self.conn.execute("SELECT MIN(next_try_at) FROM sink_outbox WHERE sink = ?", (self.sink,)).fetchone()
        return row[0]

    def failed(self, entries: list[Entry], error: str, cap_s: float, now_ms: int | None = None) -> None:
        """Record a failed try: each entry waits longer before the next one."""
        now_ms = _now_ms() if now_ms is None else now_ms
        with self.state.transaction():
            for e in entries:
                wait_ms = int(backoff_s(e.attempts + 1, cap_s) * 1000)
                self.conn.execute(
                    "UPDATE sink_outbox SET attempts = attempts + 1, next_try_at = ?, last_error = ?"
                    " WHERE sink = ? AND doc_key = ? AND op = ? AND content_hash = ?",
                    (now_ms + wait_ms, error, self.sink, e.doc_key, e.op, e.content_hash),
                )
            self.state.set_meta(f"sink.{self.sink}.last_error", error)
            self.state.set_meta(f"sink.{self.sink}.last_error_at", str(now_ms))

    def retry_now(self) -> None:
        """Forget every backoff (a manual push means "try now")."""
        with self.state.fence.guard():
            self.conn.execute("UPDATE sink_outbox SET next_try_at = 0 WHERE sink = ?", (self.sink,))

    # -- confirmations ----------------------------------------------------------------

    def _done(self, e: Entry) -> None:
        # Only the version that was sent leaves the outbox: a newer one queued meanwhile stays.
        self.conn.execute(
            "DELETE FROM sink_outbox WHERE sink = ? AND doc_key = ? AND op = ? AND content_hash = ?",
            (self.sink, e.doc_key, e.op, e.content_hash),
        )

    def confirm_puts(self, entries: list[Entry], dataset_id: str, remote_ids: list[str]) -> None:
        now_ms = _now_ms()
        with self.state.transaction():
            for e, remote_id in zip(entries, remote_ids, strict=True):
                self.conn.execute(
                    "INSERT INTO sink_doc (sink, doc_key, content_hash, remote_id, dataset_id, root, path, delivered_at)"
                    " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(sink, doc_key) DO UPDATE SET"
                    " content_hash = excluded.content_hash, remote_id = excluded.remote_id,"
                    " dataset_id = excluded.dataset_id, root = excluded.root, path = excluded.path,"
                    " delivered_at = excluded.delivered_at",
                    (self.sink, e.doc_key, e.content_hash, remote_id, dataset_id, e.root, e.path, now_ms),
                )
                self._done(e)
            self._delivered(len(entries), now_ms)

    def confirm_delete(self, e: Entry) -> None:
        with self.state.transaction():
            self.conn.execute("DELETE FROM sink_doc WHERE sink = ? AND doc_key = ?", (self.sink, e.doc_key))
            self._done(e)
            self._delivered(1, _now_ms())

    def confirm_unchanged(self, e: Entry) -> None:
        """A put whose exact content the server already holds: nothing to send."""
        with self.state.transaction():
            self._done(e)

    def _delivered(self, count: int, now_ms: int) -> None:
        key = f"sink.{self.sink}.delivered_total"
        self.state.set_meta(key, str(int(self.state.get_meta(key, "0")) + count))
        self.state.set_meta(f"sink.{self.sink}.last_delivery", str(now_ms))
        self.state.set_meta(f"sink.{self.sink}.last_error", "")

    # -- delivery records -----------------------------------------------------------------

    def delivered(self) -> dict[str, Delivered]:
        rows = self.conn.execute("SELECT * FROM sink_doc WHERE sink = ?", (self.sink,))
        return {
            r["doc_key"]: Delivered(r["doc_key"], r["content_hash"], r["remote_id"], r["dataset_id"], r["root"], r["path"])
            for r in rows
        }

    def delivered_map(self, keys: list[str]) -> dict[str, Delivered]:
        found: dict[str, Delivered] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(
                f"SELECT * FROM sink_doc WHERE sink = ? AND doc_key IN ({marks})", [self.sink, *chunk]
            ):
                found[r["doc_key"]] = Delivered(
                    r["doc_key"], r["content_hash"], r["remote_id"], r["dataset_id"], r["root"], r["path"]
                )
        return found

    # -- figures --------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT COUNT(*), SUM(attempts > 0), MIN(queued_at) FROM sink_outbox WHERE sink = ?", (self.sink,)
        ).fetchone()
        docs = self.conn.execute("SELECT COUNT(*) FROM sink_doc WHERE sink = ?", (self.sink,)).fetchone()[0]
        meta = self.state.get_meta
        return {
            "queued": row[0],
            "retrying": row[1] or 0,
            "oldest_queued_ms": row[2],
            "documents": docs,
            "delivered_total": int(meta(f"sink.{self.sink}.delivered_total", "0")),
            "last_delivery_ms": int(meta(f"sink.{self.sink}.last_delivery", "0")) or None,
            "last_error": meta(f"sink.{self.sink}.last_error") or None,
            "last_error_ms": int(meta(f"sink.{self.sink}.last_error_at", "0")) or None,
            "cognify_run": meta(f"sink.{self.sink}.cognify_run") or None,
            "cognify_requested_ms": int(meta(f"sink.{self.sink}.cognify_at", "0")) or None,
        }


@contextmanager
def delivery_lock(state_dir: Path, blocking: bool) -> Iterator[bool]:
    """One deliverer at a time (the daemon's thread or `memoryd sink push`): yields whether
    this process holds the lock; without `blocking` it gives up at once."""
    path = state_dir / "sink.lock"
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
