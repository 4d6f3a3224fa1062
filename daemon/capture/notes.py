"""Render a session note (frontmatter, provenance, sections) and choose where it lives."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.capture.distill.base import Distilled
from daemon.capture.statements import Statement, facts_of, statements
from daemon.files import slugify
from daemon.memory.frontmatter import Document, frontmatter_block
from daemon.memory.index_rows import PreparedText
from daemon.memory.roots import MemoryRoot, canonical_project, project_tree
from daemon.source import AGENT_LABELS, AGENT_TAG, SessionInfo
from daemon.scrub import redact
from daemon.timefmt import iso

if TYPE_CHECKING:
    from daemon.capture.notefind import NoteFinder
    from daemon.config import Settings


def project_name(directory: str) -> str:
    return Path(directory).name or "global"


def _clean(text: str, scrubbed: bool) -> str:
    """`text` scrubbed, unless it was built from scrubbed text only (no second pass)."""
    return text if scrubbed else redact(text)


@functools.lru_cache(maxsize=256)
def _project_tag(directory: str) -> str:
    """The tag a project's notes carry: its folder's name as a slug. Kept per folder: a
    history has a few projects, and their notes are thousands."""
    # The folder's name is no scrubbed text: scrubbed here, so every field of the note is.
    return redact(slugify(project_name(directory), 40))


def agent_tag(agent: str) -> str:
    """The tag that says which agent's session a note is (the inventory shows it)."""
    return f"{AGENT_TAG}{agent}"


def note_title(session: SessionInfo, distilled: Distilled) -> str:
    title = session.title.strip() or distilled.summary or session.id
    return _clean(title, session.scrubbed and distilled.scrubbed)[:200]


def render_note(session: SessionInfo, distilled: Distilled, updated_ms: int) -> str:
    """Return the whole note: YAML frontmatter, provenance block, then the body."""
    return note_document(session, distilled, updated_ms)[0]


def note_document(session: SessionInfo, distilled: Distilled, updated_ms: int) -> tuple[str, Document]:
    """Return the note's text and the `Document` a parse of it gives: the index takes the
    note from it without reading or parsing the file again (the frontmatter's values are
    strings and lists of strings, written so that YAML reads them back unchanged)."""
    started = iso(session.time_created)
    meta = {
        "title": note_title(session, distilled),
        "description": _clean(distilled.summary or session.title, session.scrubbed and distilled.scrubbed)[:300],
        "kind": "session",
        "id": session.id,
        "session_id": session.id,
        # The project as its tree is found (the worktree top, links resolved): a global-tree
        # note and the memories taken from it are scoped by it.
        "project": canonical_project(session.directory) or session.directory,
        "started": started,
        "updated": iso(updated_ms),
        "tags": ["session", _project_tag(session.directory), agent_tag(session.agent)],
        "distiller": distilled.distiller,
        "agent": session.agent,  # which agent's session: opencode, claude, codex
    }
    if distilled.prompt_version:
        meta["prompt_version"] = distilled.prompt_version
    front = frontmatter_block(meta)
    provenance = (
        f"> Source: {AGENT_LABELS.get(session.agent, session.agent)} session `{session.id}` · started {started}"
        f" · project `{session.directory}`\n"
    )
    body = _clean(distilled.body.strip(), distilled.scrubbed)
    rest = f"\n{provenance}\n{body}\n"
    return front + rest, Document(front.split("\n")[1:-2], meta, rest)


@dataclass(frozen=True)
class Rendered:
    """A note made where its distiller ran (a worker process): all a pass still does with it
    is choose its file (by `filename` when it has none yet), write it, and index it."""

    text: str
    document: Document
    filename: str  # note_filename(session)
    stated: tuple[Statement, ...] | None  # its lessons, gotchas, decisions; None: not looked for
    index_text: PreparedText  # its doc_text row in the search index


def render(session: SessionInfo, distilled: Distilled, extract_memories: bool) -> Rendered:
    """Everything of a (non-junk) note that depends on the session and the distiller's
    answer alone: the same text, fields and rows the pass would make from them."""
    text, document = note_document(session, distilled, session.time_updated)
    fields = document.fields
    stated = tuple(statements(text, facts_of(fields))) if extract_memories else None
    # The fields as the index reads them back (memory_from_document): one line each.
    title, description = (" ".join(fields[name].split()) for name in ("title", "description"))
    index_text = PreparedText.of(title, description, fields["tags"], fields["kind"], document.body.strip())
    return Rendered(text, document, note_filename(session), stated, index_text)


def note_filename(session: SessionInfo, tail_chars: int = 8) -> str:
    """`<date>-<title slug>-<id tail>.md`: readable, stable for a session; unique but for
    sessions alike in day, title and the id's last `tail_chars` (see `note_path`)."""
    day = iso(session.time_created)[:10]
    tail = re.sub(r"[^A-Za-z0-9]", "", session.id)[-tail_chars:]
    # A source gives titles as stored: a key must not reach a file name.
    return f"{day}-{slugify(_clean(session.title, session.scrubbed) or 'session', 60)}-{tail}.md"


def choose_note_dir(
    session: SessionInfo, target: str, global_root: MemoryRoot, follow_outside: bool = False
) -> MemoryRoot:
    """The tree a session's note goes to: its project's, the global one, or as `notes.target` says."""
    # A session whose folder is gone (another machine's path, a deleted checkout)
    # has no project tree to write into.
    if target == "global" or not session.directory or not Path(session.directory).is_dir():
        return global_root
    project = project_tree(Path(session.directory), follow_outside)
    if project.outside is not None:  # a `.memory` leading out of the project: never written through
        return global_root
    if target == "project" or project.exists():
        return project
    return global_root


def tree_of_note(
    note: Path, session: SessionInfo, global_root: MemoryRoot, follow_outside: bool = False
) -> MemoryRoot | None:
    """The tree a note already on disk lies in (`<root>/<category>/<file>`).

    Usually the session's project tree or the global one; a note left where an earlier
    `notes.target` put it keeps its tree. None for a note in the folder a refused
    `.memory` link leads to: it is not written again.
    """
    folder = note.resolve().parents[1]
    if folder == global_root.path:
        return global_root
    if session.directory:
        project = project_tree(Path(session.directory), follow_outside)
        if folder == project.outside:
            return None
        if folder == project.path:
            return project
    return MemoryRoot(folder, "project")


def note_path(
    recorded: str,
    session: SessionInfo,
    settings: Settings,
    global_root: MemoryRoot,
    found: NoteFinder,
    filename: str | None = None,
) -> tuple[MemoryRoot, Path]:
    """The tree and the file of a session's note: the `recorded` path if it is still there,
    else the session's note already in the folder (pulled or renamed: its session_id
    decides), else a fresh, deterministic one (`filename`: its name, when made already).

    The tree of a project folder is found once per pass (`found` is the pass's)."""
    notes, follow = settings.notes, settings.memory.follow_outside_links
    if recorded and Path(recorded).exists():
        path = Path(recorded)
        kept = tree_of_note(path, session, global_root, follow)
        if kept is not None:
            return kept, path
    key = (session.directory, notes.target, global_root.path)
    root = found.trees.get(key)
    if root is None:
        root = found.trees[key] = choose_note_dir(session, notes.target, global_root, follow)
    folder = root.path / notes.category
    mine = found.find(folder, session.id)
    if mine is not None:
        return root, mine
    path = folder / (filename or note_filename(session))
    if found.may_exist(path) and path.exists():  # another session's note has that name: never replaced
        path = _free_name(folder, session, found)
    return root, path


def _free_name(folder: Path, session: SessionInfo, found: NoteFinder) -> Path:
    """A name no note has: the whole id as the tail, then a counter (ids alike but for
    their case or punctuation)."""
    name = note_filename(session, len(session.id))
    path, n = folder / name, 2
    while found.may_exist(path) and path.exists():
        path, n = folder / f"{name.removesuffix('.md')}-{n}.md", n + 1
    return path
