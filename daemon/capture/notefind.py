"""Find a session's note by the `session_id` in its frontmatter, not by its file name.

A tree kept in git may hold a note written on another machine, or renamed by hand;
the session's next note must replace that file, never sit beside it. Each folder is
read once per pass, and only when a session has no recorded note to go to.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from daemon.memory.roots import MemoryRoot

HEAD_BYTES = 4096  # frontmatter comes first; session_id is among its first lines
_SESSION_ID = re.compile(r'^session_id:[ \t]*["\']?([^"\'\r\n]+?)["\']?[ \t]*$', re.MULTILINE)


def session_id_of(path: Path) -> str | None:
    """The session id in a note's frontmatter, or None (not a note, unreadable)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    match = _SESSION_ID.search(head[: end if end > 0 else len(head)])
    return match.group(1) if match else None


class NoteFinder:
    """session id → note path for the note folders a pass looks into."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str, Path]] = {}
        # Every name each folder held when it was read, and the notes the pass put in it
        # since: a fresh note's file is known absent without a failed open per session.
        self._names: dict[Path, set[str] | None] = {}
        # The tree each project folder's notes go to, found once per pass (notes.note_path).
        self.trees: dict[tuple[str, str, Path], MemoryRoot] = {}

    def find(self, folder: Path, session_id: str) -> Path | None:
        notes = self._folders.get(folder)
        if notes is None:
            notes, self._names[folder] = _read_folder(folder)
            self._folders[folder] = notes
        path = notes.get(session_id)
        return path if path is not None and path.exists() else None

    def may_exist(self, path: Path) -> bool:
        """False only for a file of a folder this pass read that was not in it then and
        that the pass has not written since (nobody else writes session notes by name)."""
        names = self._names.get(path.parent)
        return names is None or path.name in names

    def wrote(self, path: Path) -> None:
        """Count a note the pass wrote among its folder's files."""
        names = self._names.get(path.parent)
        if names is not None:
            names.add(path.name)


def _read_folder(folder: Path) -> tuple[dict[str, Path], set[str] | None]:
    found: dict[str, Path] = {}
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return found, set()  # no folder: no file in it either
    except OSError:
        return found, None  # unreadable: any name may be there
    for name in names:
        if not name.endswith(".md") or name.startswith(".") or name == "index.md":
            continue
        session_id = session_id_of(folder / name)
        if session_id:
            found.setdefault(session_id, folder / name)  # two files for one session: the first name wins
    return found, set(names)
