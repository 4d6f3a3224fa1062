"""Fill the outbox from the memory trees: the trees are the truth, the outbox the difference.

Session notes (and, with `include_memories`, every memory) are documents keyed by their
`id` (a note's id is its session id): a file renamed or moved by a pull is the same
document, and a document gone from a tree that was read is deleted on the server. Only
the files whose content hash moved are read again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.memory.frontmatter import MemoryFileError, split_document
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from daemon.memory.tree import MAX_FILE_BYTES, Memory, content_hash
from daemon.sinks.outbox import DELETE, PUT, Entry, Outbox

NOTE_KIND = "session"


@dataclass
class FillReport:
    queued_puts: int = 0
    queued_deletes: int = 0
    documents: int = 0  # documents the trees hold for this sink
    problems: list[str] = field(default_factory=list)


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value) if value not in (None, "") else ""


def document_metadata(memory: Memory, fields: dict[str, Any]) -> dict[str, Any]:
    """The external_metadata object Cognee keeps with a document."""
    session_id = str(fields.get("session_id") or "")
    project = str(fields.get("project") or "")
    if not project and memory.root.scope == "project":
        project = str(memory.root.path.parent)
    return {
        "session_id": session_id,
        "memory_id": memory.id,
        "title": memory.title,
        "project": project,
        "started": _iso(fields.get("started") or memory.created),
        "updated": _iso(fields.get("updated") or memory.updated),
        "kind": memory.kind or str(fields.get("kind") or ""),
        "path": memory.relative_path(),
        "source": "memoryd",
    }


def wanted(memory: Memory, include_memories: bool) -> bool:
    return include_memories or memory.kind == NOTE_KIND


class Filler:
    """Compares the trees with the outbox and the delivery records; queues the difference."""

    def __init__(
        self, outbox: Outbox, include_memories: bool, index: SearchIndex | None = None, max_file_bytes: int = MAX_FILE_BYTES
    ) -> None:
        self.outbox = outbox
        self.include_memories = include_memories
        # Trees are read through a search index: by default this filler's own, in memory,
        # so the sink's thread never shares a connection with the daemon's worker; it
        # reads no more of a file than memory.max_file_bytes, as every index does.
        self.index = index or SearchIndex(Path(":memory:"), max_file_bytes=max_file_bytes)

    def close(self) -> None:
        self.index.close()

    def fill(self, roots: Iterable[MemoryRoot], force: bool = False) -> FillReport:
        """Queue puts for new or changed documents and deletes for vanished ones.

        `force` queues every document again (a backfill after the server lost its data).
        A root that does not exist now is left out, and so are its documents' deletions.
        """
        report = FillReport()
        seen_roots: set[str] = set()
        current: dict[str, Memory] = {}
        for root in roots:
            if not root.exists():
                continue
            seen_roots.add(root.key)
            self.index.sync_root(root)
            memories, problems = self.index.memories(root), self.index.problems(root)
            report.problems += [str(p) for p in problems]
            for memory in memories:
                if wanted(memory, self.include_memories):
                    current.setdefault(memory.id, memory)
        report.documents = len(current)
        queued = self.outbox.queued()
        delivered = self.outbox.delivered()
        with self.outbox.state.transaction():
            for key, memory in current.items():
                pending = queued.get(key)
                if pending == (PUT, memory.content_hash):
                    continue
                done = delivered.get(key)
                if not force and pending is None and done is not None and done.content_hash == memory.content_hash:
                    continue
                entry = self._put_entry(memory, report)
                if entry is not None:
                    self.outbox.put(entry)
                    report.queued_puts += 1
            for key, done in delivered.items():
                if key in current or done.root not in seen_roots or queued.get(key, ("",))[0] == DELETE:
                    continue
                self.outbox.put(Entry(key, DELETE, root=done.root, path=done.path))
                report.queued_deletes += 1
            for key, (op, _) in queued.items():
                if op == PUT and key not in current and key not in delivered:
                    self.outbox.drop(key)  # gone before it was ever sent
        return report

    def _put_entry(self, memory: Memory, report: FillReport) -> Entry | None:
        try:
            data = memory.path.read_bytes()
            text = data.decode("utf-8")
            fields = split_document(text).fields
        except (OSError, UnicodeDecodeError, MemoryFileError) as exc:
            # Changed or removed since the scan: the next fill sees its new state.
            report.problems.append(f"{memory.path}: {exc}")
            return None
        return Entry(
            doc_key=memory.id,
            op=PUT,
            content_hash=content_hash(data),  # of the bytes sent, which may be newer than the scan
            content=text,
            filename=f"{_safe_name(memory.id)}.md",
            metadata=document_metadata(memory, fields),
            root=memory.root.key,
            path=str(memory.path),
        )


def _safe_name(doc_key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in doc_key)[:100] or "memory"

