"""A note's "Lesson:" / "Gotcha:" / "Decision:" lines become memories of their own.

Each labelled statement in a session note is saved as a memory of that kind in the
note's tree, titled by the statement, so a later session sees lessons first. The
memory lists the sessions that stated it ("Sources"): re-distilling a session
upserts by title and changes nothing; a statement a rewritten note no longer holds
loses that session's source line, and the memory goes when no source is left.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.capture.statements import _CONTEXT, NoteFacts, Statement, facts_of, note_facts, statements
from daemon.logs import get_logger
from daemon.memory import commands
from daemon.files import slugify
from daemon.memory.checks import DESCRIPTION_CHARS
from daemon.memory.clip import clip_text
from daemon.memory.frontmatter import MemoryFileError, split_document
from daemon.memory.index import KeptIndex, SearchIndex, SearchIndexError
from daemon.memory.roots import MemoryRoot, global_tree
from daemon.memory.workspace import MemoryCommandError, Workspace

if TYPE_CHECKING:
    from daemon.config import Config

log = get_logger("memoryd.capture.lessons")

MAX_SOURCES = 20  # sources listed per memory: the first sessions that stated it
_SOURCE = re.compile(r"^- session `(?P<id>[^`]+)`")
_SOURCES_HEADING = "Sources:"


def _source_line(session_id: str, root: MemoryRoot, note_path: Path, kind: str, title: str) -> str:
    link = os.path.relpath(note_path, root.path / kind)
    return f"- session `{session_id}`: [{title}]({link})"


def _split_sources(body: str) -> tuple[str, list[str]]:
    """The statement (without its context line) and the source lines of a memory's body."""
    text, _, rest = body.partition(f"\n{_SOURCES_HEADING}\n")
    text = text.strip()
    head, _, last = text.rpartition("\n")
    if last.startswith(_CONTEXT):
        text = head.strip()
    return text, [line for line in rest.splitlines() if _SOURCE.match(line)]


@dataclass
class _Change:
    """What a batch of notes did to one memory: sessions that state it, sessions that dropped it."""

    note_root: MemoryRoot
    statement: Statement
    adds: dict[str, str] = field(default_factory=dict)  # session id → source line
    drops: set[str] = field(default_factory=set)
    facts: NoteFacts = NoteFacts()  # of the latest note that states it


class NoteMemories:
    """Keeps a tree's lesson / gotcha / decision memories in step with its session notes.

    Notes report what they state as they are written; `flush` (once per batch, before the
    batch is recorded) writes each touched memory once, however many notes stated it.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.settings, self.paths = config.settings, config.paths
        self.enabled = config.settings.notes.extract_memories
        self._changes: dict[tuple[str, str, str], _Change] = {}

    def note_written(
        self,
        session_id: str,
        root: MemoryRoot,
        note_path: Path,
        title: str,
        previous: str,
        current: str,
        fields: Mapping[str, Any] | None = None,
        stated: Sequence[Statement] | None = None,
    ) -> None:
        """Queue the memory changes of a note just (re)written into `root`; `previous` is its
        text before; `fields`: the current text's frontmatter, when the writer has it;
        `stated`: `statements(current)`, when a worker read them already."""
        if not self.enabled:
            return
        facts = facts_of(fields) if fields is not None else note_facts(current)
        now = list(stated) if stated is not None else statements(current, facts)
        kept = {(n.kind, n.title.casefold()) for n in now}
        for statement in now:
            source = _source_line(session_id, root, note_path, statement.kind, title)
            change = self._change(root, statement)
            change.adds[session_id] = source
            change.facts = facts
        for statement in statements(previous):
            if (statement.kind, statement.title.casefold()) not in kept:
                self._change(root, statement).drops.add(session_id)

    def _change(self, root: MemoryRoot, statement: Statement) -> _Change:
        key = (root.key, statement.kind, statement.title.casefold())
        change = self._changes.setdefault(key, _Change(root, statement))
        if change.adds or not change.drops:
            change.statement = statement
        return change

    def flush(self, kept: KeptIndex) -> None:
        """Write the queued changes: one upsert (or removal) per memory touched, through the
        pass's `kept` index.

        A memory that cannot be written is logged and skipped: the notes stand regardless.
        """
        changes, self._changes = list(self._changes.values()), {}
        if not changes:
            return
        try:
            index = kept.get()  # with the configured limits (memory.max_file_bytes)
        except SearchIndexError as exc:
            # Notes come first: they are written; the memories wait for a usable index.
            log.warning("lesson.index_unusable", error=str(exc), memories=len(changes))
            return
        for change in changes:
            try:
                self._apply(self._workspace(index, change.note_root), change)
            except (OSError, sqlite3.Error, SearchIndexError, MemoryCommandError) as exc:
                log.warning("lesson.sync_failed", title=change.statement.title, error=str(exc))

    def _workspace(self, index: SearchIndex, root: MemoryRoot) -> Workspace:
        global_root = global_tree(self.paths)
        project = None if root.path == global_root.path else root
        # The daemon keeps the index current; a tree it has never seen is synced once.
        return Workspace(index, global_root, project, project_is_real=True, trust_index=True)

    def _apply(self, ws: Workspace, change: _Change) -> None:
        scope = "global" if ws.project is None else "project"
        statement = change.statement
        found = self._existing(ws, scope, statement)
        text, before = found if found else (statement.text, [])
        touched = change.drops | set(change.adds)
        listed = {_SOURCE.match(s).group("id") for s in before}  # type: ignore[union-attr]
        if found and len(before) >= MAX_SOURCES and not change.drops & listed and text == statement.text:
            return  # a statement this many sessions share is settled: later ones are not listed
        sources = [s for s in before if _SOURCE.match(s).group("id") not in touched]  # type: ignore[union-attr]
        sources = (sources + list(change.adds.values()))[:MAX_SOURCES]
        if change.adds:
            text = statement.text
        if found and sources == before and text == found[0]:
            return  # nothing new: no write
        if sources:
            self._save(ws, scope, Statement(statement.kind, statement.title, text), sources, change.facts)
        elif found:
            root = ws.root_for(scope)  # type: ignore[arg-type]
            memories = [m for m in ws.index.find_by_title(root, statement.title) if m.kind == statement.kind]
            commands.delete_memories(ws, memories)
            log.info("lesson.removed", kind=statement.kind, title=statement.title)

    def _existing(self, ws: Workspace, scope: str, statement: Statement) -> tuple[str, list[str]] | None:
        root = ws.root_for(scope)  # type: ignore[arg-type]
        for memory in ws.index.find_by_title(root, statement.title):
            if memory.kind == statement.kind and memory.path.exists():
                try:
                    return _split_sources(split_document(memory.path.read_text(encoding="utf-8")).body)
                except (OSError, UnicodeDecodeError, MemoryFileError) as exc:
                    log.warning("lesson.unreadable", path=str(memory.path), error=str(exc))
                    return None
        return None

    def _save(self, ws: Workspace, scope: str, statement: Statement, sources: list[str], facts: NoteFacts) -> None:
        context = f"\n\n{facts.context}" if facts.context else ""
        body = f"{statement.text}{context}\n\n{_SOURCES_HEADING}\n" + "\n".join(sources)
        try:
            remember_statement(ws, scope, statement, body, facts.project)
        except MemoryCommandError as exc:
            # A refused or unusable statement costs this memory only, never the note.
            log.warning("lesson.not_saved", kind=statement.kind, title=statement.title, error=str(exc))


def remember_statement(ws: Workspace, scope: str, statement: Statement, body: str, project: str = "") -> None:
    """The one call into the memory commands (kept thin so the memory layer can move).

    The memory carries its project (a global-tree memory is scoped by it) and a complete
    description: the statement, cut at a sentence or word."""
    tags = [statement.kind, "from-session", *([slugify(Path(project).name, 40)] if project else [])]
    commands.remember(
        ws, kind=statement.kind, title=statement.title, body=body, tags=tags, scope=scope,  # type: ignore[arg-type]
        description=clip_text(statement.text, DESCRIPTION_CHARS), project=project or None,
    )  # fmt: skip


def read_previous(note_path: Path) -> tuple[bytes, str]:
    """The note's bytes and text before it is rewritten (b"" and "" when new; "" when unreadable)."""
    try:
        data = note_path.read_bytes()
    except FileNotFoundError:
        return b"", ""
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        return data, ""
