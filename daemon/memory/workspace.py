"""A caller's workspace (its project tree, the global tree, the search index) and the
errors every memory command raises, with messages that tell a person what to do."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from daemon.memory.hits import HITS_FILE, HitCounter
from daemon.memory.index import SearchIndex, open_index
from daemon.memory.roots import PROJECT_TREE_DIR, MemoryRoot, global_tree, is_in_worktree, project_of_root, project_tree, worktree_top

if TYPE_CHECKING:
    from daemon.config import Config

ScopeChoice = Literal["project", "global", "all"]
SCOPES: tuple[ScopeChoice, ...] = ("project", "global", "all")


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

    @property
    def project_key(self) -> str:
        """The caller's project as the index keys it (its worktree), "" outside any: of
        the global tree, a caller sees the machine-wide memories and this project's."""
        return project_of_root(self.project) if self.project is not None else ""

    @property
    def hits(self) -> HitCounter:
        """The recall counters, kept beside the search index (never in a tree)."""
        return HitCounter(self.index.db_path.parent / HITS_FILE)

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
        project = self.project  # (a refused `.memory` link is no tree to search)
        usable = project is not None and project.outside is None and project.path != self.global_root.path
        if scope in ("project", "all") and usable:
            roots.append(project)
        if scope in ("global", "all"):
            roots.append(self.global_root)
        return roots

    def refresh(self, roots: Sequence[MemoryRoot] | None = None) -> int:
        """Bring the index up to date with the trees; return how many entries changed.

        Quick: only category folders whose listing changed are listed again (see
        `SearchIndex.sync_root_report`); `memoryd compile` and the daemon look further.
        """
        changed = 0
        for root in self.roots("all") if roots is None else roots:
            if self.trust_index and self.index.knows(root):
                continue
            if root.exists():
                changed += self.index.sync_root(root, quick=True)
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
        # A project opts in by having the folder: memoryd never creates `.memory/` itself.
        return self.project if self.project.exists() else self.global_root

    def opt_in_note(self, scope: Literal["project", "global"]) -> str:
        """What to tell a caller whose project memory went to the global tree (empty if none did)."""
        if scope != "project" or self.project is None or self.project.exists():
            return ""
        if self.project.outside is not None:
            return f"{self.project.warning()}; the memory went to the global tree"
        return (
            f"this project has no memory tree ({self.project.path} does not exist), so the memory went "
            f"to the global tree; create that folder to keep memories with the project"
        )


def open_workspace(
    config: Config,
    project_dir: Path | None,
    *,
    explicit_project: bool = False,
    index: SearchIndex | None = None,
) -> Workspace:
    """Return the workspace of a caller in `project_dir` (None: global only)."""
    index = index or open_index(config)
    follow = config.settings.memory.follow_outside_links
    project = project_tree(project_dir, follow) if project_dir is not None else None
    real = project_dir is not None and (explicit_project or is_in_worktree(project_dir))
    return Workspace(index, global_tree(config.paths), project, real)


# (device, inode) of each path a resolution looked at; None for one that was missing
_Signature = tuple[tuple[int, int] | None, ...]


def _signature(paths: Sequence[str]) -> _Signature:
    found: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:  # missing (or unreadable): it has to stay so for the answer to hold
            found.append(None)
            continue
        found.append((st.st_dev, st.st_ino))
    return tuple(found)


def _vouching(global_root: Path, project_dir: Path | None) -> tuple[str, ...]:
    """The paths whose stats vouch for `open_workspace`'s answer: the global tree, the
    caller's folder as given, the `.git` the walk up from it looked for in each folder up
    to its worktree (to `/` outside one), and that worktree's `.memory`."""
    paths = [str(global_root)]
    if project_dir is None:
        return tuple(paths)
    paths.append(str(project_dir))
    here = resolved = os.path.realpath(os.path.expanduser(project_dir))
    top = worktree_top(Path(here))
    while True:
        paths.append(os.path.join(here, ".git"))
        parent = os.path.dirname(here)
        if (top is not None and here == str(top)) or parent == here:
            break
        here = parent
    paths.append(os.path.join(str(top) if top is not None else resolved, PROJECT_TREE_DIR))
    return tuple(paths)


class WorkspaceCache:
    """`open_workspace` for a long-running caller (the daemon's socket): a folder is
    resolved to its worktree once, then only checked.

    Resolving walks the folder's path (symlinks) and each folder up to its worktree for a
    `.git` (~0.25 ms, on every session start). The check is a stat of each path that
    walk looked at: the folder as given, the `.git` it looked for in each folder, the
    worktree's `.memory`, the global tree. A `.git` made or removed, a folder moved away
    or in, a symlink repointed each make one of them missing, present or another inode,
    and the folder is resolved again. Whether a tree exists is not kept (callers look
    each time). `clear()` forgets all.
    """

    ENTRIES = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str | None], tuple[tuple[str, ...], _Signature, Workspace]] = OrderedDict()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def open(self, config: Config, project_dir: Path | None, index: SearchIndex) -> Workspace:
        """What `open_workspace(config, project_dir, index=index)` returns (a new Workspace)."""
        key = (str(config.paths.global_root), None if project_dir is None else str(project_dir))
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and _signature(kept[0]) == kept[1]:
            ws = kept[2]
            return Workspace(index, ws.global_root, ws.project, ws.project_is_real)
        folders = _vouching(config.paths.global_root, project_dir)
        signature = _signature(folders)
        # Resolved after the stats were taken: whatever changes from now on, the next
        # check sees; an answer from before them could be kept stale.
        ws = open_workspace(config, project_dir, index=index)
        if _vouching(config.paths.global_root, project_dir) == folders:  # else it moved meanwhile: keep nothing
            with self._lock:
                self._kept[key] = (folders, signature, ws)
                self._kept.move_to_end(key)
                while len(self._kept) > self.ENTRIES:
                    self._kept.popitem(last=False)
        return ws
