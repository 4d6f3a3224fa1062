"""OpenCode 1.x's tables: `session`, `message`, `part` (the SQL for that family)."""

from __future__ import annotations

import sqlite3

from daemon.source import MessageRow, PartRow, SessionInfo, SessionRows

FAMILY = "v1"
# Columns memoryd cannot work without.
REQUIRED: dict[str, tuple[str, ...]] = {
    "session": ("id", "directory", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "time_updated", "data"),
    "part": ("id", "message_id", "session_id", "time_updated", "data"),
}
# Read when present: `title` became nullable, `parent_id`/`project_id` came later.
OPTIONAL = {"session": ("title", "parent_id", "project_id")}
# What a pass asks every time: each a search of a b-tree, never a scan (a test checks the
# plans). SQLite gives an inserted row max(rowid)+1, so a rowid range is what was
# committed since; its cost follows the new rows.
PROBES = {
    "cursor_message": "SELECT MAX(rowid) FROM message",
    "cursor_part": "SELECT MAX(rowid) FROM part",
    "new_messages": "SELECT session_id FROM message WHERE rowid > ?",
    "new_parts": "SELECT session_id FROM part WHERE rowid > ?",
    "newest": "SELECT time_updated FROM message WHERE rowid = (SELECT MAX(rowid) FROM message)",
}


def info_from_row(row: tuple, family: str, ended: bool = False) -> SessionInfo:
    """A SessionInfo from (id, title, directory, project, parent, created, updated, count)."""
    return SessionInfo(
        id=row[0],
        # As stored: scrubbed once by capture when a session is acted on (its transcript),
        # never here, where every listing would pay for every session's title.
        title=row[1] or "",
        directory=row[2] or "",
        project_id=row[3] or "",
        parent_id=row[4] or None,
        time_created=int(row[5]),
        time_updated=int(row[6]),
        message_count=int(row[7]),
        family=family,
        ended=ended,
    )


class V1Tables:
    """Sessions, messages and parts as OpenCode 1.x stores them."""

    def __init__(self, conn: sqlite3.Connection, columns: dict[str, set[str]]) -> None:
        self.conn = conn
        self.columns = columns

    def _select(self) -> str:
        cols = self.columns["session"]
        title = "COALESCE(s.title, '')" if "title" in cols else "''"
        parent = "s.parent_id" if "parent_id" in cols else "NULL"
        project = "COALESCE(s.project_id, '')" if "project_id" in cols else "''"
        # The newest activity: the session's own row, and every message and part of it
        # (both tables are indexed by session id, so this is per-session work).
        return (
            f"SELECT s.id, {title}, s.directory, {project}, {parent}, s.time_created, "
            "MAX(s.time_updated, "
            "  COALESCE((SELECT MAX(m.time_updated) FROM message m WHERE m.session_id = s.id), 0), "
            "  COALESCE((SELECT MAX(p.time_updated) FROM part p WHERE p.session_id = s.id), 0)), "
            "(SELECT COUNT(*) FROM message m WHERE m.session_id = s.id) "
            "FROM session s"
        )

    def sessions(self, ids: list[str] | None) -> list[SessionInfo]:
        """These sessions (all with None), in no particular order."""
        sql = self._select()
        if ids is None:
            return [info_from_row(r, FAMILY) for r in self.conn.execute(sql)]
        q = f"{sql} WHERE s.id IN ({','.join('?' * len(ids))})"
        return [info_from_row(r, FAMILY) for r in self.conn.execute(q, ids)]

    def ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT id FROM session")}

    def cursor(self) -> dict[str, int]:
        """The newest rowid of each table: a commit-order mark (O(log n), the rowid b-tree)."""
        return {
            "message": self.conn.execute(PROBES["cursor_message"]).fetchone()[0] or 0,
            "part": self.conn.execute(PROBES["cursor_part"]).fetchone()[0] or 0,
        }

    def changed_since(self, cursor: dict[str, int]) -> set[str]:
        """Sessions with messages or parts inserted after `cursor` (rowid ranges).

        (A message id range reads the same but SQLite plans a DISTINCT over it as a scan
        of the whole session index; a session.time_updated probe has no index at all.)
        A part updated in place is not seen here: its session was still settling when the
        part was written, or the periodic full comparison finds it.
        """
        ids = {r[0] for r in self.conn.execute(PROBES["new_messages"], (cursor["message"],))}
        ids.update(r[0] for r in self.conn.execute(PROBES["new_parts"], (cursor["part"],)))
        return ids

    def newest_update(self) -> int | None:
        """The time_updated of the newest message (by rowid: no scan of the table)."""
        row = self.conn.execute(PROBES["newest"]).fetchone()
        return int(row[0]) if row else None

    def counts(self) -> dict[str, int]:
        """Sessions (roots and subagents) and messages, for `memoryd status`."""
        parent = "parent_id IS NULL" if "parent_id" in self.columns["session"] else "1"
        roots, total = self.conn.execute(f"SELECT SUM({parent}), COUNT(*) FROM session").fetchone()
        messages = self.conn.execute("SELECT COUNT(*) FROM message").fetchone()[0]
        return {"sessions": int(roots or 0), "subagents": int(total - (roots or 0)), "messages": int(messages)}

    def rows(self, session: SessionInfo) -> SessionRows:
        """The session's messages and parts in transcript order (data as raw bytes)."""
        # CAST to BLOB: a row with invalid UTF-8 must not fail the whole query.
        messages = [
            MessageRow(r[0], int(r[1]), r[2])
            for r in self.conn.execute(
                "SELECT id, time_created, CAST(data AS BLOB) FROM message WHERE session_id = ? "
                "ORDER BY time_created, id",
                (session.id,),
            )
        ]
        order = {m.id: i for i, m in enumerate(messages)}
        parts = [
            PartRow(r[0], r[1], r[2])
            for r in self.conn.execute(
                "SELECT id, message_id, CAST(data AS BLOB) FROM part WHERE session_id = ?", (session.id,)
            )
        ]
        parts.sort(key=lambda p: (order.get(p.message_id, len(order)), p.id))
        return SessionRows(session, messages, parts)
