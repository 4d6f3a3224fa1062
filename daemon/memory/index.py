"""The search index: SQLite FTS5 with BM25 over memoryd's own token stream.

Derived data only: `rebuild` recreates it from the trees, and it rebuilds itself when
the schema or the tokenizer changes. It is kept current incrementally: a file is
re-read only when its stat signature moved, and re-indexed only when its content hash
did. The CLI, the daemon and the MCP server share it, so it runs in WAL mode with a
busy timeout, and writes happen in short batches.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple

from daemon.files import ensure_dir
from daemon.memory import tokenize
from daemon.memory.tree import (
    Memory,
    MemoryFileError,
    MemoryRoot,
    Problem,
    ScanCache,
    classify_path,
    content_hash,
    format_time,
    list_memory_files,
    log_problem,
    parse_time,
    read_memory,
    resolve_in_root,
    title_key,
)
from daemon.scrub import redact

log = logging.getLogger("memoryd.memory.index")

SCHEMA_VERSION = 3  # 3: previews skip a session note's provenance line
PREVIEW_CHARS = 500
MAX_TERM_SHARE = 0.2  # free-text search skips words held by more than this share of memories
# Files parsed and written per transaction: keeps the write lock short for other processes.
BATCH = 250
# Field weights for BM25: a title hit counts most, then description and tags, then body.
WEIGHTS = (4.0, 2.0, 2.0, 1.0)
# How much a recall counter lifts a score: a small, logarithmic nudge, never a takeover.
HIT_BOOST = 0.05

_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE root (path TEXT PRIMARY KEY, scope TEXT NOT NULL, synced_at REAL NOT NULL DEFAULT 0);
-- One row per memory: the metadata recall filters and sorts on. Kept narrow so that
-- joining thousands of full-text matches to it stays cheap.
CREATE TABLE doc (
    rowid       INTEGER PRIMARY KEY,
    path        TEXT NOT NULL UNIQUE,
    root        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    category    TEXT NOT NULL,
    id          TEXT NOT NULL,
    title       TEXT NOT NULL,
    title_key   TEXT NOT NULL,
    description TEXT NOT NULL,
    kind        TEXT NOT NULL,
    tags        TEXT NOT NULL,      -- JSON list
    scenarios   TEXT NOT NULL,      -- JSON list
    hard_rule   INTEGER NOT NULL,
    created     TEXT,               -- ISO, UTC
    updated     TEXT,
    expires     TEXT,
    expires_ts  REAL,               -- epoch seconds, for filtering
    sort_ts     REAL NOT NULL,      -- updated, else created, else mtime: "newest first"
    mtime       REAL NOT NULL,
    hash        TEXT NOT NULL,
    sig         TEXT NOT NULL       -- stat signature when last read; '' while too fresh to trust
);
CREATE INDEX doc_root_title ON doc (root, category, title_key);
CREATE INDEX doc_id ON doc (id);
-- The few memories ROOT.md lists, found without reading the whole tree's rows.
CREATE INDEX doc_listed ON doc (root) WHERE scenarios != '[]' OR hard_rule = 1;
-- The preview and the token streams, same rowid as doc: the FTS table's external content.
CREATE TABLE doc_text (
    rowid INTEGER PRIMARY KEY,
    preview TEXT NOT NULL,
    t_title TEXT NOT NULL, t_description TEXT NOT NULL, t_tags TEXT NOT NULL, t_body TEXT NOT NULL
);
CREATE VIRTUAL TABLE doc_fts USING fts5(
    t_title, t_description, t_tags, t_body,
    content='doc_text', content_rowid='rowid',
    tokenize="unicode61 remove_diacritics 2 tokenchars '_-./'"
);
CREATE TRIGGER doc_ad AFTER DELETE ON doc BEGIN
    DELETE FROM doc_text WHERE rowid = old.rowid;
END;
CREATE TRIGGER doc_text_ai AFTER INSERT ON doc_text BEGIN
    INSERT INTO doc_fts (rowid, t_title, t_description, t_tags, t_body)
    VALUES (new.rowid, new.t_title, new.t_description, new.t_tags, new.t_body);
END;
CREATE TRIGGER doc_text_ad AFTER DELETE ON doc_text BEGIN
    INSERT INTO doc_fts (doc_fts, rowid, t_title, t_description, t_tags, t_body)
    VALUES ('delete', old.rowid, old.t_title, old.t_description, old.t_tags, old.t_body);
END;
CREATE TRIGGER doc_text_au AFTER UPDATE ON doc_text BEGIN
    INSERT INTO doc_fts (doc_fts, rowid, t_title, t_description, t_tags, t_body)
    VALUES ('delete', old.rowid, old.t_title, old.t_description, old.t_tags, old.t_body);
    INSERT INTO doc_fts (rowid, t_title, t_description, t_tags, t_body)
    VALUES (new.rowid, new.t_title, new.t_description, new.t_tags, new.t_body);
END;
-- Files skipped or partly read; kind 'file' (from parsing) or 'tree' (symlinks, folders).
CREATE TABLE problem (
    path    TEXT NOT NULL,
    root    TEXT NOT NULL,
    kind    TEXT NOT NULL,
    reason  TEXT NOT NULL,
    skipped INTEGER NOT NULL,
    sig     TEXT NOT NULL DEFAULT '',
    seen_at REAL NOT NULL
);
CREATE INDEX problem_root ON problem (root, path);
INSERT INTO meta VALUES ('schema', '{SCHEMA_VERSION}'), ('tokenizer', '{tokenize.TOKENIZER_VERSION}');
"""

_DOC_COLUMNS = (
    "path, root, scope, category, id, title, title_key, description, kind, tags, scenarios, "
    "hard_rule, created, updated, expires, expires_ts, sort_ts, mtime, hash, sig"
)
_TEXT_COLUMNS = "preview, t_title, t_description, t_tags, t_body"
_SELECT = (
    "d.path, d.root, d.scope, d.category, d.id, d.title, d.description, d.kind, d.tags, "
    "d.scenarios, d.hard_rule, d.created, d.updated, d.expires, d.mtime, d.hash, d.sort_ts"
)


class SearchIndexError(Exception):
    """The search index cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Hit:
    """One search result: the memory (without body), its preview and its final score."""

    memory: Memory
    preview: str
    score: float


@dataclass(frozen=True)
class SearchResult:
    """Ranked hits and how they were found: every term ('strict'), any prefix, or not at all."""

    hits: list[Hit]
    mode: Literal["strict", "prefix", "none"]
    terms: list[str]


@dataclass(frozen=True)
class SyncReport:
    """How many entries a sync added, changed or removed, and the categories they are in."""

    changed: int
    categories: set[str]


class IndexEntry(NamedTuple):
    """What compiling needs of a memory, read from the index without parsing its file."""

    category: str
    filename: str
    title: str
    title_key: str
    description: str
    tags: tuple[str, ...]
    scenarios: tuple[str, ...]
    hard_rule: bool

    def relative_path(self) -> str:
        return f"{self.category}/{self.filename}"


def _json_list(text: str) -> tuple[str, ...]:
    return () if text == "[]" else tuple(json.loads(text))


def _signature_text(st: os.stat_result) -> str:
    """Return the stat signature (see tree.stat_signature) as the text stored per file."""
    return f"{st.st_mtime_ns},{st.st_ctime_ns},{st.st_size},{st.st_ino}"


def _trusted(signature: str, mtime_ns: int, now_ns: int) -> str:
    """Return the signature to store: empty while the file is too fresh to trust its stat.

    A file rewritten with the same size within the clock's granularity keeps its
    mtime; storing no signature for recent files makes the next sync hash them again.
    """
    return signature if mtime_ns < now_ns - ScanCache.RACY_NS else ""


def preview_of(body: str) -> str:
    """Return the first PREVIEW_CHARS characters of a body, marked when cut.

    A session note's provenance line (`> Source: OpenCode session …`) repeats what the
    result line already says, so the preview starts after it, with the content.
    """
    body = body.strip()
    if body.startswith("> Source: "):
        body = body.split("\n", 1)[1].strip() if "\n" in body else ""
    return body if len(body) <= PREVIEW_CHARS else body[:PREVIEW_CHARS].rstrip() + "…"


class SearchIndex:
    """The FTS5 index over every known memory tree, at `paths.index_db`.

    One object per thread at a time (it may be created on one thread and used on
    another); separate processes each open their own.
    """

    def __init__(self, db_path: Path, busy_timeout_ms: int = 5000) -> None:
        self.db_path = Path(db_path)
        self._vocab = False  # the temp fts5vocab table exists on this connection
        ensure_dir(self.db_path.parent)
        try:
            self._db = sqlite3.connect(
                self.db_path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise SearchIndexError(
                f"search index {self.db_path} is unusable ({exc}); delete it and run `memoryd reindex`"
            ) from exc

    # -- life cycle --------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front, so two writers queue on the busy
        # timeout instead of failing half-way with SQLITE_BUSY.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _format(self) -> tuple[str | None, str | None] | None:
        """Return the (schema, tokenizer) versions the file holds; None for an empty file."""
        if not self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
            return None
        meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        return meta.get("schema"), meta.get("tokenizer")

    def _migrate(self) -> None:
        wanted = (str(SCHEMA_VERSION), str(tokenize.TOKENIZER_VERSION))
        # Checked with a plain read first: opening the index (every recall does) must
        # not wait for the write lock another process may hold.
        if self._format() == wanted:
            return
        with self._write() as db:
            current = self._format()
            if current == wanted:
                return  # another process created it meanwhile
            if current is not None:
                log.info("index.rebuilding", extra={"reason": f"format changed ({current})", "db": str(self.db_path)})
            self._drop_all(db)
            self._create(db)

    def _create(self, db: sqlite3.Connection) -> None:
        # executescript() would commit our transaction; run the statements one by one.
        for statement in _split_sql(_SCHEMA):
            db.execute(statement)

    @staticmethod
    def _drop_all(db: sqlite3.Connection) -> None:
        # Indexes and triggers go with their tables; FTS shadow tables with doc_fts.
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'doc_fts_%'"
        ).fetchall():
            db.execute(f'DROP TABLE IF EXISTS "{name}"')

    # -- roots -------------------------------------------------------------------------

    def _register(self, db: sqlite3.Connection, root: MemoryRoot) -> None:
        db.execute(
            "INSERT INTO root (path, scope, synced_at) VALUES (?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET scope = excluded.scope, synced_at = excluded.synced_at",
            (root.key, root.scope, time.time()),
        )

    def known_roots(self) -> list[MemoryRoot]:
        """Return every root this index has seen (existing or not)."""
        return [MemoryRoot(Path(p), s) for p, s in self._db.execute("SELECT path, scope FROM root ORDER BY path")]

    def knows(self, root: MemoryRoot) -> bool:
        """True when this root has been synced at least once."""
        return self._db.execute("SELECT 1 FROM root WHERE path = ?", (root.key,)).fetchone() is not None

    def forget_root(self, root: MemoryRoot) -> int:
        """Drop a root and its entries from the index; return how many entries went."""
        with self._write() as db:
            count = db.execute("DELETE FROM doc WHERE root = ?", (root.key,)).rowcount
            db.execute("DELETE FROM problem WHERE root = ?", (root.key,))
            db.execute("DELETE FROM root WHERE path = ?", (root.key,))
        return count

    def _root_of(self, path: Path) -> MemoryRoot:
        candidate = str(Path(path).parent.parent)
        row = self._db.execute("SELECT path, scope FROM root WHERE path = ?", (candidate,)).fetchone()
        if row is None:
            raise ValueError(f"{path} is not in a memory tree this index knows; sync its root first")
        return MemoryRoot(Path(row[0]), row[1])

    # -- writing -----------------------------------------------------------------------

    @staticmethod
    def _rows(memory: Memory, signature: str) -> tuple[tuple, tuple]:
        """Return the doc row and the doc_text row of a memory, secrets redacted: a key
        pasted into a hand-written memory must not be copied into the index too."""
        expires = memory.expires
        title, description, body = redact(memory.title), redact(memory.description), redact(memory.body)
        tags = tuple(redact(tag) for tag in memory.tags)
        doc = (
            str(memory.path),
            memory.root.key,
            memory.root.scope,
            memory.category,
            memory.id,
            title,
            title_key(title),
            description,
            memory.kind,
            json.dumps(list(tags), ensure_ascii=False),
            json.dumps(list(memory.scenarios), ensure_ascii=False),
            int(memory.hard_rule),
            format_time(memory.created) if memory.created else None,
            format_time(memory.updated) if memory.updated else None,
            format_time(expires) if expires else None,
            expires.timestamp() if expires else None,
            memory.newest.timestamp(),
            memory.mtime,
            memory.content_hash,
            signature,
        )
        text = (
            preview_of(body),
            tokenize.token_stream(title),
            tokenize.token_stream(description),
            tokenize.token_stream(" ".join((*tags, memory.kind))),
            tokenize.token_stream(body),
        )
        return doc, text

    @staticmethod
    def _upsert(db: sqlite3.Connection, rows: Sequence[tuple[tuple, tuple]]) -> None:
        doc_updates = ", ".join(f"{c} = excluded.{c}" for c in (c.strip() for c in _DOC_COLUMNS.split(",")[1:]))
        text_updates = ", ".join(f"{c} = excluded.{c}" for c in (c.strip() for c in _TEXT_COLUMNS.split(",")))
        doc_sql = (
            f"INSERT INTO doc ({_DOC_COLUMNS}) VALUES ({', '.join('?' * 20)}) "
            f"ON CONFLICT(path) DO UPDATE SET {doc_updates} RETURNING rowid"
        )
        # An upsert, never INSERT OR REPLACE: REPLACE's implicit delete fires no trigger
        # and would leave the old tokens in the full-text index.
        text_sql = (
            f"INSERT INTO doc_text (rowid, {_TEXT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT(rowid) DO UPDATE SET {text_updates}"
        )
        for doc, text in rows:
            rowid = db.execute(doc_sql, doc).fetchone()[0]
            db.execute(text_sql, (rowid, *text))

    @staticmethod
    def _record_problems(
        db: sqlite3.Connection, root: MemoryRoot, path: Path, problems: Sequence[Problem], signature: str
    ) -> None:
        db.execute("DELETE FROM problem WHERE path = ? AND kind = 'file'", (str(path),))
        db.executemany(
            "INSERT INTO problem (path, root, kind, reason, skipped, sig, seen_at) VALUES (?, ?, 'file', ?, ?, ?, ?)",
            [(str(p.path), root.key, p.reason, int(p.skipped), signature, time.time()) for p in problems],
        )

    def sync_root(self, root: MemoryRoot) -> int:
        """Bring one root's entries up to date; return how many were added, changed or removed."""
        return self.sync_root_report(root).changed

    def sync_root_report(self, root: MemoryRoot) -> SyncReport:
        """Bring one root's entries up to date; say how many changed and in which categories.

        The categories let a caller recompile only those index.md files:
        `compile_root(root, index=index, categories=report.categories)`.
        """
        files, tree_problems, _ = list_memory_files(root)
        now_ns = time.time_ns()
        stored: dict[str, str] = dict(self._db.execute("SELECT path, sig FROM doc WHERE root = ?", (root.key,)))
        broken: dict[str, str] = dict(
            self._db.execute(
                "SELECT path, sig FROM problem WHERE root = ? AND kind = 'file' AND skipped = 1", (root.key,)
            )
        )
        present: set[str] = set()
        pending: list[tuple[Path, str]] = []
        for path, st in files:
            present.add(path)
            signature = _signature_text(st)
            if stored.get(path) == signature:
                continue  # unchanged since it was last read (stored only once trustworthy)
            if path not in stored and broken.get(path) == signature:
                continue  # still the same broken file: reported already
            pending.append((Path(path), _trusted(signature, st.st_mtime_ns, now_ns)))

        gone = [p for p in stored if p not in present]
        fixed = [p for p in broken if p not in present]
        tree_now = sorted((str(p.path), p.reason) for p in tree_problems)
        tree_before = [
            tuple(r)
            for r in self._db.execute(
                "SELECT path, reason FROM problem WHERE root = ? AND kind = 'tree' ORDER BY path, reason", (root.key,)
            )
        ]
        registered = self.knows(root)
        # Most syncs find nothing: then take no write lock at all (the daemon may hold it).
        if gone or fixed or tree_now != tree_before or not registered:
            with self._write() as db:
                self._register(db, root)
                db.execute("DELETE FROM problem WHERE root = ? AND kind = 'tree'", (root.key,))
                db.executemany(
                    "INSERT INTO problem (path, root, kind, reason, skipped, seen_at) VALUES (?, ?, 'tree', ?, 1, ?)",
                    [(path, root.key, reason, time.time()) for path, reason in tree_now],
                )
                db.executemany("DELETE FROM doc WHERE path = ?", [(p,) for p in gone])
                db.executemany("DELETE FROM problem WHERE path = ? AND kind = 'file'", [(p,) for p in fixed])
        changed = len(gone)
        for start in range(0, len(pending), BATCH):
            changed += self._index_batch(root, pending[start : start + BATCH])
        if changed:
            log.info("index.synced", extra={"root": str(root.path), "changed": changed})
        touched = {Path(p).parent.name for p in gone} | {p.parent.name for p, _ in pending}
        return SyncReport(changed, touched if changed else set())

    def _index_batch(self, root: MemoryRoot, batch: Sequence[tuple[Path, str]]) -> int:
        """Re-read a batch of files whose stat moved; re-index those whose content did."""
        marks = ", ".join("?" * len(batch))
        hashes: dict[str, str] = dict(
            self._db.execute(f"SELECT path, hash FROM doc WHERE path IN ({marks})", [str(p) for p, _ in batch])
        )
        # Parse outside the transaction: only the writes hold the lock.
        rows: list[tuple[tuple, tuple]] = []
        touched: list[tuple[str, str]] = []
        problems: list[tuple[Path, list[Problem], str]] = []
        removed: list[str] = []
        for path, signature in batch:
            key = str(path)
            try:
                data_hash = content_hash(path.read_bytes())
                if hashes.get(key) == data_hash:
                    touched.append((signature, key))
                    continue
                memory, warnings = read_memory(path, root)
            except FileNotFoundError:
                removed.append(key)
                continue
            except MemoryFileError as exc:
                problems.append((path, [Problem(path, str(exc))], signature))
                if key in hashes:
                    removed.append(key)
                continue
            except OSError as exc:
                problems.append((path, [Problem(path, f"unreadable: {exc.strerror or exc}")], signature))
                continue
            rows.append(self._rows(memory, signature))
            problems.append((path, warnings, signature))
        with self._write() as db:
            if rows:
                self._upsert(db, rows)
            db.executemany("UPDATE doc SET sig = ? WHERE path = ?", touched)
            db.executemany("DELETE FROM doc WHERE path = ?", [(p,) for p in removed])
            for path, found, signature in problems:
                self._record_problems(db, root, path, found, signature)
        for _, found, _ in problems:
            for problem in found:
                log_problem(problem)
        return len(rows) + len(removed)

    def update_file(self, path: Path, root: MemoryRoot | None = None) -> bool:
        """Re-index one file after a change; return whether the index changed.

        A path that no longer exists (or is no memory) is removed instead.
        """
        path = Path(path)
        root = root or self._root_of(path)
        if classify_path(root, path) != "memory":
            return False
        if not os.path.lexists(path):
            return self.remove_file(path)
        try:
            resolve_in_root(path, root.path)
            st = path.stat()
        except MemoryFileError:
            # A link out of the tree or a loop: not indexed; sync_root reports it.
            with self._write() as db:
                return db.execute("DELETE FROM doc WHERE path = ?", (str(path),)).rowcount > 0
        except OSError:
            return self.remove_file(path)
        if not self.knows(root):
            with self._write() as db:
                self._register(db, root)
        signature = _trusted(_signature_text(st), st.st_mtime_ns, time.time_ns())
        return self._index_batch(root, [(path, signature)]) > 0

    def remove_file(self, path: Path) -> bool:
        """Drop one file's entry (and its problems); return whether there was one."""
        with self._write() as db:
            count = db.execute("DELETE FROM doc WHERE path = ?", (str(path),)).rowcount
            db.execute("DELETE FROM problem WHERE path = ?", (str(path),))
        return count > 0

    def rebuild(self, roots: Iterable[MemoryRoot]) -> int:
        """Drop everything and index `roots` from scratch; return the number of entries."""
        with self._write() as db:
            self._drop_all(db)
            self._create(db)
        for root in roots:
            self.sync_root(root)
        return self.count()

    # -- reading -----------------------------------------------------------------------

    def count(self, roots: Sequence[MemoryRoot] | None = None) -> int:
        """Return the number of indexed memories (in `roots`, if given)."""
        if roots is None:
            return self._db.execute("SELECT count(*) FROM doc").fetchone()[0]
        marks = ", ".join("?" * len(roots))
        sql = f"SELECT count(*) FROM doc WHERE root IN ({marks})"
        return self._db.execute(sql, [r.key for r in roots]).fetchone()[0]

    def _memory(self, row: sqlite3.Row, roots: dict[str, MemoryRoot]) -> Memory:
        root = roots.get(row["root"])
        if root is None:
            root = roots[row["root"]] = MemoryRoot(Path(row["root"]), row["scope"])
        return Memory(
            path=Path(row["path"]),
            root=root,
            category=row["category"],
            id=row["id"],
            title=row["title"],
            description=row["description"],
            kind=row["kind"],
            tags=_json_list(row["tags"]),
            scenarios=_json_list(row["scenarios"]),
            hard_rule=bool(row["hard_rule"]),
            created=parse_time(row["created"]),
            updated=parse_time(row["updated"]),
            expires=parse_time(row["expires"]),
            content_hash=row["hash"],
            mtime=row["mtime"],
        )

    def _select(self, where: str, params: Sequence[object], order: str = "d.sort_ts DESC, d.path") -> list[Memory]:
        roots: dict[str, MemoryRoot] = {}
        rows = self._db.execute(f"SELECT {_SELECT} FROM doc d WHERE {where} ORDER BY {order}", params)
        return [self._memory(row, roots) for row in rows]

    def memories(self, root: MemoryRoot) -> list[Memory]:
        """Return every indexed memory of a root (expired ones included), newest first."""
        return self._select("d.root = ?", (root.key,))

    def entries(self, root: MemoryRoot, *, category: str | None = None, listed_only: bool = False) -> list[IndexEntry]:
        """Return what compile needs for the memories of a root (expired ones included).

        `category` keeps one category; `listed_only` keeps those ROOT.md lists (with
        scenarios or a hard rule). Cheap enough for every file event of a large tree.
        """
        where, params = "root = ?", [root.key]
        if category is not None:
            where += " AND category = ?"
            params.append(category)
        if listed_only:
            where += " AND (scenarios != '[]' OR hard_rule = 1)"
        rows = self._db.execute(
            f"SELECT category, path, title, title_key, description, tags, scenarios, hard_rule FROM doc WHERE {where}",
            params,
        )
        return [
            IndexEntry(c, p[p.rfind("/") + 1 :], t, k, d, _json_list(tags), _json_list(sc), bool(h))
            for c, p, t, k, d, tags, sc, h in rows
        ]

    def category_counts(self, root: MemoryRoot) -> dict[str, int]:
        """Return category → number of memories, for one root."""
        sql = "SELECT category, count(*) FROM doc WHERE root = ? GROUP BY category"
        return dict(self._db.execute(sql, (root.key,)))

    def tag_counts(self, root: MemoryRoot, categories: Iterable[str]) -> dict[str, dict[str, int]]:
        """Return category → tag → number of memories carrying it, for some categories of a root."""
        wanted = list(categories)
        counts: dict[str, dict[str, int]] = {c: {} for c in wanted}
        if not wanted:
            return counts
        marks = ", ".join("?" * len(wanted))
        for category, tag, count in self._db.execute(
            "SELECT d.category, j.value, count(*) FROM doc d, json_each(d.tags) j "
            f"WHERE d.root = ? AND d.category IN ({marks}) GROUP BY d.category, j.value",
            (root.key, *wanted),
        ):
            counts[category][str(tag)] = count
        return counts

    def find_by_id(self, memory_id: str) -> list[Memory]:
        """Return the memories with this id, in any root (normally one)."""
        return self._select("d.id = ?", (memory_id,))

    def find_by_title(self, root: MemoryRoot, title: str) -> list[Memory]:
        """Return the memories of a root whose title is `title` (case and spacing ignored)."""
        return self._select("d.root = ? AND d.title_key = ?", (root.key, title_key(title)))

    def problems(self, root: MemoryRoot | None = None) -> list[Problem]:
        """Return the files skipped or partly read at the last sync (of `root`, or all)."""
        sql = "SELECT path, reason, skipped FROM problem"
        params: tuple = ()
        if root is not None:
            sql += " WHERE root = ?"
            params = (root.key,)
        return [Problem(Path(p), r, bool(s)) for p, r, s in self._db.execute(sql + " ORDER BY path", params)]

    @staticmethod
    def _visible(roots: Sequence[MemoryRoot], now: datetime, keep_global_hard_rules: bool) -> tuple[str, list[object]]:
        """SQL filter: in `roots`, not expired, and no global entry a project entry shadows."""
        marks = ", ".join("?" * len(roots))
        where = f"d.root IN ({marks}) AND (d.expires_ts IS NULL OR d.expires_ts > ?)"
        params: list[object] = [r.key for r in roots]
        params.append(now.timestamp())
        projects = [r.key for r in roots if r.scope == "project"]
        if projects:
            # Project wins: a global memory with the same category and title as one in
            # the caller's project is hidden (global hard rules stay, where asked).
            pmarks = ", ".join("?" * len(projects))
            hard = " AND d.hard_rule = 0" if keep_global_hard_rules else ""
            where += (
                f" AND NOT (d.scope = 'global'{hard} AND EXISTS (SELECT 1 FROM doc p WHERE p.root IN ({pmarks})"
                " AND p.category = d.category AND p.title_key = d.title_key"
                " AND (p.expires_ts IS NULL OR p.expires_ts > ?)))"
            )
            params.extend(projects)
            params.append(now.timestamp())
        return where, params

    def visible(
        self,
        roots: Sequence[MemoryRoot],
        now: datetime | None = None,
        kind: str | None = None,
        keep_global_hard_rules: bool = True,
        limit: int | None = None,
        lessons_first: bool = False,
        listed_only: bool = False,
        hard_rules: bool = False,
    ) -> list[Memory]:
        """Return the live memories a caller with these roots sees, newest first.

        `lessons_first` puts kind "lesson" ahead of everything else (the inventory order);
        `listed_only` keeps those with scenarios or a hard rule, `hard_rules` the hard rules.
        """
        if not roots:
            return []
        where, params = self._visible(roots, now or datetime.now(UTC), keep_global_hard_rules)
        if kind is not None:
            where += " AND d.kind = ? COLLATE NOCASE"
            params.append(kind)
        if hard_rules:
            where += " AND d.hard_rule = 1"
        elif listed_only:
            where += " AND (d.hard_rule = 1 OR d.scenarios != '[]')"
        order = "d.sort_ts DESC, d.title_key, d.path"
        if lessons_first:
            order = "(d.kind = 'lesson' COLLATE NOCASE) DESC, " + order
        if limit is not None:
            order += f" LIMIT {max(0, int(limit))}"
        return self._select(where, params, order)

    def count_visible(self, roots: Sequence[MemoryRoot], now: datetime | None = None) -> int:
        """Return how many live memories a caller with these roots sees."""
        if not roots:
            return 0
        where, params = self._visible(roots, now or datetime.now(UTC), True)
        return self._db.execute(f"SELECT count(*) FROM doc d WHERE {where}", params).fetchone()[0]

    def expired(self, root: MemoryRoot, now: datetime) -> list[Memory]:
        """Return the memories of a root whose `expires` has passed."""
        where = "d.root = ? AND d.expires_ts IS NOT NULL AND d.expires_ts <= ?"
        return self._select(where, (root.key, now.timestamp()))

    def search(
        self,
        query: str,
        scopes: Sequence[MemoryRoot],
        limit: int = 10,
        *,
        now: datetime | None = None,
        hits: Mapping[str, int] | None = None,
        prefix_retry: bool = True,
    ) -> SearchResult:
        """Return the best `limit` memories in `scopes` for `query`.

        BM25 (title weighted highest) with a small boost from recall counters; equal
        scores go newest first. A query whose every term finds nothing together is
        retried as a prefix OR, so `migrat` still finds "migration strategy".
        """
        terms = tokenize.query_tokens(query)
        if not terms or not scopes or limit < 1:
            return SearchResult([], "none", terms)
        now = now or datetime.now(UTC)
        attempts: list[tuple[Literal["strict", "prefix"], str]] = [("strict", tokenize.strict_match(terms))]
        if prefix_retry:
            attempts.append(("prefix", tokenize.prefix_match(terms)))
        for mode, expression in attempts:
            found = self._ranked(expression, scopes, limit, now, hits or {})
            if found:
                return SearchResult(found, mode, terms)
        return SearchResult([], "none", terms)

    def search_any(self, text: str, scopes: Sequence[MemoryRoot], limit: int, now: datetime, max_terms: int = 6) -> list[Hit]:
        """Return the best `limit` memories holding any of the rarest words of `text`.

        For long free text (a session's first prompt): words that most memories hold say
        nothing about which one is meant and make BM25 rank half the index, so only the
        rarest few that occur at all are searched. No hit counters: the order is stable.
        """
        terms = tokenize.query_tokens(text)
        if not terms or not scopes or limit < 1:
            return []
        counts = self._doc_counts(terms)
        total = max(1, self._db.execute("SELECT count(*) FROM doc").fetchone()[0])
        present = [t for t in terms if counts.get(t)]
        telling = [t for t in present if counts[t] <= total * MAX_TERM_SHARE] or present
        chosen = sorted(telling, key=lambda t: (counts[t], terms.index(t)))[:max_terms]
        if not chosen:
            return []
        return self._ranked(" OR ".join(tokenize.quote(t) for t in chosen), scopes, limit, now, {})

    def _doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories hold each term (FTS5's vocabulary, read through a temp table)."""
        if not self._vocab:
            self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.doc_vocab USING fts5vocab(main, doc_fts, 'row')")
            self._vocab = True
        marks = ", ".join("?" * len(terms))
        return dict(self._db.execute(f"SELECT term, doc FROM temp.doc_vocab WHERE term IN ({marks})", list(terms)))

    def _ranked(
        self,
        expression: str,
        scopes: Sequence[MemoryRoot],
        limit: int,
        now: datetime,
        hits: Mapping[str, int],
    ) -> list[Hit]:
        where, params = self._visible(scopes, now, keep_global_hard_rules=False)
        weights = ", ".join(str(w) for w in WEIGHTS)
        # Fetch more than asked so the hit boost can reorder near-ties; BM25 is
        # negative (lower is better), so boosting multiplies it by a factor above 1.
        pool = max(limit * 3, 30)
        rows = self._db.execute(
            f"SELECT d.rowid AS rowid, {_SELECT}, bm25(doc_fts, {weights}) AS score FROM doc_fts "
            f"JOIN doc d ON d.rowid = doc_fts.rowid WHERE doc_fts MATCH ? AND {where} "
            "ORDER BY score, d.sort_ts DESC LIMIT ?",
            [expression, *params, pool],
        ).fetchall()
        ranked = []
        for row in rows:
            boost = 1 + HIT_BOOST * math.log1p(hits.get(row["id"], 0))
            # Nine significant digits: float noise must not defeat the newest-first tie-break.
            score = float(f"{row['score'] * boost:.9g}")
            ranked.append((score, -row["sort_ts"], row["path"], row))
        ranked.sort(key=lambda item: item[:3])
        best = ranked[:limit]
        # Previews live beside the token streams; read them for the winners only.
        marks = ", ".join("?" * len(best))
        sql = f"SELECT rowid, preview FROM doc_text WHERE rowid IN ({marks})"
        previews = dict(self._db.execute(sql, [row["rowid"] for *_, row in best]))
        roots: dict[str, MemoryRoot] = {}
        return [Hit(self._memory(row, roots), previews.get(row["rowid"], ""), score) for score, _, _, row in best]


def _split_sql(script: str) -> list[str]:
    """Split a schema script into statements (trigger bodies kept whole)."""
    statements, current = [], []
    for line in script.strip().splitlines():
        if line.strip().startswith("--") and not current:
            continue
        current.append(line)
        text = "\n".join(current)
        if text.rstrip().endswith(";") and sqlite3.complete_statement(text):
            statements.append(text)
            current = []
    return statements
