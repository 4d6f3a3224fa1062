"""Refresh a tree: its index entries synced, its compiled files and `.gitignore` current.

The one refresh of memoryd: the daemon after a capture pass and on a tree's events,
`memoryd distill` on the trees its pass wrote, `memoryd compile` on every tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.memory.compile import CompileReport, sync_and_compile
from daemon.memory.gitignore import GITIGNORE, ensure_gitignore
from daemon.memory.roots import MemoryRoot

if TYPE_CHECKING:
    from daemon.memory.index import SearchIndex


@dataclass(frozen=True)
class TreeRefresh:
    """What refreshing one tree did: index entries changed, files written, and the compile's report."""

    changed: int
    compiled: CompileReport

    @property
    def written(self) -> list[Path]:
        return self.compiled.written


def refresh_tree(index: SearchIndex, root: MemoryRoot, *, everything: bool = False) -> TreeRefresh:
    """Sync `root` into the index, recompile it, and keep its `.gitignore` block in place.

    `everything`: recompile every category's index.md, not only those whose memories
    changed (see `sync_and_compile`).
    """
    done = sync_and_compile(index, root, everything=everything)
    if ensure_gitignore(root):
        done.compiled.written.append(root.path / GITIGNORE)
    return TreeRefresh(done.changed, done.compiled)
