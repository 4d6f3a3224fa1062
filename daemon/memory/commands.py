"""remember / recall / forget / inspect / list on the Markdown trees.

The semantics of an opencode-memory style store (upsert by scope and title, a secret
guard at the door, scoped forget, a bounded inventory, lessons first) applied to
Markdown files. The CLI and the MCP server are thin layers over these functions: they
return dataclasses and raise MemoryCommandError subclasses whose messages tell a person
what to do.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from daemon.files import FILE_MODE, atomic_write_text, ensure_dir, slugify
from daemon.memory.checks import (
    MAX_BODY,
    MAX_DESCRIPTION,
    MAX_TITLE,
    check_secrets,
    clean_tags,
    derive_description,
    normalize_kind,
    one_line,
    parse_expiry,
)
from daemon.memory.frontmatter import Document, MemoryFileError, edit_document, render_memory, split_document
from daemon.memory.index import SearchIndex, SyncReport
from daemon.memory.queries import Hit
from daemon.memory.roots import RESERVED_STEMS, MemoryRoot, check_inside
from daemon.memory.tree import (
    Memory,
    content_hash,
    memory_from_bytes,
    memory_from_document,
    new_id,
    read_head,
    read_memory,
)
from daemon.memory.workspace import InvalidInput, MemoryNotFound, ScopeChoice, Workspace

log = logging.getLogger("memoryd.memory.commands")

MIN_LIMIT, MAX_LIMIT = 1, 50
INVENTORY_CHARS = 1200


# --- remember -------------------------------------------------------------------------


@dataclass(frozen=True)
class RememberResult:
    """The memory as saved, whether it is new, and where it was before a kind change."""

    memory: Memory
    created: bool
    moved_from: Path | None = None
    compiled: tuple[Path, ...] = ()
    note: str = ""  # said to the caller: e.g. the project had no tree, so it went global


def _free_path(folder: Path, title: str) -> Path:
    """Return `<folder>/<slug>.md` for a title, numbered when another file has that name."""
    stem = slugify(title)
    if stem.casefold() in RESERVED_STEMS:
        stem += "-memory"  # index.md and ROOT.md belong to compile
    candidate, n = folder / f"{stem}.md", 2
    while candidate.exists() or candidate.is_symlink():
        candidate, n = folder / f"{stem}-{n}.md", n + 1
    return candidate


def _write_memory(root: MemoryRoot, path: Path, text: str, like: Path | None = None) -> None:
    check_inside(root, path.parent)  # a category folder linked out of the tree is not written through
    ensure_dir(path.parent)
    # A rewrite keeps the file's mode (a repo's 0644); new memories are private.
    mode = FILE_MODE
    if like is not None:
        try:
            mode = like.stat().st_mode & 0o777
        except FileNotFoundError:
            pass
    atomic_write_text(path, text, mode)


@dataclass(frozen=True)
class _Draft:
    """A memory's checked input: what remember writes."""

    kind: str
    title: str
    body: str
    changes: dict[str, object]


def _draft(
    now: datetime,
    kind: str,
    title: str,
    body: str,
    tags: Sequence[str],
    expires: str | None,
    description: str | None,
    exact_tags: bool = False,
) -> _Draft:
    """Check remember's arguments; raise SecretRefused or InvalidInput before anything is written."""
    title = one_line(title)
    body = body.strip()
    tag_list = [t for tag in tags for t in tag.split(",")]
    # The guard sees the input as given, before any clean-up could hide a credential.
    check_secrets(
        {
            "title": title,
            "kind": kind,
            "body": body,
            "tags": " ".join(tag_list),
            **({"description": description} if description else {}),
        }
    )
    kind = normalize_kind(kind)
    if not title:
        raise InvalidInput("the title is empty: give a short, specific one (--title 'Use WAL mode')")
    if len(title) > MAX_TITLE:
        raise InvalidInput(f"the title has {len(title)} characters; keep it under {MAX_TITLE}")
    if not body:
        raise InvalidInput("the body is empty: say what to remember (or pass - to read it from stdin)")
    if len(body) > MAX_BODY:
        raise InvalidInput(f"the body has {len(body)} characters; keep a memory under {MAX_BODY}")
    tag_values = clean_tags(tag_list)
    summary = one_line(description) if description else derive_description(body)
    if len(summary) > MAX_DESCRIPTION:
        raise InvalidInput(f"the description has {len(summary)} characters; keep it under {MAX_DESCRIPTION}")
    changes: dict[str, object] = {"title": title, "description": summary, "kind": kind, "updated": now}
    if tag_values or exact_tags:
        changes["tags"] = list(tag_values)
    if expires:
        changes["expires"] = parse_expiry(expires, now)
    return _Draft(kind, title, body, changes)


def _rewrite(existing: Memory, draft: _Draft, limit: int) -> tuple[str, Document, bool]:
    """Return an existing memory's text with the draft's fields and body, its parse, and
    whether that changes anything but the `updated` time."""
    try:
        data, st = read_head(existing.path, limit)
        if st.st_size > len(data):
            raise MemoryFileError(f"{st.st_size} bytes, over memory.max_file_bytes ({limit})")
        current = split_document(data.decode("utf-8"))
        changes = dict(draft.changes)
        if "id" not in current.fields:
            changes["id"] = existing.id  # write down the id people may already use
        text, doc = edit_document(current, changes, draft.body)
        return text, doc, _content(doc) != _content(current)
    except (OSError, UnicodeDecodeError, MemoryFileError) as exc:
        raise InvalidInput(f"cannot update {existing.path} safely ({exc}); edit it by hand or forget it first") from exc


def _content(doc: Document) -> tuple[list[str], str]:
    """A memory's content: its frontmatter lines but `updated`, and its body.

    Saving what a file already says is no change: rewriting it only to move `updated`
    would make every machine that distils the same sessions a diff in git.
    """
    return [line for line in doc.frontmatter_lines if not line.startswith("updated:")], doc.body


def remember(
    ws: Workspace,
    *,
    kind: str,
    title: str,
    body: str,
    tags: Sequence[str] = (),
    expires: str | None = None,
    description: str | None = None,
    scope: Literal["project", "global"] = "project",
    hard_rule: bool = False,
    project: str | None = None,
    exact_tags: bool = False,
) -> RememberResult:
    """Save a memory as `<root>/<kind>/<slug>.md`; the same scope and title updates it in place,
    keeping its tags unless given (or `exact_tags`: an editor's tags, none included). Raises
    SecretRefused (nothing written) for a field that looks like a credential, InvalidInput for
    unusable arguments; the file is parsed once, to check it reads back, and indexed from that."""
    now = ws.clock()
    draft = _draft(now, kind, title, body, tags, expires, description, exact_tags)
    if hard_rule:
        draft.changes["hard_rule"] = True  # listed in ROOT.md and given to every session
    if project:
        draft.changes["project"] = project  # the project it belongs to (scopes a global-tree memory)
    root, note = ws.root_for(scope), ws.opt_in_note(scope)
    if root.exists():
        ws.refresh([root])  # the same title may have been written by hand since
    folder = root.path / draft.kind
    existing = _existing(ws, root, draft.title, draft.kind)
    moved_from: Path | None = None
    if existing is None:
        path, like = _free_path(folder, draft.title), None
        text = render_memory({"id": new_id(), **draft.changes, "created": now}, draft.body)
        doc = split_document(text)  # never write a file memoryd could not read back
    else:
        text, doc, changed = _rewrite(existing, draft, ws.index.max_file_bytes)
        path = like = existing.path
        if not changed and draft.kind in (existing.category, existing.kind.lower()):
            log.debug("memory.unchanged", extra={"kind": draft.kind, "title": draft.title, "path": str(path)})
            return RememberResult(existing, False, None, (), note)
        # A hand-made tree may file kind "decision" under decisions/: that is no change of kind.
        if draft.kind not in (existing.category, existing.kind.lower()):
            moved_from, path = existing.path, _free_path(folder, draft.title)

    _write_memory(root, path, text, like)
    if moved_from is not None:
        moved_from.unlink(missing_ok=True)
        ws.index.remove_file(moved_from)
    st = path.stat()
    memory, warnings = memory_from_document(doc, path, root, content_hash(text.encode("utf-8")), st.st_mtime)
    written = ws.index.put(memory, st, warnings)
    paths = {str(path)} | ({str(moved_from)} if moved_from is not None else set())
    touched = {Path(p).parent.name for p in paths}
    compiled = _compile(root, ws.index, SyncReport(len(paths), touched, frozenset(paths), written.root_tables or len(paths) > 1))
    log.info(
        "memory.remembered", extra={"kind": draft.kind, "title": draft.title, "path": str(path), "new": existing is None}
    )
    return RememberResult(memory, existing is None, moved_from, tuple(compiled), note)


def _compile(root: MemoryRoot, index: SearchIndex, changes: SyncReport) -> list[Path]:
    """Bring the changed memories' index.md lines (and ROOT.md, if it lists them) up to date."""
    # Imported here: recall, list and inspect never compile.
    from daemon.memory.compile import compile_root

    return compile_root(root, index, changes=changes)


def _existing(ws: Workspace, root: MemoryRoot, title: str, kind: str) -> Memory | None:
    # Session notes belong to the capture pipeline (it rewrites them when the session
    # changes): a memory with the same title is a new file, never an update of a note.
    matches = [
        m for m in ws.index.find_by_title(root, title) if m.path.exists() and (m.kind != "session" or kind == "session")
    ]
    if not matches:
        return None
    # Hand-made duplicates: the one in the target category wins, then the newest.
    matches.sort(key=lambda m: (m.category != kind, -m.newest.timestamp()))
    return matches[0]


# --- recall ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallResult:
    """Ranked hits for a query, and whether they needed the prefix retry."""

    query: str
    hits: list[Hit]
    mode: Literal["strict", "prefix", "none"]
    limit: int


def clamp_limit(limit: int | None, default: int = 10) -> int:
    """Return `limit` within 1..50 (the default when None)."""
    return max(MIN_LIMIT, min(MAX_LIMIT, default if limit is None else int(limit)))


def recall(
    ws: Workspace,
    query: str,
    *,
    limit: int | None = 10,
    scope: ScopeChoice = "all",
    refresh: bool = True,
    count_hits: bool = True,
    every_project: bool = False,
) -> RecallResult:
    """Search the caller's trees; project entries shadow global ones with the same title.
    Of the global tree, only the machine-wide memories and this project's, as in a
    session's block, unless `every_project` (other projects' notes kept there too)."""
    if not query.strip():
        raise InvalidInput("the query is empty: give a few words to look for")
    limit = clamp_limit(limit)
    roots = ws.roots(scope)
    if refresh:
        ws.refresh(roots)
    counters = ws.hits.read()
    project = None if every_project else ws.project_key
    result = ws.index.search(query, roots, limit, now=ws.clock(), hits=counters, project=project)
    if not result.terms:
        raise InvalidInput(f"the query {query!r} has no searchable words")
    if count_hits and result.hits:
        ws.hits.add([h.memory.id for h in result.hits], counters)
    return RecallResult(query, result.hits, result.mode, limit)


# --- forget ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ForgetResult:
    """The memories deleted and the compiled files rewritten as a result."""

    deleted: list[Memory]
    compiled: tuple[Path, ...] = ()


def _confirmed(memory: Memory) -> bool:
    """True when the file still holds the memory the index says it does."""
    try:
        current, _ = read_memory(memory.path, memory.root)
    except MemoryFileError:
        return False
    return current.id == memory.id


def find_by_id(ws: Workspace, memory_id: str) -> Memory:
    """Return the memory with this id in any known tree; raise MemoryNotFound otherwise."""
    memory_id = memory_id.strip()
    if not memory_id:
        raise InvalidInput("give the id of the memory (memoryd list shows ids)")
    ws.refresh()
    matches = ws.index.find_by_id(memory_id)
    stale = [m for m in matches if not _confirmed(m)]
    if stale:
        # The file moved or changed since it was indexed: look again in those trees.
        ws.refresh(list({m.root for m in stale}))
        matches = [m for m in ws.index.find_by_id(memory_id) if _confirmed(m)]
    if not matches:
        raise MemoryNotFound(
            f"no memory has the id {memory_id!r}. `memoryd list` shows ids in this project and the "
            "global tree; `memoryd reindex` picks up trees changed while memoryd was not running"
        )
    if len(matches) > 1:
        where = ", ".join(str(m.path) for m in matches)
        raise InvalidInput(f"the id {memory_id!r} is used by several files ({where}); give each its own id by hand")
    return matches[0]


def forget_by_id(ws: Workspace, memory_id: str) -> ForgetResult:
    """Delete the memory with this id, wherever it is (ids are unique)."""
    memory = find_by_id(ws, memory_id)
    return delete_memories(ws, [memory], anywhere=True)


def forget_by_query(ws: Workspace, query: str, *, limit: int | None = 10) -> list[Memory]:
    """Return the memories a forget by query would delete: every term must match.

    Only the caller's project tree and the global tree are searched, so a loose query
    can never reach another project. Nothing is deleted here: pass the candidates the
    person confirmed to `delete_memories`.
    """
    if not query.strip():
        raise InvalidInput("the query is empty: give the words the memories to forget contain")
    roots = ws.roots("all")
    ws.refresh(roots)
    result = ws.index.search(query, roots, clamp_limit(limit), now=ws.clock(), prefix_retry=False)
    return [hit.memory for hit in result.hits]


def delete_memories(ws: Workspace, memories: Sequence[Memory], *, anywhere: bool = False) -> ForgetResult:
    """Delete these memory files and recompile their trees.

    Only memories of the caller's project tree and the global tree may go, unless
    `anywhere` (deleting by id); any other raises InvalidInput before anything is deleted.
    """
    allowed = ws.roots("all")
    outside = [m for m in memories if not anywhere and m.root not in allowed]
    if outside:
        raise InvalidInput(f"{outside[0].path} is outside this project's tree and the global tree: nothing deleted")
    deleted: list[Memory] = []
    touched: dict[MemoryRoot, set[str]] = {}
    for memory in memories:
        try:
            memory.path.unlink()
        except FileNotFoundError:
            pass
        ws.index.remove_file(memory.path)
        deleted.append(memory)
        touched.setdefault(memory.root, set()).add(str(memory.path))
        log.info("memory.forgotten", extra={"title": memory.title, "path": str(memory.path), "memory_id": memory.id})
    compiled: list[Path] = []
    for root, paths in touched.items():
        categories = {Path(p).parent.name for p in paths}
        compiled.extend(_compile(root, ws.index, SyncReport(len(paths), categories, frozenset(paths), True)))
    return ForgetResult(deleted, tuple(compiled))


# --- inspect, inventory, list ---------------------------------------------------------


@dataclass(frozen=True)
class MemoryDetail:
    """One memory read fresh from its file, with its raw text and recall count."""

    memory: Memory
    text: str
    hits: int


def inspect(ws: Workspace, memory_id: str) -> MemoryDetail:
    """Return one memory by id, read from its file (its head, for a file over the size cap)."""
    found = find_by_id(ws, memory_id)
    limit = ws.index.max_file_bytes
    try:
        data, st = read_head(found.path, limit)
        memory, _ = memory_from_bytes(found.path, found.root, data, st)
        text = data.decode("utf-8", errors="replace")
        if st.st_size > len(data):
            text += f"\n… (cut: the file has {st.st_size} bytes; memory.max_file_bytes is {limit})\n"
    except (OSError, MemoryFileError) as exc:
        raise MemoryNotFound(f"{found.path} can no longer be read ({exc}); run `memoryd reindex`") from exc
    return MemoryDetail(memory, text, ws.hits.read().get(memory.id, 0))


def list_memories(
    ws: Workspace,
    *,
    kind: str | None = None,
    scope: ScopeChoice = "all",
    limit: int | None = None,
    refresh: bool = True,
) -> list[Memory]:
    """Return the live memories of a scope, newest first (of one kind, if given)."""
    roots = ws.roots(scope)
    if refresh:
        ws.refresh(roots)
    return ws.index.visible(roots, ws.clock(), kind=kind.strip() if kind else None, limit=limit)


@dataclass(frozen=True)
class Inventory:
    """What a session is shown at start: a bounded list of titles (no bodies)."""

    text: str
    shown: int
    total: int


def inventory(ws: Workspace, *, budget: int = INVENTORY_CHARS, refresh: bool = True) -> Inventory:
    """Return the inventory a session here sees (this project's curated memories, lessons and
    gotchas first, then machine-wide ones, then this project's sessions; never another
    project's), hard rules included and marked, within `budget` characters."""
    from daemon.memory.context import inventory_lines
    from daemon.memory.roots import project_of_root

    roots = ws.roots("all")
    if refresh:
        ws.refresh(roots)
    now = ws.clock()
    project = project_of_root(ws.project) if ws.project is not None else None
    total = ws.index.count_visible(roots, now, project)
    if not total:
        return Inventory("No memories yet. Save one with `memoryd remember`.", 0, 0)
    header = f"Memories: {total} (lessons and gotchas first, then newest). `memoryd inspect ID` shows one."
    lines, shown, total = inventory_lines(
        ws.index, roots, now, budget - len(header) - 1,
        hard_rules_too=True, more_hint="`memoryd list` or `memoryd recall QUERY`", project=project,
    )  # fmt: skip
    return Inventory("\n".join([header, *lines]), shown, total)
