"""Codex's thread index (`state_5.sqlite`, table `threads`), opened read-only for titles.

The rollout files stay the content source; the index only gives the title Codex shows
for a thread. Its absence, or a schema without the columns, just means no titles.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from daemon.logs import get_logger

INDEX = "state_5.sqlite"


class ThreadTitles:
    """Thread id → title, read again only when the index file changed."""

    def __init__(self, codex_home: Path) -> None:
        self.path = codex_home / INDEX
        self._mark: tuple[int, int] | None = None
        self._titles: dict[str, str] = {}
        self._warned = False

    def get(self, thread_id: str) -> str:
        try:
            st = self.path.stat()
        except OSError:
            return ""
        mark = (st.st_ino, st.st_mtime_ns)
        if mark != self._mark:
            self._titles, self._mark = self._read(), mark
        return self._titles.get(thread_id, "")

    def _read(self) -> dict[str, str]:
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=1)
            try:
                cols = {row[1] for row in conn.execute("PRAGMA table_info(threads)")}
                if not {"id", "title"} <= cols:
                    return {}
                return {str(i): str(t) for i, t in conn.execute("SELECT id, title FROM threads") if t}
            finally:
                conn.close()
        except sqlite3.Error as exc:
            if not self._warned:
                self._warned = True
                get_logger("memoryd.source").warning("source.codex_index", file=str(self.path), error=str(exc),
                                                     hint="titles come from the first prompt instead")
            return {}
