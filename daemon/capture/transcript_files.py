"""A pass's transcript files (`<transcripts_dir>/<session id>.md`): written when kept,
removed when not, always behind the daemon's write fence.

A backfill decides this for thousands of sessions, most of which never had a transcript:
the folder is listed once instead, and only a name that is there is unlinked.
"""

from __future__ import annotations

import os
from pathlib import Path

from daemon.files import write_if_changed
from daemon.state import WriteFence

# Sessions in a pass from which the folder is listed once rather than an unlink tried
# per session: listing 50,000 names costs what ~200 failed unlinks do.
LIST_FROM = 200


class TranscriptFiles:
    """Writes and removes the transcripts of one pass."""

    def __init__(self, folder: Path, fence: WriteFence) -> None:
        self.folder = folder
        self.fence = fence
        self._listed = False
        self._names: set[str] | None = None  # the folder's names when listed, and those written since

    def expect(self, sessions: int) -> None:
        """Say how many sessions the pass holds: a large pass lists the folder once."""
        self._listed = sessions > LIST_FROM

    def write(self, session_id: str, text: str) -> None:
        """Write (or keep, when its bytes are the same) a session's transcript."""
        name = f"{session_id}.md"
        known = self._known() if self._listed else None
        # Derived data: no fsync of its own (the batch is synced before it is recorded).
        with self.fence.guard():
            # A name the listing lacks is a new file: not opened just to find it absent.
            write_if_changed(self.folder / name, text, durable=False, current=None if known is None or name in known else b"")
        if known is not None:
            known.add(name)

    def drop(self, session_id: str) -> None:
        """Remove a session's transcript, if there is one: an older one is not left standing
        for a transcript no longer kept."""
        name = f"{session_id}.md"
        known = self._known() if self._listed else None
        if known is not None and name not in known:
            return
        with self.fence.guard():
            (self.folder / name).unlink(missing_ok=True)
        if self._names is not None:
            self._names.discard(name)

    def _known(self) -> set[str] | None:
        """The folder's names, listed on first need; None when it cannot be listed."""
        if self._names is None:
            try:
                self._names = set(os.listdir(self.folder))
            except FileNotFoundError:
                self._names = set()
            except OSError:
                self._listed = False  # unreadable: each unlink is tried, as in a short pass
                return None
        return self._names
