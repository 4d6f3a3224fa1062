"""The one path by which capture writes into the memory trees, and what it wrote.

A pass writes its notes (and, through `NoteMemories`, the lessons they state) here.
The writer remembers which trees it wrote into, so the caller refreshes exactly those
(`daemon.memory.refresh.refresh_tree`), and what it wrote, so the daemon's watcher can
tell the echo of its own writes from a person's edit.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.files import write_if_changed
from daemon.logs import get_logger
from daemon.memory.frontmatter import Document
from daemon.memory.index_rows import PreparedText
from daemon.memory.roots import MemoryRoot, check_inside
from daemon.state import WriteFence

if TYPE_CHECKING:
    from daemon.config import Config
    from daemon.memory.index import KeptIndex, SearchIndex, SyncReport
    from daemon.memory.tree import Memory

ECHOES_KEPT = 20_000  # files remembered as our own writes: a backfill's worth of notes


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _of(st)


def _of(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_ino, st.st_mtime_ns, st.st_size


_WRITING = (-1, -1, -1)  # a write under way: whatever the watcher hears of the file is ours


class OwnWrites:
    """The files this process wrote last, each with the stat it left them with.

    Shared by the writing thread and the watcher's: an event for a file whose stat is
    still the one we left (or that we are writing right now) is our own write's echo,
    not work.
    """

    def __init__(self, kept: int = ECHOES_KEPT) -> None:
        self._lock = threading.Lock()
        self._kept = kept
        self._files: OrderedDict[Path, tuple[int, int, int] | None] = OrderedDict()

    @contextmanager
    def writing(self, path: Path) -> Iterator[list[os.stat_result]]:
        """Around a write of `path`: its events are echoes while it runs and, after it,
        as long as the file stays as the write left it. The writer may put the stat it
        took after the write in the list yielded: the file is then not stat'ed twice."""
        left: list[os.stat_result] = []
        self._remember(path, _WRITING)
        try:
            yield left
        finally:
            self._remember(path, _of(left[0]) if left else _signature(path))

    def _remember(self, path: Path, signature: tuple[int, int, int] | None) -> None:
        with self._lock:
            self._files.pop(path, None)
            self._files[path] = signature
            while len(self._files) > self._kept:
                self._files.popitem(last=False)

    def is_echo(self, path: Path) -> bool:
        """True when `path` is being written by us, or is as our last write left it."""
        with self._lock:
            if path not in self._files:
                return False
            left = self._files[path]
        return left == _WRITING or _signature(path) == left


def _unknown_tree(index: SearchIndex, root: MemoryRoot, written: list[tuple[Memory, os.stat_result]]) -> SyncReport | None:
    """A tree the index has never seen is synced before its new notes go in: what else it
    holds (a lesson's memory saved by hand, say) is then found by the lessons' `remember`,
    which trusts the index once it knows the tree. The notes just written are not read
    back for it: they are indexed from memory right after."""
    if index.knows(root):
        return None
    return index.sync_root_report(root, skip=frozenset(str(memory.path) for memory, _ in written))


@dataclass(frozen=True)
class Written:
    """What a pass wrote into one tree: every note (`paths`, unchanged ones too: the index
    may lack them), and what indexing those it could take from memory changed (`indexed`)."""

    paths: frozenset[Path] = frozenset()
    indexed: SyncReport | None = None
    signatures: Mapping[str, str] | None = None  # of the notes indexed from memory, as their write left them

    @property
    def unindexed(self) -> frozenset[Path]:
        """The notes still to be indexed from their files."""
        done = self.indexed.paths if self.indexed is not None else frozenset()
        return frozenset(p for p in self.paths if str(p) not in done)


class TreeWriter:
    """Writes notes into trees behind the daemon's fence; says which trees it touched.

    A note written with its parsed `Document` is indexed from it (`index_written`, once
    per committed batch): the index neither re-reads nor re-parses what was just written.
    Such a document is `note_document`'s, whose every field is scrubbed: nor does the index
    scrub it a second time.
    """

    def __init__(self, fence: WriteFence, own: OwnWrites | None = None) -> None:
        self.fence = fence
        self.own = own or OwnWrites()
        self._roots: dict[Path, MemoryRoot] = {}
        self.written: dict[Path, Written] = {}  # per tree taken last, what was written into it
        self._paths: dict[Path, set[Path]] = {}  # per tree, the notes written since take_roots()
        self._indexed: dict[Path, SyncReport] = {}  # per tree, what index_written changed since
        self._signatures: dict[Path, dict[str, str]] = {}  # per tree, the stat each note so indexed was left with
        self._parsed: list[tuple[MemoryRoot, Path, Document, bytes, os.stat_result, PreparedText | None]] = []

    def write_note(
        self,
        root: MemoryRoot,
        path: Path,
        text: str,
        document: Document | None = None,
        prepared: PreparedText | None = None,
        previous: bytes | None = None,
    ) -> bool:
        """Write a note atomically when its bytes change; return whether it wrote.

        `document`: `note_document`'s parse of `text` (every field scrubbed), to index it from;
        `prepared`: its doc_text row, made ahead by a worker; `previous`: the file's bytes
        read already (b"": none), so that they are not read again.

        Not synced on its own: the caller syncs the batch before recording it.
        """
        check_inside(root, path.parent)  # a category folder linked out of the tree: this session fails, named
        with self.fence.guard(), self.own.writing(path) as left:  # after the daemon's stop, not even a note
            # Same bytes, no write: a tree in git must not change just because a pass ran.
            data = text.encode("utf-8")
            written = write_if_changed(path, text, durable=False, data=data, current=previous)
            st = os.stat(path)  # the file as this write left it: what the index records
            left.append(st)
        self.touched(root)
        self._paths.setdefault(root.path, set()).add(path)
        if document is not None:
            self._parsed.append((root, path, document, data, st, prepared))
        return written

    def index_written(self, config: Config, kept: KeptIndex) -> None:
        """Index the notes written with their `Document` since the last call, from it, through
        the pass's `kept` index.

        An index that cannot be used leaves them to the refresh after the pass, which
        reads them from their files (and says what is wrong with the index).
        """
        from daemon.memory.index import SearchIndexError
        from daemon.memory.index_rows import signature_text
        from daemon.memory.tree import content_hash, memory_from_document

        parsed, self._parsed = self._parsed, []
        by_root: dict[Path, list] = {}
        for root, path, document, data, st, prepared in parsed:
            if len(data) > config.settings.memory.max_file_bytes:
                continue  # indexed by its head only: the refresh reads it as a sync would
            memory, warnings = memory_from_document(document, path, root, content_hash(data), st.st_mtime)
            if not warnings:  # a field the index warns about: the refresh reads the file and says so
                by_root.setdefault(root.path, []).append((root, memory, st, prepared))
        if not by_root:
            return
        try:
            index = kept.get()
            for key, items in by_root.items():
                written = [(memory, st) for _, memory, st, _ in items]
                report = _unknown_tree(index, items[0][0], written)
                report = index.put_many(items[0][0], written, scrubbed=True, prepared=[i[3] for i in items]).merged(report)
                self._indexed[key] = report.merged(self._indexed.get(key))
                self._signatures.setdefault(key, {}).update((str(m.path), signature_text(st)) for m, st in written)
        except (SearchIndexError, OSError, sqlite3.Error) as exc:
            get_logger("memoryd.capture").warning("notes.index_deferred", error=str(exc), notes=len(parsed))

    def touched(self, root: MemoryRoot) -> None:
        """Count `root` among the trees to refresh after the pass."""
        self._roots.setdefault(root.path, root)

    def take_roots(self) -> list[MemoryRoot]:
        """The trees written into since the last call, in path order (`written` says what went in)."""
        roots, self._roots = self._roots, {}
        self.written = {
            p: Written(frozenset(self._paths.get(p, ())), self._indexed.get(p), self._signatures.get(p)) for p in roots
        }
        self._paths, self._indexed, self._signatures = {}, {}, {}
        return [roots[path] for path in sorted(roots)]
