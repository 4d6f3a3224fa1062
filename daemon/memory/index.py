"""The search index: SQLite FTS5 with BM25 over memoryd's own token stream.

Derived data only: `rebuild` recreates it from the trees, and it rebuilds itself when
the schema or the tokenizer changes. It is kept current incrementally: a file is
re-read only when its stat signature moved, and re-indexed only when its content hash
did. The CLI, the daemon and the MCP server share it, so it runs in WAL mode with a
busy timeout, and writes happen in short batches.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from daemon.diskfull import immediate_transaction, raise_if_disk_full
from daemon.files import ensure_dir
from daemon.memory import tokenize
from daemon.memory.frontmatter import MemoryFileError
from daemon.memory.index_rows import (
    PREVIEW_CHARS,
    PreparedText,
    index_rows,
    preview_of,
    signature_text,
    trusted,
    upsert_rows,
)
from daemon.memory.index_schema import SCHEMA, SCHEMA_VERSION
from daemon.memory.queries import IndexQueries
from daemon.memory.roots import MemoryRoot, classify_path, resolve_in_root
from daemon.memory.terms import delete_paths, delete_root
from daemon.memory.tree import (
    MAX_FILE_BYTES,
    Memory,
    Problem,
    content_hash,
    TreeListing,
    list_tree,
    log_problem,
    memory_from_bytes,
    read_head,
)
from daemon.sqlscript import split_sql

if TYPE_CHECKING:
    from daemon.config import Config

log = logging.getLogger("memoryd.memory.index")

# Files parsed and written per transaction: keeps the write lock short for other processes.
BATCH = 250
__all__ = ["PREVIEW_CHARS", "SearchIndex", "SearchIndexError", "SyncReport", "open_index", "preview_of"]


def open_index(config: Config) -> SearchIndex:
    """Open the search index as configured (its file, busy timeout and memory-file size cap)."""
    settings = config.settings
    return SearchIndex(config.paths.index_db, settings.source.busy_timeout_ms, settings.memory.max_file_bytes)


class KeptIndex:
    """One index connection kept for a run of writes (a capture pass's commits), opened at
    its first use and closed by `close`.

    Closing the last connection to a WAL database checkpoints its log into the file: a
    backfill commits twice a second, and paid that (and an open) at every commit."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._index: SearchIndex | None = None

    def get(self) -> SearchIndex:
        """The open index (opened now at first use; SearchIndexError when it cannot be used)."""
        if self._index is None:
            self._index = open_index(self._config)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index, index = None, self._index
            index.close()


class SearchIndexError(Exception):
    """The search index cannot be used; the message says what to do."""


@dataclass(frozen=True)
class SyncReport:
    """How many entries a sync added, changed or removed, the categories and paths they are
    in, and whether ROOT.md's tables may change with them (compile reads all of it)."""

    changed: int
    categories: set[str]
    paths: frozenset[str] = frozenset()
    root_tables: bool = True

    def merged(self, other: SyncReport | None) -> SyncReport:
        """This report and `other` as one (what two syncs of one root changed together)."""
        if other is None:
            return self
        paths = self.paths | other.paths
        return SyncReport(len(paths), self.categories | other.categories, paths, self.root_tables or other.root_tables)


class _Batch(NamedTuple):
    changed: list[str]  # paths written or removed
    root_tables: bool


MMAP_BYTES = 1 << 30
PAGE_BYTES = 8192


class SearchIndex(IndexQueries):
    """The FTS5 index over every known memory tree, at `paths.index_db`.

    One object per thread at a time (it may be created on one thread and used on
    another); separate processes each open their own.
    """

    def __init__(self, db_path: Path, busy_timeout_ms: int = 5000, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.db_path = Path(db_path)
        self.max_file_bytes = max_file_bytes
        self.busy_timeout_ms = busy_timeout_ms
        ensure_dir(self.db_path.parent)
        try:
            self._db = sqlite3.connect(
                self.db_path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            # A new file only (an existing one keeps its pages): rows of ~1 KB (token
            # streams, previews) leave a fifth of 4 KB pages empty, half that of 8 KB ones.
            self._db.execute(f"PRAGMA page_size = {PAGE_BYTES}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            # Pages read in place from the OS's cache instead of copied into SQLite's own
            # (2 MB, far below a large store's index): a third of a large search's time.
            self._db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            # Statement journals (and sorts) in memory, not in temp files: a write through
            # the FTS triggers journals pages already written in its transaction, and those
            # spilled to /var/tmp at thousands of writes a batch.
            self._db.execute("PRAGMA temp_store = MEMORY")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise_if_disk_full(exc, self.db_path)  # not unusable: full; deleting it would not help
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
        # A change to a memory's row also empties the `stable` table (its triggers, index_schema.py).
        with immediate_transaction(self._db, self.db_path) as db:
            yield db

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
        for statement in split_sql(SCHEMA):
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
            count = delete_root(db, root.key)
            db.execute("DELETE FROM problem WHERE root = ?", (root.key,))
            db.execute("DELETE FROM folder WHERE root = ?", (root.key,))
            db.execute("DELETE FROM root WHERE path = ?", (root.key,))
        return count

    # -- writing -----------------------------------------------------------------------

    @staticmethod
    def _record_problems(
        db: sqlite3.Connection, root: MemoryRoot, path: Path, problems: Sequence[Problem], signature: str
    ) -> None:
        db.execute("DELETE FROM problem WHERE path = ? AND kind = 'file'", (str(path),))
        db.executemany(
            "INSERT INTO problem (path, root, kind, reason, skipped, sig, seen_at) VALUES (?, ?, 'file', ?, ?, ?, ?)",
            [(str(p.path), root.key, p.reason, int(p.skipped), signature, time.time()) for p in problems],
        )

    def sync_root(self, root: MemoryRoot, *, quick: bool = False) -> int:
        """Bring one root's entries up to date; return how many were added, changed or removed."""
        return self.sync_root_report(root, quick=quick).changed

    def sync_root_report(
        self, root: MemoryRoot, *, quick: bool = False, skip: frozenset[str] = frozenset(), known: Mapping[str, str] | None = None
    ) -> SyncReport:
        """Bring one root's entries up to date; say how many changed and in which categories.

        The categories let a caller recompile only those index.md files:
        `compile_root(root, index, categories=report.categories)`. `quick` lists only the
        category folders whose own stat moved since the last sync (a file added, removed
        or renamed into place: how memoryd, git and most editors write); a file edited
        in place in an unchanged folder is then seen by the next full sync. `skip`: files
        their writer is about to index itself (`put_many`): kept, not read, and no folder's
        listing is recorded as indexed. `known`: path -> the signature a writer left the file
        with when it indexed that very content (`put_many`): a file still so is not re-read.
        """
        now_ns = time.time_ns()
        folders = dict(self._db.execute("SELECT name, sig FROM folder WHERE root = ?", (root.key,)))
        listing = list_tree(root, {k: v for k, v in folders.items() if v} if quick else None, now_ns)
        stored, broken = self._stored(root, listing, folders)
        present, pending, settled = _to_read(listing, stored, broken, skip, known or {}, now_ns)
        gone = [p for p in stored if p not in present]
        fixed = [p for p in broken if p not in present]
        tree_now = sorted((str(p.path), p.reason) for p in listing.problems)
        tree_before = [
            tuple(r)
            for r in self._db.execute(
                "SELECT path, reason FROM problem WHERE root = ? AND kind = 'tree' ORDER BY path, reason", (root.key,)
            )
        ]
        # Most syncs find nothing: then take no write lock at all (the daemon may hold it).
        if settled:
            with self._write() as db:
                db.executemany("UPDATE doc SET sig = ? WHERE path = ?", settled)
        if gone or fixed or tree_now != tree_before or not self.knows(root):
            with self._write() as db:
                self._register(db, root)
                db.execute("DELETE FROM problem WHERE root = ? AND kind = 'tree'", (root.key,))
                db.executemany(
                    "INSERT INTO problem (path, root, kind, reason, skipped, seen_at) VALUES (?, ?, 'tree', ?, 1, ?)",
                    [(path, root.key, reason, time.time()) for path, reason in tree_now],
                )
                delete_paths(db, gone)
                db.executemany("DELETE FROM problem WHERE path = ? AND kind = 'file'", [(p,) for p in fixed])
        paths, root_tables = set(gone), bool(gone)
        for start in range(0, len(pending), BATCH):
            batch = self._index_batch(root, pending[start : start + BATCH])
            paths.update(batch.changed)
            root_tables = root_tables or batch.root_tables
        changed = len(paths)
        if listing.folders != folders and not skip:  # stored only once their files are indexed
            with self._write() as db:
                db.execute("DELETE FROM folder WHERE root = ?", (root.key,))
                db.executemany("INSERT INTO folder VALUES (?, ?, ?)", [(root.key, *f) for f in listing.folders.items()])
        if changed:
            log.info("index.synced", extra={"root": str(root.path), "changed": changed})
        # Strings, not Paths: a backfill's refresh names thousands (a Path each cost more).
        touched = {os.path.basename(os.path.dirname(p)) for p in paths}
        return SyncReport(changed, touched, frozenset(paths), root_tables)

    def _stored(
        self, root: MemoryRoot, listing: TreeListing, folders: dict[str, str]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The stored signatures of the root's memories and broken files, skipped folders left out."""
        where, params = "root = ?", [root.key]
        if listing.skipped:
            # Listed folders, and those gone since: a skipped folder's entries all stay.
            looked = sorted((set(listing.folders) | set(folders)) - listing.skipped)
            where += f" AND category IN ({', '.join('?' * len(looked))})"
            params += looked
        stored = dict(self._db.execute(f"SELECT path, sig FROM doc WHERE {where}", params))
        broken = {
            path: sig
            for path, sig in self._db.execute(
                "SELECT path, sig FROM problem WHERE root = ? AND kind = 'file' AND skipped = 1", (root.key,)
            )
            if Path(path).parent.name not in listing.skipped
        }
        return stored, broken

    def _index_batch(self, root: MemoryRoot, batch: Sequence[tuple[Path, str]]) -> _Batch:
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
                # A file over the cap is read, hashed and indexed by its head only.
                data, st = read_head(path, self.max_file_bytes)
                if hashes.get(key) == content_hash(data):
                    touched.append((signature, key))
                    continue
                memory, warnings = memory_from_bytes(path, root, data, st)
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
            rows.append(index_rows(memory, signature))
            problems.append((path, warnings, signature))
        # A problem already on record was logged when first met: say it once, not per sync.
        known = set(
            tuple(row)
            for row in self._db.execute(
                f"SELECT path, reason FROM problem WHERE kind = 'file' AND path IN ({marks})", [str(p) for p, _ in batch]
            )
        )
        with self._write() as db:
            root_tables = upsert_rows(db, rows) if rows else False
            db.executemany("UPDATE doc SET sig = ? WHERE path = ?", touched)
            root_tables = delete_paths(db, removed) > 0 or root_tables
            for path, found, signature in problems:
                self._record_problems(db, root, path, found, signature)
        for _, found, _ in problems:
            for problem in found:
                if (str(problem.path), problem.reason) not in known:
                    log_problem(problem)
        return _Batch([doc[0] for doc, _ in rows] + removed, root_tables)

    def put_many(
        self,
        root: MemoryRoot,
        written: Sequence[tuple[Memory, os.stat_result]],
        scrubbed: bool = False,
        prepared: Sequence[PreparedText | None] = (),
    ) -> SyncReport:
        """Index memories of `root` their writer has just written and parsed (a capture pass's
        notes), in one transaction: no second read, no second parse of the files.

        `scrubbed`: the writer built them from scrubbed text only (no second pass);
        `prepared`: per memory, its doc_text row made ahead (or None)."""
        now_ns = time.time_ns()
        root_tables = False
        ahead = list(prepared) or [None] * len(written)
        for start in range(0, len(written), BATCH):
            some = written[start : start + BATCH]
            rows = [
                index_rows(memory, trusted(signature_text(st), st.st_mtime_ns, now_ns), scrubbed, made)
                for (memory, st), made in zip(some, ahead[start : start + BATCH])
            ]
            with self._write() as db:
                if not self.knows(root):
                    self._register(db, root)
                root_tables = upsert_rows(db, rows) or root_tables
                db.executemany("DELETE FROM problem WHERE path = ? AND kind = 'file'", [(str(m.path),) for m, _ in some])
        paths = frozenset(str(memory.path) for memory, _ in written)
        return SyncReport(len(paths), {memory.category for memory, _ in written}, paths, root_tables)

    def put(self, memory: Memory, st: os.stat_result, warnings: Sequence[Problem] = ()) -> SyncReport:
        """Index a memory its writer has just written and parsed: no second read of the file."""
        signature = trusted(signature_text(st), st.st_mtime_ns, time.time_ns())
        with self._write() as db:
            if not self.knows(memory.root):
                self._register(db, memory.root)
            root_tables = upsert_rows(db, [index_rows(memory, signature)])
            self._record_problems(db, memory.root, memory.path, warnings, signature)
        for problem in warnings:
            log_problem(problem)
        return SyncReport(1, {memory.category}, frozenset({str(memory.path)}), root_tables)

    def update_file_report(self, path: Path, root: MemoryRoot) -> SyncReport:
        """Re-index one file of `root` after a change; say what changed (for
        `compile_report(changes=…)`). A path that no longer exists is removed instead."""
        path = Path(path)
        if classify_path(root, path) != "memory":
            return SyncReport(0, set(), frozenset(), False)
        removed = SyncReport(1, {path.parent.name}, frozenset({str(path)}), True)
        unchanged = SyncReport(0, set(), frozenset(), False)
        if not os.path.lexists(path):
            return removed if self.remove_file(path) else unchanged
        try:
            resolve_in_root(path, root.path)
            st = path.stat()
        except MemoryFileError:
            # A link out of the tree or a loop: not indexed; sync_root reports it.
            with self._write() as db:
                return removed if delete_paths(db, [str(path)]) > 0 else unchanged
        except OSError:
            return removed if self.remove_file(path) else unchanged
        if not self.knows(root):
            with self._write() as db:
                self._register(db, root)
        signature = trusted(signature_text(st), st.st_mtime_ns, time.time_ns())
        batch = self._index_batch(root, [(path, signature)])
        return SyncReport(len(batch.changed), {path.parent.name} if batch.changed else set(), frozenset(batch.changed), batch.root_tables)

    def remove_file(self, path: Path) -> bool:
        """Drop one file's entry (and its problems); return whether there was one."""
        with self._write() as db:
            count = delete_paths(db, [str(path)])
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


def _to_read(
    listing: TreeListing,
    stored: Mapping[str, str],
    broken: Mapping[str, str],
    skip: frozenset[str],
    known: Mapping[str, str],
    now_ns: int,
) -> tuple[set[str], list[tuple[Path, str]], list[tuple[str, str]]]:
    """A sync's listed paths, the files it must read (with the signature to store), and
    the (signature, path) of rows whose file is as its writer indexed it (`known`), now
    old enough to trust without a read."""
    present: set[str] = set()
    pending: list[tuple[Path, str]] = []
    settled: list[tuple[str, str]] = []
    for path, st in listing.files:
        present.add(path)
        if path in skip:
            continue
        signature = signature_text(st)
        if stored.get(path) == signature:
            continue  # unchanged since it was last read (stored only once trustworthy)
        if path not in stored and broken.get(path) == signature:
            continue  # still the same broken file: reported already
        if path in stored and known.get(path) == signature:
            if trusted(signature, st.st_mtime_ns, now_ns):
                settled.append((signature, path))
            continue  # the very bytes its writer indexed from memory: no re-read
        pending.append((Path(path), trusted(signature, st.st_mtime_ns, now_ns)))
    return present, pending, settled
