"""Which file-system events mean work: the watchdog handlers of the daemon loop.

They run on the observer thread, so they only decide and call back; the loop marks the
work as due and its worker does it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.memory.roots import MemoryRoot, classify_path


class DatabaseEvents:
    """watchdog handler: changes to opencode.db and its WAL mean "look again"."""

    def __init__(self, db_name: str, callback: Callable[[bool], None]) -> None:
        self.names = {db_name, f"{db_name}-wal"}
        self.db_name = db_name
        self.callback = callback

    def dispatch(self, event: Any) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        names = {Path(event.src_path).name, Path(getattr(event, "dest_path", "") or "").name}
        if not names & self.names:
            return
        replaced = self.db_name in names and event.event_type in ("created", "deleted", "moved")
        self.callback(replaced)


class AgentFileEvents:
    """watchdog handler: a session file of another agent (Claude Code, Codex) written,
    created, moved or deleted means "look again"."""

    def __init__(self, callback: Callable[[bool], None], suffix: str = ".jsonl") -> None:
        self.callback = callback
        self.suffix = suffix

    def dispatch(self, event: Any) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        paths = (event.src_path, getattr(event, "dest_path", "") or "")
        if any(os.fsdecode(p).endswith(self.suffix) for p in paths if p):
            self.callback(False)


MAX_PATHS = 200  # more changed files than this in one burst (a checkout): one sync of the tree


class TreeChanges:
    """The memory files events named, per tree, until the worker takes them: it then
    re-reads those files alone instead of checking every file of the tree. A tree whose
    change no file names (a folder moved, a compiled file deleted, too many files) is
    marked whole: its next refresh syncs all of it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: dict[Path, set[Path] | None] = {}

    def note(self, root: Path, paths: set[Path] | None) -> None:
        with self._lock:
            known = self._paths.get(root, set())
            merged = None if known is None or paths is None else known | paths
            self._paths[root] = None if merged is not None and len(merged) > MAX_PATHS else merged

    def take(self, root: Path) -> set[Path] | None:
        """The files named since the last take, or None: sync the whole tree (also when
        nothing was noted, as after a capture pass or at start)."""
        with self._lock:
            return self._paths.pop(root, None)


PENDING = TreeChanges()  # the daemon's: filled on the observer thread, taken by the worker


class TreeEvents:
    """watchdog handler: a change to a memory (not to compiled output) means "refresh the tree".

    `is_echo` tells memoryd's own writes (a capture pass's notes, already indexed and
    compiled by the pass's refresh) from other changes: their events are no work.
    """

    def __init__(
        self, root: MemoryRoot, callback: Callable[[Path], None], is_echo: Callable[[Path], bool] = lambda _: False
    ) -> None:
        self.root = root
        self.callback = callback
        self.is_echo = is_echo

    def dispatch(self, event: Any) -> None:
        if _relevant(self.root, event, self.is_echo):
            PENDING.note(self.root.path, _memory_paths(self.root, event))
            self.callback(self.root.path)


def _memory_paths(root: MemoryRoot, event: Any) -> set[Path] | None:
    """The memory files a relevant event names; None when it needs the whole tree looked at."""
    if event.is_directory:
        return None
    found: set[Path] = set()
    for raw in (event.src_path, getattr(event, "dest_path", "")):
        if raw:
            path = Path(os.fsdecode(raw))
            what = classify_path(root, path)
            if what == "compiled":
                return None
            if what == "memory":
                found.add(path)
    return found or None


def _relevant(root: MemoryRoot, event: Any, is_echo: Callable[[Path], bool]) -> bool:
    """True when an event can change what the tree's index or compiled files should hold.

    compile's own writes (index.md, ROOT.md, renamed into place from a hidden temp file),
    a folder's "modified" (any file in it changed) and a file still as memoryd last
    wrote it are echoes, never work; a deleted compiled file is, since compile puts it back.
    """
    if event.event_type in ("opened", "closed_no_write") or (event.is_directory and event.event_type == "modified"):
        return False
    for raw in (event.src_path, getattr(event, "dest_path", "")):
        if not raw:
            continue
        path = Path(os.fsdecode(raw))
        if event.is_directory:
            if _is_category_folder(root, path):
                return True
            continue
        what = classify_path(root, path)
        if what == "memory" and not is_echo(path):
            return True
        if what == "compiled" and event.event_type == "deleted":
            return True
    return False


def _is_category_folder(root: MemoryRoot, path: Path) -> bool:
    try:
        parts = path.relative_to(root.path).parts
    except ValueError:
        return False
    return len(parts) == 1 and not parts[0].startswith(".")
