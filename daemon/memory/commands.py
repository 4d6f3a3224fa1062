"""remember / recall / forget / inspect / list on the Markdown trees.

The semantics of an opencode-memory style store (upsert by scope and title, a secret
guard at the door, scoped forget, a bounded inventory, lessons first) applied to
Markdown files. The CLI and the MCP server are thin layers over these functions: they
return dataclasses and raise MemoryCommandError subclasses whose messages tell a person
what to do.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from daemon.files import FILE_MODE, atomic_write_text, ensure_dir, slugify
from daemon.memory.index import Hit, SearchIndex
from daemon.memory.tree import (
    RESERVED_STEMS,
    Memory,
    MemoryFileError,
    MemoryRoot,
    add_hits,
    edit_memory,
    global_tree,
    is_in_worktree,
    new_id,
    parse_time,
    project_tree,
    read_hits,
    read_memory,
    render_memory,
    split_document,
)

if TYPE_CHECKING:
    from daemon.config import Paths, Settings

log = logging.getLogger("memoryd.memory.commands")

ScopeChoice = Literal["project", "global", "all"]
SCOPES: tuple[ScopeChoice, ...] = ("project", "global", "all")

MAX_KIND = 32
MAX_TITLE = 120
MAX_BODY = 20_000
MAX_TAGS = 12
MAX_TAG = 40
MAX_DESCRIPTION = 300
DESCRIPTION_CHARS = 160
MIN_LIMIT, MAX_LIMIT = 1, 50
INVENTORY_CHARS = 1200

_KIND = re.compile(r"[^\W_][\w-]*")
_DURATION = re.compile(r"(\d+)\s*(h|d|w|mo|y)")
_DURATION_UNITS = {
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
    "mo": timedelta(days=30),
    "y": timedelta(days=365),
}


class MemoryCommandError(Exception):
    """A memory command that cannot do what was asked; the message says what to do."""


class InvalidInput(MemoryCommandError):
    """The arguments cannot be used as given."""


class SecretRefused(MemoryCommandError):
    """The content looks like a credential; nothing was written."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        self.fields = fields
        described = "; ".join(f"the {name} ({', '.join(kinds)})" for name, kinds in fields.items())
        super().__init__(
            f"refusing to save: {described} looks like it holds a credential. Memory files are "
            "plain text that agents read and trees sync: write where the secret lives instead "
            "(e.g. 'the key is in $OPENAI_API_KEY'). Nothing was written."
        )


class MemoryNotFound(MemoryCommandError):
    """No memory has the given id."""


# --- workspace ------------------------------------------------------------------------


@dataclass
class Workspace:
    """What one caller sees: the global tree, its project's tree, and the search index."""

    index: SearchIndex
    global_root: MemoryRoot
    project: MemoryRoot | None = None
    # False when the caller's directory is in no git worktree and named no project
    # explicitly: `remember` then will not invent a `.memory/` in a random folder.
    project_is_real: bool = True
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    # True when something else (the running daemon) keeps the index current: reads
    # then skip the per-file check of trees the index already knows.
    trust_index: bool = False

    def close(self) -> None:
        """Close the search index (a long-running server calls this on shutdown)."""
        self.index.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def roots(self, scope: ScopeChoice = "all") -> list[MemoryRoot]:
        """Return the roots of a scope: the project's, the global one, or both (project first)."""
        if scope not in SCOPES:
            raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        roots: list[MemoryRoot] = []
        if scope in ("project", "all") and self.project is not None and self.project.path != self.global_root.path:
            roots.append(self.project)
        if scope in ("global", "all"):
            roots.append(self.global_root)
        return roots

    def refresh(self, roots: Sequence[MemoryRoot] | None = None) -> int:
        """Bring the index up to date with the trees; return how many entries changed."""
        changed = 0
        for root in self.roots("all") if roots is None else roots:
            if self.trust_index and self.index.knows(root):
                continue
            if root.exists():
                changed += self.index.sync_root(root)
            elif self.index.count([root]):
                changed += self.index.forget_root(root)
        return changed

    def root_for(self, scope: Literal["project", "global"]) -> MemoryRoot:
        """Return the root a new memory of this scope goes to."""
        if scope == "global":
            return self.global_root
        if self.project is None or not (self.project_is_real or self.project.exists()):
            raise InvalidInput(
                "this directory is not inside a git worktree, so it has no project memory; "
                "use --global, or --project DIR to name the project"
            )
        return self.project


def open_workspace(
    settings: Settings,
    paths: Paths,
    project_dir: Path | None,
    *,
    explicit_project: bool = False,
    index: SearchIndex | None = None,
) -> Workspace:
    """Return the workspace of a caller in `project_dir` (None: global only)."""
    index = index or SearchIndex(paths.index_db, settings.source.busy_timeout_ms)
    project = project_tree(project_dir) if project_dir is not None else None
    real = project_dir is not None and (explicit_project or is_in_worktree(project_dir))
    return Workspace(index, global_tree(paths), project, real)


# --- input checks ---------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def normalize_kind(kind: str) -> str:
    """Return a kind fit to be a folder name, or raise InvalidInput saying why not."""
    kind = kind.strip().lower()
    if not kind or len(kind) > MAX_KIND or not _KIND.fullmatch(kind):
        raise InvalidInput(
            f"kind {kind[:40]!r} is not usable: use one short word (letters, digits, - or _, at "
            f"most {MAX_KIND} characters), such as decision, fact, preference, gotcha or lesson"
        )
    return kind


def _tags(tags: Sequence[str]) -> tuple[str, ...]:
    cleaned = tuple(dict.fromkeys(t for t in (_one_line(tag) for tag in tags) if t))
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags, got {len(cleaned)}")
    for tag in cleaned:
        if len(tag) > MAX_TAG or "," in tag:
            raise InvalidInput(f"tag {tag[:50]!r} is not usable: at most {MAX_TAG} characters, no commas")
    return cleaned


def parse_expiry(value: str, now: datetime) -> date | datetime:
    """Return the expiry for an ISO date/datetime or a duration (12h, 30d, 2w, 6mo, 1y) from now."""
    text = value.strip().lower()
    match = _DURATION.fullmatch(text)
    if match:
        moment = now + int(match.group(1)) * _DURATION_UNITS[match.group(2)]
        result: date | datetime = moment.replace(microsecond=0)
    else:
        try:
            result = date.fromisoformat(value.strip()) if len(value.strip()) == 10 else parse_time(value)
        except (ValueError, MemoryFileError) as exc:
            raise InvalidInput(
                f"--expires {value!r}: give a date (2025-12-31), a datetime (2025-12-31T18:00:00Z) "
                "or a duration from now (12h, 30d, 2w, 6mo, 1y)"
            ) from exc
    end = parse_time(result, end_of_day=True)
    if end is None or end <= now:
        raise InvalidInput(f"--expires {value!r} is already past; give a future date or a duration")
    return result


def derive_description(body: str) -> str:
    """Return a one-line description: the body's first sentence or line, shortened."""
    for line in body.splitlines():
        line = _one_line(line.lstrip("#>*- ").strip())
        if line:
            sentence = re.split(r"(?<=[.!?。！？])\s", line, maxsplit=1)[0]
            if len(sentence) <= DESCRIPTION_CHARS:
                return sentence
            return sentence[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return ""


def check_secrets(fields: dict[str, str]) -> None:
    """Raise SecretRefused when any field looks like it holds a credential."""
    from daemon.scrub import find_secrets

    found = {name: kinds for name, text in fields.items() if (kinds := find_secrets(text))}
    if found:
        log.warning("memory.refused", extra={"fields": sorted(found), "reason": "credential-like content"})
        raise SecretRefused(found)


# --- remember -------------------------------------------------------------------------


@dataclass(frozen=True)
class RememberResult:
    """The memory as saved, whether it is new, and where it was before a kind change."""

    memory: Memory
    created: bool
    moved_from: Path | None = None
    compiled: tuple[Path, ...] = ()


def _free_path(folder: Path, title: str) -> Path:
    """Return `<folder>/<slug>.md` for a title, numbered when another file has that name."""
    stem = slugify(title)
    if stem.casefold() in RESERVED_STEMS:
        stem += "-memory"  # index.md and ROOT.md belong to compile
    candidate, n = folder / f"{stem}.md", 2
    while candidate.exists() or candidate.is_symlink():
        candidate, n = folder / f"{stem}-{n}.md", n + 1
    return candidate


def _write_memory(path: Path, text: str, like: Path | None = None) -> None:
    # A rewrite keeps the file's mode (a repo's 0644); new memories are private.
    mode = FILE_MODE
    if like is not None:
        try:
            mode = like.stat().st_mode & 0o777
        except FileNotFoundError:
            pass
    atomic_write_text(path, text, mode)


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
) -> RememberResult:
    """Save a memory as `<root>/<kind>/<slug>.md`; the same scope and title updates it in place.

    Raises SecretRefused (nothing written) when any field looks like a credential, and
    InvalidInput for unusable arguments.
    """
    now = ws.clock()
    title = _one_line(title)
    body = body.strip()
    raw_kind = kind
    tag_list = [t for tag in tags for t in tag.split(",")]
    # The guard sees the input as given, before any clean-up could hide a credential.
    check_secrets(
        {
            "title": title,
            "kind": raw_kind,
            "body": body,
            "tags": " ".join(tag_list),
            **({"description": description} if description else {}),
        }
    )
    kind = normalize_kind(raw_kind)
    if not title:
        raise InvalidInput("the title is empty: give a short, specific one (--title 'Use WAL mode')")
    if len(title) > MAX_TITLE:
        raise InvalidInput(f"the title has {len(title)} characters; keep it under {MAX_TITLE}")
    if not body:
        raise InvalidInput("the body is empty: say what to remember (or pass - to read it from stdin)")
    if len(body) > MAX_BODY:
        raise InvalidInput(f"the body has {len(body)} characters; keep a memory under {MAX_BODY}")
    clean_tags = _tags(tag_list)
    summary = _one_line(description) if description else derive_description(body)
    if len(summary) > MAX_DESCRIPTION:
        raise InvalidInput(f"the description has {len(summary)} characters; keep it under {MAX_DESCRIPTION}")
    expiry = parse_expiry(expires, now) if expires else None

    root = ws.root_for(scope)
    if root.exists():
        ws.refresh([root])  # the same title may have been written by hand since
    folder = root.path / kind
    existing = _existing(ws, root, title, kind)
    changes: dict[str, object] = {"title": title, "description": summary, "kind": kind, "updated": now}
    if clean_tags:
        changes["tags"] = list(clean_tags)
    if expiry is not None:
        changes["expires"] = expiry
    if hard_rule:
        changes["hard_rule"] = True  # listed in ROOT.md and given to every session

    moved_from: Path | None = None
    if existing is None:
        path = _free_path(folder, title)
        fields = {"id": new_id(), **changes, "created": now}
        text = render_memory(fields, body)
        like = None
        split_document(text)  # never write a file memoryd could not read back
    else:
        try:
            current = existing.path.read_text(encoding="utf-8")
            if "id" not in split_document(current).fields:
                changes["id"] = existing.id  # write down the id people may already use
            text = edit_memory(current, changes, body)
        except (OSError, UnicodeDecodeError, MemoryFileError) as exc:
            raise InvalidInput(
                f"cannot update {existing.path} safely ({exc}); edit it by hand or forget it first"
            ) from exc
        path = existing.path
        # A hand-made tree may file kind "decision" under decisions/: that is no change of kind.
        if kind not in (existing.category, existing.kind.lower()):
            moved_from, path = existing.path, _free_path(folder, title)
        like = existing.path

    ensure_dir(path.parent)
    _write_memory(path, text, like)
    if moved_from is not None:
        moved_from.unlink(missing_ok=True)
        ws.index.remove_file(moved_from)
    ws.index.update_file(path, root)
    touched = {path.parent.name} | ({moved_from.parent.name} if moved_from is not None else set())
    compiled = _compile(root, ws.index, touched)
    memory, _ = read_memory(path, root)
    log.info("memory.remembered", extra={"kind": kind, "title": title, "path": str(path), "new": existing is None})
    return RememberResult(memory, existing is None, moved_from, tuple(compiled))


def _compile(root: MemoryRoot, index: SearchIndex, categories: set[str]) -> list[Path]:
    """Recompile the touched categories' index.md and ROOT.md from the (current) index."""
    # Imported here: recall, list and inspect never compile.
    from daemon.memory.compile import compile_root

    return compile_root(root, index=index, categories=categories)


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
) -> RecallResult:
    """Search the caller's trees; project entries shadow global ones with the same title."""
    if not query.strip():
        raise InvalidInput("the query is empty: give a few words to look for")
    limit = clamp_limit(limit)
    roots = ws.roots(scope)
    if refresh:
        ws.refresh(roots)
    counters: dict[str, int] = {}
    for root in roots:
        counters.update(read_hits(root))
    result = ws.index.search(query, roots, limit, now=ws.clock(), hits=counters)
    if not result.terms:
        raise InvalidInput(f"the query {query!r} has no searchable words")
    if count_hits and result.hits:
        for root in roots:
            ids = [h.memory.id for h in result.hits if h.memory.root == root]
            add_hits(root, ids)
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
        touched.setdefault(memory.root, set()).add(memory.category)
        log.info("memory.forgotten", extra={"title": memory.title, "path": str(memory.path), "memory_id": memory.id})
    compiled: list[Path] = []
    for root, categories in touched.items():
        compiled.extend(_compile(root, ws.index, categories))
    return ForgetResult(deleted, tuple(compiled))


# --- inspect, inventory, list ---------------------------------------------------------


@dataclass(frozen=True)
class MemoryDetail:
    """One memory read fresh from its file, with its raw text and recall count."""

    memory: Memory
    text: str
    hits: int


def inspect(ws: Workspace, memory_id: str) -> MemoryDetail:
    """Return one memory by id, read from its file."""
    found = find_by_id(ws, memory_id)
    try:
        memory, _ = read_memory(found.path, found.root)
        text = found.path.read_text(encoding="utf-8")
    except (OSError, MemoryFileError) as exc:
        raise MemoryNotFound(f"{found.path} can no longer be read ({exc}); run `memoryd reindex`") from exc
    return MemoryDetail(memory, text, read_hits(found.root).get(memory.id, 0))


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


def _day(memory: Memory) -> str:
    return memory.newest.strftime("%Y-%m-%d")


def inventory_line(memory: Memory) -> str:
    """Return one inventory line: kind, title, date, scope and id."""
    title = memory.title if len(memory.title) <= 80 else memory.title[:79] + "…"
    rule = ", hard rule" if memory.hard_rule else ""
    return f"- [{memory.kind}] {title} ({_day(memory)}, {memory.scope}{rule}, id {memory.id})"


def inventory(ws: Workspace, *, budget: int = INVENTORY_CHARS, refresh: bool = True) -> Inventory:
    """Return the inventory a session sees: lessons first, then newest, within `budget` characters."""
    roots = ws.roots("all")
    if refresh:
        ws.refresh(roots)
    now = ws.clock()
    total = ws.index.count_visible(roots, now)
    if not total:
        return Inventory("No memories yet. Save one with `memoryd remember`.", 0, 0)
    # Even the shortest line takes ~40 characters: more than budget/40 can never show.
    ordered = ws.index.visible(roots, now, limit=budget // 40 + 1, lessons_first=True)
    header = f"Memories: {total} (lessons first, then newest). `memoryd inspect ID` shows one."

    def more(count: int) -> str:
        return f"… {count} more: `memoryd list` or `memoryd recall QUERY`"

    lines = [header]
    used = len(header)
    for number, memory in enumerate(ordered):
        line = inventory_line(memory)
        rest = total - number - 1
        # Leave room for the "more" line unless this is the last entry.
        reserve = 1 + len(more(rest)) if rest else 0
        if used + 1 + len(line) + reserve > budget:
            break
        lines.append(line)
        used += 1 + len(line)
    shown = len(lines) - 1
    if shown < total:
        lines.append(more(total - shown))
    return Inventory("\n".join(lines), shown, total)
