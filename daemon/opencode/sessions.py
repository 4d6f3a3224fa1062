"""Where an OpenCode session runs: its directory, by id, from either table family.

The MCP server is told the calling session (OpenCode 2 sends `_meta["ai.opencode/sessionID"]`
with every tool call) and scopes project memory by that session's folder. One indexed
lookup by primary key, read-only, in `session_v2` (OpenCode 2) then `session` (1.x).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

TABLES = ("session_v2", "session")  # a migrated database holds both; the same ids in each


def session_directory(db_path: Path, session_id: str) -> Path | None:
    """The directory the session runs in, or None (no database, no such session).

    Raises sqlite3.Error when the database cannot be read.
    """
    if not session_id or not db_path.is_file():
        return None
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=2)
    try:
        present = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in (t for t in TABLES if t in present):
            row = conn.execute(f"SELECT directory FROM {table} WHERE id = ?", (session_id,)).fetchone()  # noqa: S608
            if row and row[0]:
                return Path(row[0])
    finally:
        conn.close()
    return None
