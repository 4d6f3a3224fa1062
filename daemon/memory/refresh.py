"""Refresh a tree: its index entries synced, its compiled files and `.gitignore` current.

The one refresh of memoryd: the daemon after a capture pass and on a tree's events,
`memoryd distill` on the trees its pass wrote, `memoryd compile` on every tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.memory.compile import CompileReport, compile_report, sync_and_compile
from daemon.memory.gitignore import GITIGNORE, ensure_gitignore
from daemon.memory.roots import MemoryRoot, classify_path

if TYPE_CHECKING:
    from daemon.memory.index import SearchIndex, SyncReport


@dataclass(frozen=True)
class TreeRefresh:
    """What refreshing one tree did: index entries changed, files written, and the compile's report."""

    changed: int
    compiled: CompileReport

    @property
    def written(self) -> list[Path]:
        return self.compiled.written


def refresh_tree(
    index: SearchIndex,
    root: MemoryRoot,
    *,
    everything: bool = False,
    synced: SyncReport | None = None,
    known: Mapping[str, str] | None = None,
) -> TreeRefresh:
    """Sync `root` into the index, recompile it, and keep its `.gitignore` block in place.

    `everything`: recompile every category's index.md, not only those whose memories
    changed; `synced`: what a writer's own indexing changed before, `known`: the signatures
    it left those files with (see `sync_and_compile`).
    """
    done = sync_and_compile(index, root, everything=everything, synced=synced, known=known)
    if ensure_gitignore(root):
        done.compiled.written.append(root.path / GITIGNORE)
    return TreeRefresh(done.changed, done.compiled)


def refresh_paths(
    index: SearchIndex, root: MemoryRoot, paths: Iterable[Path], synced: SyncReport | None = None
) -> TreeRefresh:
    """Re-index the files a watcher named (and no other file of the tree), then recompile
    what they changed: the lines of their category's index.md, ROOT.md only when its
    tables can move. Nothing changed: nothing is written. `synced`: what a writer's own
    indexing changed before (a capture pass's notes, indexed from memory), compiled too."""
    from daemon.memory.index import SyncReport

    named = sorted(set(paths))
    reports = [index.update_file_report(path, root) for path in named]
    changed = SyncReport(
        sum(r.changed for r in reports),
        set().union(*(r.categories for r in reports)),
        frozenset().union(*(r.paths for r in reports)),
        any(r.root_tables for r in reports),
    ).merged(synced)
    # A named memory the index already knew (a sweep, a sink fill or `memoryd status`
    # synced it first) still gets its index.md line checked: else its edit is indexed
    # but never compiled. A line that already says it is not rewritten.
    known = {str(p) for p in named if str(p) not in changed.paths and p.exists() and classify_path(root, p) == "memory"}
    lines = SyncReport(changed.changed, changed.categories | {Path(p).parent.name for p in known}, changed.paths | known, changed.root_tables)
    compiled = compile_report(root, index, changes=lines) if lines.paths or changed.changed else CompileReport(root)
    if ensure_gitignore(root):
        compiled.written.append(root.path / GITIGNORE)
    return TreeRefresh(changed.changed, compiled)
