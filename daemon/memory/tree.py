"""Memory trees: roots, memory files (parse, render, edit) and the scan of a root.

A tree is `<root>/ROOT.md`, `<root>/<category>/<slug>.md` memories and compiled
`<root>/<category>/index.md` files. Two kinds of root share that shape: the global one
(`$XDG_CONFIG_HOME/opencode/memory/`) and one per project (`<worktree>/.memory/`).

Memory files are the truth. memoryd reads every well-formed one, reports and skips the
rest (broken YAML, no frontmatter, symlinks leaving the root, loops, unreadable files)
and never rewrites a file it cannot parse. When it does rewrite a memory (an explicit
`remember` of the same title), only the lines of the fields it sets change: unknown
fields, comments and key order stay byte-for-byte.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import secrets
import stat as stat_module
import time as time_module
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from daemon.timefmt import format_time

if TYPE_CHECKING:
    from daemon.config import Paths, Settings

log = logging.getLogger("memoryd.memory.tree")

Scope = Literal["global", "project"]

PROJECT_TREE_DIR = ".memory"
ROOT_FILE = "ROOT.md"
INDEX_FILE = "index.md"
STATE_FILE = ".state.json"
EXPIRED_DIR = ".expired"
MEMORY_SUFFIX = ".md"
# File names a memory may not take: compile owns them.
RESERVED_STEMS = frozenset({"index", "root"})
# Hidden files and folders (.git, .obsidian, .expired, .state.json) are never memories.
HIDDEN_PREFIX = "."


class MemoryFileError(Exception):
    """A memory file memoryd cannot use; the message says why and what to do."""


@dataclass(frozen=True)
class MemoryRoot:
    """One memory tree: its folder (absolute, symlinks resolved) and its scope."""

    path: Path
    scope: Scope

    def __post_init__(self) -> None:
        if self.scope not in ("global", "project"):
            raise ValueError(f"scope must be 'global' or 'project', not {self.scope!r}")
        # Resolved once so that the same tree always has the same key in the index.
        object.__setattr__(self, "path", Path(os.path.abspath(Path(self.path).expanduser())).resolve())

    @property
    def key(self) -> str:
        """The string that names this root in the index."""
        return str(self.path)

    @property
    def state_file(self) -> Path:
        return self.path / STATE_FILE

    @property
    def root_file(self) -> Path:
        return self.path / ROOT_FILE

    @property
    def expired_dir(self) -> Path:
        return self.path / EXPIRED_DIR

    def exists(self) -> bool:
        return self.path.is_dir()


@dataclass(frozen=True)
class Problem:
    """A file that was skipped (or only partly understood), and why."""

    path: Path
    reason: str
    skipped: bool = True

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class Memory:
    """One memory file as memoryd understands it.

    `body` is empty when the memory comes from the search index rather than the file;
    `mtime` (the file's) orders memories that carry no dates.
    """

    path: Path
    root: MemoryRoot
    category: str
    id: str
    title: str
    description: str = ""
    kind: str = ""
    tags: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    hard_rule: bool = False
    created: datetime | None = None
    updated: datetime | None = None
    expires: datetime | None = None
    body: str = ""
    content_hash: str = ""
    mtime: float = 0.0

    @property
    def filename(self) -> str:
        return self.path.name

    @property
    def scope(self) -> Scope:
        return self.root.scope

    @property
    def title_key(self) -> str:
        return title_key(self.title)

    @property
    def newest(self) -> datetime:
        """The time used for "newest first": updated, else created, else the file's mtime."""
        return self.updated or self.created or datetime.fromtimestamp(self.mtime, UTC)

    def relative_path(self) -> str:
        """This memory's path relative to its root, with `/` separators."""
        return f"{self.category}/{self.filename}"

    def is_expired(self, now: datetime) -> bool:
        return self.expires is not None and self.expires <= now


# --- names and keys -------------------------------------------------------------------


def title_key(title: str) -> str:
    """Return the form under which two titles count as the same (case, width, spaces)."""
    return " ".join(unicodedata.normalize("NFKC", title).casefold().split())


def new_id() -> str:
    """Return a fresh memory id (12 hex digits: unique enough across every tree)."""
    return secrets.token_hex(6)


def derived_id(root: MemoryRoot, relative: str) -> str:
    """Return the id of a memory whose file has none: stable while the file stays put."""
    digest = hashlib.sha256(f"{root.key}\0{relative}".encode()).hexdigest()
    return digest[:12]


def content_hash(data: bytes) -> str:
    """Return the hash the index keys a file's content by (scheme tag included)."""
    return "b2:" + hashlib.blake2b(data, digest_size=16).hexdigest()


# --- roots ----------------------------------------------------------------------------


def _find_worktree(directory: Path) -> Path | None:
    # Walking up to a `.git` (a folder, or a file in linked worktrees and submodules)
    # gives the same answer as `git rev-parse --show-toplevel` without a subprocess,
    # which matters on the `memoryd recall` path.
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_root_of(directory: Path) -> Path:
    """Return the worktree top of `directory` (symlinks resolved), or the directory itself."""
    resolved = Path(directory).expanduser().resolve()
    return _find_worktree(resolved) or resolved


def is_in_worktree(directory: Path) -> bool:
    """True when `directory` lies inside a git worktree."""
    return _find_worktree(Path(directory).expanduser().resolve()) is not None


def project_tree(directory: Path) -> MemoryRoot:
    """Return the project memory root for a directory inside a project."""
    return MemoryRoot(project_root_of(directory) / PROJECT_TREE_DIR, "project")


def global_tree(paths: Paths) -> MemoryRoot:
    """Return the global memory root."""
    return MemoryRoot(paths.global_root, "global")


def roots_for(settings: Settings, paths: Paths, project_dir: Path | None) -> list[MemoryRoot]:
    """Return the global root and, given a directory, the project root it belongs to.

    The roots need not exist yet (`remember` creates them). `settings` is taken so that
    callers need not change when roots become configurable per caller.
    """
    roots = [global_tree(paths)]
    if project_dir is not None:
        project = project_tree(project_dir)
        if project.path != roots[0].path:
            roots.append(project)
    return roots


def discover_roots(
    settings: Settings,
    paths: Paths,
    project_dirs: Iterable[Path] = (),
    extra_roots: Iterable[MemoryRoot] = (),
) -> list[MemoryRoot]:
    """Return every existing tree: global, configured projects, the given directories' projects.

    `project_dirs` are directories OpenCode sessions ran in (or the caller's own);
    `extra_roots` are roots known from elsewhere (e.g. the index). Missing trees are left out.
    """
    candidates = [global_tree(paths)]
    dirs = [Path(p).expanduser() for p in settings.memory.project_roots]
    dirs.extend(Path(p) for p in project_dirs)
    candidates.extend(project_tree(d) for d in dirs)
    candidates.extend(extra_roots)
    seen: dict[Path, MemoryRoot] = {}
    for root in candidates:
        if root.path not in seen and root.exists():
            seen[root.path] = root
    return list(seen.values())


# --- frontmatter ----------------------------------------------------------------------

_FENCE = "---"
_CLOSERS = ("---", "...")
# A top-level YAML key at column 0: plain, or quoted.
_TOP_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#'"\-?:][^:]*?))\s*:(?:\s|$)""")


@dataclass
class Document:
    """A memory file split into its raw frontmatter lines, the parsed fields and the body."""

    frontmatter_lines: list[str]
    fields: dict[str, Any]
    body: str
    newline: str = "\n"


def _yaml_load(text: str) -> Any:
    import yaml  # imported on first parse: `memoryd recall` rarely needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader


def split_document(text: str) -> Document:
    """Split a memory file's text; raise MemoryFileError when it has no usable frontmatter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    newline = "\r\n" if text.startswith(_FENCE + "\r\n") else "\n"
    lines = text.split(newline)
    if not lines or lines[0].rstrip() != _FENCE:
        raise MemoryFileError("no frontmatter: the file must start with a '---' line and YAML fields")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in _CLOSERS:
            break
    else:
        raise MemoryFileError("frontmatter is not closed: add a '---' line after the YAML fields")
    raw = lines[1:end]
    import yaml

    try:
        fields = _yaml_load("\n".join(raw))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        # ValueError: a scalar YAML resolves but cannot build, such as 2025-13-45.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise MemoryFileError(f"broken YAML in the frontmatter{where}: {problem}") from exc
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        raise MemoryFileError("the frontmatter is not a set of 'key: value' fields")
    body = newline.join(lines[end + 1 :])
    return Document(raw, fields, body, newline)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return " ".join(str(value).split())


def _string_list(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        items = (value,)
    return tuple(t for t in (_text(item) for item in items) if t)


def parse_time(value: Any, *, end_of_day: bool = False) -> datetime | None:
    """Return an aware UTC datetime for a YAML date/datetime or ISO string; None if empty.

    A bare date means the start of that day (UTC), or with `end_of_day` the start of the
    next one: `expires: 2025-01-31` keeps a memory through the 31st.
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            if "T" in text or " " in text:
                value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            else:
                value = date.fromisoformat(text)
        except ValueError as exc:
            raise MemoryFileError(f"not an ISO date or datetime: {value!r}") from exc
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        start = datetime.combine(value, time(0), UTC)
        return start + timedelta(days=1) if end_of_day else start
    raise MemoryFileError(f"not a date: {value!r}")


def _first_heading(body: str) -> str:
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def memory_from_document(
    doc: Document,
    path: Path,
    root: MemoryRoot,
    data_hash: str = "",
    mtime: float = 0.0,
) -> tuple[Memory, list[Problem]]:
    """Return the Memory a parsed document describes, and any field-level warnings."""
    fields = doc.fields
    category = path.parent.name
    warnings: list[Problem] = []

    def when(name: str, *, end_of_day: bool = False) -> datetime | None:
        try:
            return parse_time(fields.get(name), end_of_day=end_of_day)
        except MemoryFileError as exc:
            warnings.append(Problem(path, f"field '{name}' ignored: {exc}", skipped=False))
            return None

    title = _text(fields.get("title")) or _first_heading(doc.body) or path.stem
    raw_id = _text(fields.get("id"))
    hard = fields.get("hard_rule")
    memory = Memory(
        path=path,
        root=root,
        category=category,
        id=raw_id or derived_id(root, f"{category}/{path.name}"),
        title=title,
        description=_text(fields.get("description")),
        kind=_text(fields.get("kind")) or category,
        tags=_string_list(fields.get("tags")),
        scenarios=_string_list(fields.get("scenarios")),
        hard_rule=hard is True or (isinstance(hard, str) and hard.strip().lower() in ("true", "yes")),
        created=when("created") or when("started"),
        updated=when("updated"),
        expires=when("expires", end_of_day=True),
        body=doc.body.strip(),
        content_hash=data_hash,
        mtime=mtime,
    )
    return memory, warnings


def read_memory(path: Path, root: MemoryRoot) -> tuple[Memory, list[Problem]]:
    """Read and parse one memory file; raise MemoryFileError (with the reason) when unusable."""
    try:
        data = path.read_bytes()
        stat = path.stat()
    except PermissionError as exc:
        raise MemoryFileError("unreadable: permission denied") from exc
    except OSError as exc:
        raise MemoryFileError(f"unreadable: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFileError("not UTF-8 text") from exc
    doc = split_document(text)
    return memory_from_document(doc, path, root, content_hash(data), stat.st_mtime)


# --- rendering and editing ------------------------------------------------------------

# The order memoryd writes its own fields in; unknown fields follow in file order.
FIELD_ORDER = ("id", "title", "description", "kind", "tags", "scenarios", "hard_rule", "created", "updated", "expires")


def _yaml_line(key: str, value: Any) -> list[str]:
    """Return `key: value` as YAML lines (quoted as YAML needs; lists in flow style)."""
    if isinstance(value, datetime):
        return [f"{key}: {format_time(value)}"]
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    options: dict[str, Any] = {"Dumper": dumper, "allow_unicode": True, "width": 1_000_000}
    if isinstance(value, (list, tuple)):
        return [f"{key}: " + yaml.dump(list(value), default_flow_style=True, **options).strip()]
    text = yaml.dump({key: value}, default_flow_style=False, sort_keys=False, **options)
    return text.rstrip("\n").split("\n")


def render_memory(fields: Mapping[str, Any], body: str) -> str:
    """Return a new memory file: frontmatter (known fields in FIELD_ORDER) and body."""
    lines = ["---"]
    for key in FIELD_ORDER:
        if key in fields and fields[key] not in (None, "", (), []):
            lines.extend(_yaml_line(key, fields[key]))
    for key, value in fields.items():
        if key not in FIELD_ORDER:
            lines.extend(_yaml_line(key, value))
    lines.append("---")
    return "\n".join(lines) + "\n\n" + body.strip() + "\n"


def _entries(lines: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Map each top-level key to the [start, end) range of its lines in the frontmatter."""
    spans: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        match = _TOP_KEY.match(lines[i])
        if not match:
            i += 1
            continue
        key = next(g for g in match.groups() if g is not None).strip()
        j = i + 1
        # A value goes on over indented lines, `- item` lines and blank lines between them.
        while j < len(lines) and (lines[j][:1] in (" ", "\t", "-") or lines[j].strip() == ""):
            j += 1
        while j > i + 1 and lines[j - 1].strip() == "":
            j -= 1
        spans[key] = (i, j)
        i = j
    return spans


def edit_memory(text: str, changes: Mapping[str, Any], body: str | None = None) -> str:
    """Return `text` with the given fields set (and the body replaced, if given).

    Only the lines of the changed fields move: every other byte of the frontmatter is
    kept. Raises MemoryFileError when the result would not read back as intended (YAML
    that a line edit cannot safely change, such as anchors or duplicate keys).
    """
    doc = split_document(text)
    lines = list(doc.frontmatter_lines)
    spans = _entries(lines)
    appended: list[str] = []
    # Replace from the bottom up so earlier spans stay valid.
    for key, value in sorted(changes.items(), key=lambda kv: -spans.get(kv[0], (-1, 0))[0]):
        new = _yaml_line(key, value)
        if key in spans:
            start, end = spans[key]
            lines[start:end] = new
        else:
            appended.extend(new)
    lines.extend(appended)
    nl = doc.newline
    head = nl.join(["---", *lines, "---"]) + nl
    if body is None:
        result = head + doc.body
    else:
        # Keep the file's own line endings for the new body too.
        result = head + nl + nl.join(body.strip().splitlines()) + nl
    check = split_document(result)
    for key, value in doc.fields.items():
        if key not in changes and check.fields.get(key) != value:
            raise MemoryFileError(f"field '{key}' would change on rewrite; edit the file by hand instead")
    for key, value in changes.items():
        expected = _yaml_load("\n".join(_yaml_line(key, value)))[key]
        if check.fields.get(key) != expected:
            raise MemoryFileError(f"field '{key}' cannot be set safely; edit the file by hand instead")
    return result


# --- scanning -------------------------------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def resolve_in_root(path: Path, root: Path) -> Path:
    """Return the real path of `path`; raise MemoryFileError if it leaves `root` or loops."""
    try:
        real = path.resolve(strict=True)
    except RuntimeError as exc:  # Python < 3.13 reports symlink loops this way
        raise MemoryFileError("symlink loop: not followed") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise MemoryFileError("symlink loop: not followed") from exc
        raise MemoryFileError(f"broken symlink or unreadable: {exc.strerror or exc}") from exc
    if not _inside(real, root):
        raise MemoryFileError(f"symlink to {real}, outside the memory tree: not followed")
    return real


def is_memory_name(name: str) -> bool:
    """True for a file name that can hold a memory (`*.md`, not hidden, not index.md)."""
    # memoryd's own temp files start with a dot too, so they never count.
    return name.endswith(MEMORY_SUFFIX) and not name.startswith(HIDDEN_PREFIX) and name != INDEX_FILE


def classify_path(root: MemoryRoot, path: Path) -> Literal["memory", "compiled", "ignored"]:
    """Say what a path inside a root is to memoryd; the watcher acts on "memory" only."""
    try:
        relative = Path(os.path.abspath(path)).relative_to(root.path)
    except ValueError:
        return "ignored"
    parts = relative.parts
    if parts == (ROOT_FILE,) or (len(parts) == 2 and parts[1] == INDEX_FILE):
        return "compiled"
    if len(parts) == 2 and not parts[0].startswith(HIDDEN_PREFIX) and is_memory_name(parts[1]):
        return "memory"
    return "ignored"


@dataclass
class _Entry:
    signature: tuple[int, int, int, int]
    checked_ns: int
    memory: Memory | None
    problems: list[Problem]


class ScanCache:
    """Parsed files keyed by path, reused while a file's stat signature is unchanged.

    A long-running process (the daemon, the MCP server) rescans a 10,000-file tree in a
    few milliseconds this way; a file whose mtime is too close to when it was read is
    re-read anyway, since a same-size rewrite within the clock's granularity would
    otherwise go unnoticed.
    """

    RACY_NS = 2_000_000_000

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._reported: set[Problem] = set()

    def get(self, path: str, signature: tuple[int, int, int, int]) -> _Entry | None:
        entry = self._entries.get(path)
        if entry is None or entry.signature != signature:
            return None
        if signature[0] >= entry.checked_ns - self.RACY_NS:
            return None
        return entry

    def put(self, path: str, entry: _Entry) -> None:
        self._entries[path] = entry

    def forget_missing(self, root: str, present: set[str]) -> None:
        prefix = root + os.sep
        for path in [p for p in self._entries if p.startswith(prefix) and p not in present]:
            del self._entries[path]

    def first_report(self, problem: Problem) -> bool:
        """True the first time this exact problem is seen."""
        if problem in self._reported:
            return False
        self._reported.add(problem)
        return True

    def clear(self) -> None:
        self._entries.clear()
        self._reported.clear()


DEFAULT_CACHE = ScanCache()


def stat_signature(st: os.stat_result) -> tuple[int, int, int, int]:
    """Return what says "this file may have changed": mtime, ctime, size, inode."""
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def list_memory_files(root: MemoryRoot) -> tuple[list[tuple[str, os.stat_result]], list[Problem], list[str]]:
    """Return the candidate memory files of a root with their stat, problems, and categories.

    Paths are strings: this runs on every recall over every file, and building a Path
    per file would cost more than the stat itself. Symlinks are followed only while
    they stay inside the root; the same real file reached twice is listed once.
    """
    files: list[tuple[str, os.stat_result]] = []
    problems: list[Problem] = []
    categories: list[str] = []
    deferred: list[str] = []
    try:
        with os.scandir(root.path) as listing:
            top = sorted(listing, key=lambda e: e.name)
    except FileNotFoundError:
        return files, problems, categories
    except OSError as exc:
        return files, [Problem(root.path, f"unreadable memory tree: {exc.strerror or exc}")], categories
    for entry in top:
        if entry.name.startswith(HIDDEN_PREFIX):
            continue
        linked = entry.is_symlink()
        if linked:
            # A link is followed only while it stays inside the root.
            try:
                resolve_in_root(Path(entry.path), root.path)
            except MemoryFileError as exc:
                problems.append(Problem(Path(entry.path), str(exc)))
                continue
        if not entry.is_dir(follow_symlinks=True):
            continue
        if not linked:
            categories.append(entry.name)
        try:
            with os.scandir(entry.path) as listing:
                for child in listing:
                    if not is_memory_name(child.name):
                        continue
                    if linked or child.is_symlink():
                        deferred.append(child.path)
                        continue
                    try:
                        st = child.stat()
                    except OSError as exc:
                        problems.append(Problem(Path(child.path), f"unreadable: {exc.strerror or exc}"))
                        continue
                    if stat_module.S_ISREG(st.st_mode):
                        files.append((child.path, st))
        except OSError as exc:
            problems.append(Problem(Path(entry.path), f"unreadable folder: {exc.strerror or exc}"))
    if deferred:
        # Links come last so that a real file wins over an alias of it.
        seen = {path for path, _ in files}
        for path in sorted(deferred):
            try:
                real = str(resolve_in_root(Path(path), root.path))
                st = os.stat(path)
            except MemoryFileError as exc:
                problems.append(Problem(Path(path), str(exc)))
                continue
            except OSError as exc:
                problems.append(Problem(Path(path), f"unreadable: {exc.strerror or exc}"))
                continue
            if real not in seen and stat_module.S_ISREG(st.st_mode):
                seen.add(real)
                files.append((path, st))
    return files, problems, categories


def scan(root: MemoryRoot, cache: ScanCache | None = DEFAULT_CACHE) -> tuple[list[Memory], list[Problem]]:
    """Return every memory of a root and the problems met; unchanged files come from `cache`."""
    memories: list[Memory] = []
    files, problems, _ = list_memory_files(root)
    now_ns = time_module.time_ns()
    for path, st in files:
        signature = stat_signature(st)
        entry = cache.get(path, signature) if cache is not None else None
        if entry is None:
            try:
                memory, warnings = read_memory(Path(path), root)
                entry = _Entry(signature, now_ns, memory, warnings)
            except MemoryFileError as exc:
                entry = _Entry(signature, now_ns, None, [Problem(Path(path), str(exc))])
            if cache is not None:
                cache.put(path, entry)
        if entry.memory is not None:
            memories.append(entry.memory)
        problems.extend(entry.problems)
    if cache is not None:
        cache.forget_missing(root.key, {p for p, _ in files})
    for problem in problems:
        # A long-running process rescans often: say each problem once, not on every pass.
        if cache is None or cache.first_report(problem):
            log_problem(problem)
    return memories, problems


def log_problem(problem: Problem) -> None:
    """Log a skipped or partly read file, for the log and `memoryd status`."""
    what = "skipped" if problem.skipped else "partly read"
    log.warning("memory.file_problem", extra={"what": what, "path": str(problem.path), "reason": problem.reason})


# --- hit counters ---------------------------------------------------------------------
# Counters live in `<root>/.state.json`, not in the Markdown: a synced tree would
# otherwise conflict on every recall.


def read_hits(root: MemoryRoot) -> dict[str, int]:
    """Return the recall counters of a root (id → hits); empty when absent or unreadable."""
    import json

    try:
        data = json.loads(root.state_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("memory.hits_unreadable", extra={"path": str(root.state_file), "error": str(exc)})
        return {}
    hits = data.get("hits") if isinstance(data, dict) else None
    if not isinstance(hits, dict):
        return {}
    return {str(k): v for k, v in hits.items() if isinstance(v, int) and v > 0}


def add_hits(root: MemoryRoot, ids: Iterable[str]) -> None:
    """Add one recall to each id's counter in the root's `.state.json`."""
    import json

    from daemon.files import write_if_changed

    ids = list(ids)
    if not ids or not root.exists():
        return
    hits = read_hits(root)
    for memory_id in ids:
        hits[memory_id] = hits.get(memory_id, 0) + 1
    text = json.dumps({"version": 1, "hits": dict(sorted(hits.items()))}, indent=1) + "\n"
    try:
        # Not fsynced: a counter lost in a crash costs nothing, a sync per recall costs time.
        write_if_changed(root.state_file, text, durable=False)
    except OSError as exc:
        # Counters are a ranking hint: a read-only tree must not break recall.
        log.warning("memory.hits_unwritable", extra={"path": str(root.state_file), "error": str(exc)})
