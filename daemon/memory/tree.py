"""Memory files: what memoryd understands of one, and the listing of a root's files.

Memory files are the truth. memoryd reads every well-formed one, reports and skips the
rest (broken YAML, no frontmatter, symlinks leaving the root, loops, unreadable files)
and never rewrites a file it cannot parse (see `frontmatter` for the precise edits).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat as stat_module
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from daemon.memory.frontmatter import Document, MemoryFileError, parse_time, split_document
from daemon.memory.roots import (
    HIDDEN_PREFIX,
    MemoryRoot,
    Scope,
    canonical_project,
    is_memory_name,
    project_of_root,
    resolve_in_root,
)

# Bytes of a memory file read at most (settings: memory.max_file_bytes): a 50 MB file
# must not cost 50 MB, nor its tokens.
MAX_FILE_BYTES = 1_048_576
# A file (or folder) modified this recently (ns) may change again within the clock's
# granularity with the same stat: its signature is not trusted until it is older.
RACY_NS = 2_000_000_000

# The logger keeps the name file problems were always reported under.
log = logging.getLogger("memoryd.memory.tree")


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
    # The project (canonical worktree) this memory belongs to; "" when machine-wide. A
    # project tree's memories are its project's; a global one's say so in `project:`.
    project: str = ""

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
    return os.urandom(6).hex()  # what secrets.token_hex does, without importing secrets (~4 ms)


def derived_id(root: MemoryRoot, relative: str) -> str:
    """Return the id of a memory whose file has none: stable while the file stays put."""
    digest = hashlib.sha256(f"{root.key}\0{relative}".encode()).hexdigest()
    return digest[:12]


def content_hash(data: bytes) -> str:
    """Return the hash the index keys a file's content by (scheme tag included)."""
    return "b2:" + hashlib.blake2b(data, digest_size=16).hexdigest()


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
        project=project_of_root(root) if root.scope == "project" else canonical_project(_text(fields.get("project"))),
    )
    return memory, warnings


def read_head(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """Return at most `limit` bytes from the start of a file, and its stat: never the whole of a huge file."""
    try:
        with open(path, "rb") as handle:
            return handle.read(limit), os.fstat(handle.fileno())
    except PermissionError as exc:
        raise MemoryFileError("unreadable: permission denied") from exc
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise MemoryFileError(f"unreadable: {exc.strerror or exc}") from exc


def _decode_head(data: bytes, truncated: bool) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut can split a character: drop its first bytes, never a real decoding error.
        if truncated and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8")
        raise MemoryFileError("not UTF-8 text") from exc


def memory_from_bytes(
    path: Path, root: MemoryRoot, data: bytes, st: os.stat_result
) -> tuple[Memory, list[Problem]]:
    """Parse a memory from its bytes (all of them, or the head of a file over the size cap)."""
    truncated = st.st_size > len(data)
    doc = split_document(_decode_head(data, truncated))
    memory, warnings = memory_from_document(doc, path, root, content_hash(data), st.st_mtime)
    if truncated:
        reason = (
            f"{st.st_size} bytes, over memory.max_file_bytes ({len(data)}): only the first {len(data)} bytes "
            "are indexed; split the file, or raise the cap"
        )
        warnings.append(Problem(path, reason, skipped=False))
    return memory, warnings


def read_memory(path: Path, root: MemoryRoot, limit: int = MAX_FILE_BYTES) -> tuple[Memory, list[Problem]]:
    """Read and parse one memory file (its first `limit` bytes); raise MemoryFileError when unusable."""
    try:
        data, st = read_head(path, limit)
    except FileNotFoundError as exc:
        raise MemoryFileError(f"unreadable: {exc.strerror or exc}") from exc
    return memory_from_bytes(path, root, data, st)


# --- listing --------------------------------------------------------------------------


def _top_folders(root: MemoryRoot, problems: list[Problem]) -> list[tuple[os.DirEntry[str], bool]]:
    """Return the category folders of a root (and whether each is a link), reporting bad links."""
    try:
        with os.scandir(root.path) as listing:
            top = sorted(listing, key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(Problem(root.path, f"unreadable memory tree: {exc.strerror or exc}"))
        return []
    folders = []
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
        if entry.is_dir(follow_symlinks=True):
            folders.append((entry, linked))
    return folders


def _list_folder(
    folder: os.DirEntry[str],
    linked: bool,
    files: list[tuple[str, os.stat_result]],
    deferred: list[str],
    problems: list[Problem],
) -> None:
    """Add a folder's regular memory files to `files`; links (or files under a link) to `deferred`."""
    with os.scandir(folder.path) as listing:
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


def _add_links(
    root: MemoryRoot, deferred: list[str], files: list[tuple[str, os.stat_result]], problems: list[Problem]
) -> None:
    """Add linked files that stay inside the root; a real file wins over an alias of it."""
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


@dataclass
class TreeListing:
    """A root's memory files with their stat, the problems met, and its category folders.

    `folders` maps each category folder to the signature to store for it (empty when it
    must be listed again next time: too fresh, linked, or with problems); `skipped`
    holds those left unlisted because their signature matched the stored one.
    """

    files: list[tuple[str, os.stat_result]]
    problems: list[Problem]
    folders: dict[str, str] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)


def folder_signature(st: os.stat_result) -> str:
    """What says "a file was added, removed or renamed in this folder"."""
    return f"{st.st_mtime_ns},{st.st_ino}"


def list_tree(root: MemoryRoot, known: Mapping[str, str] | None = None, now_ns: int = 0) -> TreeListing:
    """List a root's candidate memory files; folders whose signature is in `known` are skipped.

    Paths are strings: this runs over every file, and building a Path per file would
    cost more than the stat itself. Symlinks are followed only while they stay inside the
    root; the same real file reached twice is listed once.
    """
    listing = TreeListing([], [])
    deferred: list[str] = []
    for folder, linked in _top_folders(root, listing.problems):
        try:
            signature = folder_signature(folder.stat())
        except OSError as exc:
            listing.problems.append(Problem(Path(folder.path), f"unreadable folder: {exc.strerror or exc}"))
            continue
        if known and not linked and known.get(folder.name) == signature:
            listing.folders[folder.name] = signature
            listing.skipped.add(folder.name)
            continue
        before = (len(deferred), len(listing.problems))
        try:
            _list_folder(folder, linked, listing.files, deferred, listing.problems)
        except OSError as exc:
            listing.problems.append(Problem(Path(folder.path), f"unreadable folder: {exc.strerror or exc}"))
        mtime_ns = int(signature.split(",", 1)[0])
        clean = not linked and (len(deferred), len(listing.problems)) == before and mtime_ns < now_ns - RACY_NS
        listing.folders[folder.name] = signature if clean else ""
    if deferred:
        if listing.skipped:
            return list_tree(root, None, now_ns)  # a link's target may sit in a skipped folder
        _add_links(root, deferred, listing.files, listing.problems)
    return listing


def list_memory_files(root: MemoryRoot) -> tuple[list[tuple[str, os.stat_result]], list[Problem]]:
    """Return every candidate memory file of a root with its stat, and the problems met."""
    listing = list_tree(root)
    return listing.files, listing.problems


def log_problem(problem: Problem) -> None:
    """Log a skipped or partly read file, for the log and `memoryd status`."""
    what = "skipped" if problem.skipped else "partly read"
    log.warning("memory.file_problem", extra={"what": what, "path": str(problem.path), "reason": problem.reason})


