"""The one path by which capture writes into the memory trees, and what it wrote.

A pass writes its notes (and, through `NoteMemories`, the lessons they state) here.
The writer remembers which trees it wrote into, so the caller refreshes exactly those
(`daemon.memory.refresh.refresh_tree`), and what it wrote, so the daemon's watcher can
tell the echo of its own writes from a person's edit.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from daemon.files import write_if_changed
from daemon.memory.roots import MemoryRoot
from daemon.state import WriteFence

ECHOES_KEPT = 20_000  # files remembered as our own writes: a backfill's worth of notes


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


_WRITING = (-1, -1, -1)  # a write under way: whatever the watcher hears of the file is ours


class OwnWrites:
    """The files this process wrote last, each with the stat it left them with.

    Shared by the writing thread and the watcher's: an event for a file whose stat is
    still the one we left (or that we are writing right now) is our own write's echo,
    not work.
    """

    def __init__(self, kept: int = ECHOES_KEPT) -> None:
        self._lock = threading.Lock()
        self._kept = kept
        self._files: OrderedDict[Path, tuple[int, int, int] | None] = OrderedDict()

    @contextmanager
    def writing(self, path: Path) -> Iterator[None]:
        """Around a write of `path`: its events are echoes while it runs and, after it,
        as long as the file stays as the write left it."""
        self._remember(path, _WRITING)
        try:
            yield
        finally:
            self._remember(path, _signature(path))

    def _remember(self, path: Path, signature: tuple[int, int, int] | None) -> None:
        with self._lock:
            self._files.pop(path, None)
            self._files[path] = signature
            while len(self._files) > self._kept:
                self._files.popitem(last=False)

    def is_echo(self, path: Path) -> bool:
        """True when `path` is being written by us, or is as our last write left it."""
        with self._lock:
            if path not in self._files:
                return False
            left = self._files[path]
        return left == _WRITING or _signature(path) == left


class TreeWriter:
    """Writes notes into trees behind the daemon's fence; says which trees it touched."""

    def __init__(self, fence: WriteFence, own: OwnWrites | None = None) -> None:
        self.fence = fence
        self.own = own or OwnWrites()
        self._roots: dict[Path, MemoryRoot] = {}

    def write_note(self, root: MemoryRoot, path: Path, text: str) -> bool:
        """Write a note atomically when its bytes change; return whether it wrote.

        Not synced on its own: the caller syncs the batch before recording it.
        """
        with self.fence.guard(), self.own.writing(path):  # after the daemon's stop, not even a note
            # Same bytes, no write: a tree in git must not change just because a pass ran.
            written = write_if_changed(path, text, durable=False)
        self.touched(root)
        return written

    def touched(self, root: MemoryRoot) -> None:
        """Count `root` among the trees to refresh after the pass."""
        self._roots.setdefault(root.path, root)

    def take_roots(self) -> list[MemoryRoot]:
        """The trees written into since the last call, in path order."""
        roots, self._roots = self._roots, {}
        return [roots[path] for path in sorted(roots)]
