"""Memory roots: where the trees are, and what a path inside one is to memoryd.

A tree is `<root>/ROOT.md`, `<root>/<category>/<slug>.md` memories and compiled
`<root>/<category>/index.md` files. Two kinds of root share that shape: the global one
(`$XDG_CONFIG_HOME/opencode/memory/`) and one per project (`<worktree>/.memory/`).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from daemon.memory.frontmatter import MemoryFileError

if TYPE_CHECKING:
    from daemon.config import Config, Paths
    from daemon.state import StateDB

Scope = Literal["global", "project"]

PROJECT_TREE_DIR = ".memory"
ROOT_FILE = "ROOT.md"
INDEX_FILE = "index.md"
EXPIRED_DIR = ".expired"
MEMORY_SUFFIX = ".md"
# File names a memory may not take: compile owns them.
RESERVED_STEMS = frozenset({"index", "root"})
# Hidden files and folders (.git, .obsidian, .expired) are never memories.
HIDDEN_PREFIX = "."


@dataclass(frozen=True)
class MemoryRoot:
    """One memory tree: its folder (absolute, symlinks resolved) and its scope."""

    path: Path
    scope: Scope
    # A project's `.memory` that is a link out of its project: where it leads. Such a tree
    # keeps the link's own path, and does not exist for memoryd (`refused`).
    outside: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.scope not in ("global", "project"):
            raise ValueError(f"scope must be 'global' or 'project', not {self.scope!r}")
        # Resolved once so that the same tree always has the same key in the index.
        object.__setattr__(self, "path", Path(os.path.abspath(Path(self.path).expanduser())).resolve())

    @classmethod
    def of_key(cls, key: str, scope: str) -> MemoryRoot:
        """The root an index row names: its key was resolved when it was indexed, so no
        call to the file system (a search builds one for each root among its hits)."""
        if scope not in ("global", "project"):
            raise ValueError(f"scope must be 'global' or 'project', not {scope!r}")
        root = object.__new__(cls)
        object.__setattr__(root, "path", Path(key))
        object.__setattr__(root, "scope", scope)
        return root

    @classmethod
    def refused(cls, link: Path, target: Path) -> MemoryRoot:
        """The project tree whose `.memory` at `link` leads outside its project, to `target`."""
        root = object.__new__(cls)
        for name, value in (("path", link), ("scope", "project"), ("outside", target)):
            object.__setattr__(root, name, value)
        return root

    @property
    def key(self) -> str:
        """The string that names this root in the index."""
        return str(self.path)

    @property
    def root_file(self) -> Path:
        return self.path / ROOT_FILE

    @property
    def expired_dir(self) -> Path:
        return self.path / EXPIRED_DIR

    def exists(self) -> bool:
        return self.outside is None and self.path.is_dir()

    def warning(self) -> str:
        """What to tell the user about a refused tree (empty for any other)."""
        if self.outside is None:
            return ""
        return (f"{self.path} is a link to {self.outside}, outside its project: not followed (nothing is "
                "written there, and its memories reach no session). Make it a folder of the project, or set "
                "memory.follow_outside_links = true to trust such links")


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


@lru_cache(maxsize=4096)
def canonical_project(directory: str) -> str:
    """Return the project a `project:` field names: its worktree top, as the project tree
    is found ("" for none). Cached: every session note of a tree names one of a few."""
    directory = directory.strip()
    if not directory or not os.path.isabs(os.path.expanduser(directory)):
        return ""
    return str(project_root_of(Path(directory)))


def project_of_root(root: MemoryRoot) -> str:
    """The project a project tree belongs to (its worktree); "" for the global tree."""
    return str(root.path.parent) if root.scope == "project" else ""


def worktree_top(directory: Path) -> Path | None:
    """The top of the git worktree `directory` lies in (symlinks resolved), or None."""
    return _find_worktree(Path(directory).expanduser().resolve())


def is_in_worktree(directory: Path) -> bool:
    """True when `directory` lies inside a git worktree."""
    return worktree_top(directory) is not None


def project_tree(directory: Path, follow_outside: bool = False) -> MemoryRoot:
    """Return the project memory root for a directory inside a project; a `.memory` that
    leads outside the project is refused (`MemoryRoot.refused`) unless `follow_outside`."""
    project = project_root_of(directory)
    root = MemoryRoot(project / PROJECT_TREE_DIR, "project")
    if follow_outside or _inside(root.path, project):
        return root
    return MemoryRoot.refused(project / PROJECT_TREE_DIR, root.path)


def global_tree(paths: Paths) -> MemoryRoot:
    """Return the global memory root."""
    return MemoryRoot(paths.global_root, "global")


def discover_roots(
    config: Config,
    project_dirs: Iterable[Path] = (),
    extra_roots: Iterable[MemoryRoot] = (),
) -> list[MemoryRoot]:
    """Return every existing tree: global, configured projects, the given directories' projects.

    `project_dirs` are directories OpenCode sessions ran in (or the caller's own);
    `extra_roots` are roots known from elsewhere (e.g. the index). Missing trees are left out.
    """
    # A project tree the index knows is still one only if its project's `.memory` leads to
    # it: the folder a refused link points at was indexed as a tree by older releases.
    follow = config.settings.memory.follow_outside_links
    extra = [r for r in extra_roots if r.scope != "project" or project_tree(r.path, follow).path == r.path]
    candidates = [global_tree(config.paths), *_project_trees(config, project_dirs), *extra]
    seen: dict[Path, MemoryRoot] = {}
    for root in candidates:
        if root.path not in seen and root.exists():
            seen[root.path] = root
    return list(seen.values())


def known_roots(
    config: Config,
    state: StateDB | None,
    project_dirs: Iterable[Path] = (),
    extra_roots: Iterable[MemoryRoot] = (),
) -> list[MemoryRoot]:
    """Every memory tree memoryd knows that exists: the one answer for the daemon's jobs,
    `memoryd status`, `memoryd tree` and the sink.

    The global tree, `memory.project_roots`, the caller's `project_dirs` (its working
    directory), the projects OpenCode sessions ran in (from `state`, only when
    `memory.discover_projects` is on), then `extra_roots` (e.g. the index's).
    """
    return discover_roots(config, [*project_dirs, *_session_dirs(config, state)], extra_roots)


def _session_dirs(config: Config, state: StateDB | None) -> list[Path]:
    if state is None or not config.settings.memory.discover_projects:
        return []
    return [Path(d) for d in sorted(state.project_dirs())]


def _project_trees(config: Config, project_dirs: Iterable[Path]) -> list[MemoryRoot]:
    dirs = [Path(p).expanduser() for p in config.settings.memory.project_roots]
    dirs.extend(Path(p) for p in project_dirs)
    return [project_tree(d, config.settings.memory.follow_outside_links) for d in dirs]


def refused_roots(config: Config, state: StateDB | None, project_dirs: Iterable[Path] = ()) -> list[MemoryRoot]:
    """The project trees `known_roots` leaves out because their `.memory` leads outside
    their project (`MemoryRoot.warning` says what to do)."""
    dirs = [*project_dirs, *_session_dirs(config, state)]
    found = {r.path: r for r in _project_trees(config, dirs) if r.outside is not None}
    return [root for root in found.values() if root.outside.is_dir()]


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


class OutsideTree(OSError):
    """A folder of a tree that leads outside it (a link): nothing is written through it."""


def check_inside(root: MemoryRoot, folder: Path) -> None:
    """Raise OutsideTree when `folder` (existing or not) resolves outside `root`."""
    real = Path(os.path.realpath(folder))
    if not _inside(real, root.path):
        raise OutsideTree(errno.EXDEV, f"a link to {real}, outside the memory tree {root.path}: nothing is "
                          "written through it (make it a folder of the tree)", str(folder))


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
