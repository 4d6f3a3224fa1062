"""Fixtures for the memory trees: real files in temp dirs, a real SQLite index, a fixed clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from textwrap import dedent

import pytest

from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from daemon.memory.workspace import Workspace

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def write_memory(root: Path, relative: str, frontmatter: str, body: str = "Body.") -> Path:
    """Write `<root>/<relative>` with the given YAML frontmatter (dedented) and body."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{dedent(frontmatter).strip()}\n---\n\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    """A project folder that is a git worktree (a `.git` folder is all it takes)."""
    project = tmp_path / "work" / "app"
    (project / ".git").mkdir(parents=True)
    return project


@pytest.fixture
def global_root(tmp_path: Path) -> MemoryRoot:
    return MemoryRoot(tmp_path / "config" / "opencode" / "memory", "global")


@pytest.fixture
def project_root(worktree: Path) -> MemoryRoot:
    return MemoryRoot(worktree / ".memory", "project")


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    with SearchIndex(tmp_path / "state" / "index.db") as idx:
        yield idx


class Clock:
    """A settable clock for commands (remember stamps, expiry checks)."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ws(index: SearchIndex, global_root: MemoryRoot, project_root: MemoryRoot, clock: Clock) -> Workspace:
    """The workspace of a caller inside `worktree` (a project with a tree), with the fixed clock."""
    project_root.path.mkdir(parents=True, exist_ok=True)
    return Workspace(index, global_root, project_root, True, clock)
