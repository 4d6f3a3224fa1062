"""OpenCode 2's tables: `session_v2` and `session_message` (the SQL for that family).

One `session_message` row per user prompt, model step, compaction, shell command, …
(`type` says which, `data` is its JSON); `seq` orders a session's rows. The rows are
normalised into messages and parts by `daemon.opencode.v2rows`.
"""

from __future__ import annotations

import sqlite3

from daemon.source import SessionInfo, SessionRows
from daemon.opencode.v1 import info_from_row
from daemon.opencode.v2rows import normalise

FAMILY = "v2"
REQUIRED: dict[str, tuple[str, ...]] = {
    "session_v2": ("id", "directory", "time_created", "time_updated"),
    "session_message": ("id", "session_id", "type", "seq", "time_created", "time_updated", "data"),
}
OPTIONAL = {"session_v2": ("title", "parent_id", "project_id", "time_idle")}
# What a pass asks every time: each a search of a b-tree, never a scan (a test checks the plans).
PROBES = {
    "cursor": "SELECT MAX(rowid) FROM session_message",
    "new_rows": "SELECT session_id FROM session_message WHERE rowid > ?",
    "newest": "SELECT MAX(time_updated) FROM session_message "
    "WHERE time_created = (SELECT MAX(time_created) FROM session_message)",
}


class V2Tables:
    """Sessions and their rows as OpenCode 2 stores them."""

    def __init__(self, conn: sqlite3.Connection, columns: dict[str, set[str]]) -> None:
        self.conn = conn
        self.columns = columns

    def _select(self) -> str:
        cols = self.columns["session_v2"]
        title = "COALESCE(s.title, '')" if "title" in cols else "''"
        parent = "s.parent_id" if "parent_id" in cols else "NULL"
        project = "COALESCE(s.project_id, '')" if "project_id" in cols else "''"
        idle = "COALESCE(s.time_idle, 0)" if "time_idle" in cols else "0"
        # session_v2.time_updated stays at the prompt's admission: the newest activity is
        # the newest row's time_updated (or the end of the turn). The session's rows are
        # read through (session_id, seq), its last row (`idle` when the turn ended) too.
        return (
            f"SELECT s.id, {title}, s.directory, {project}, {parent}, s.time_created, "
            f"MAX(s.time_updated, {idle}, "
            "  COALESCE((SELECT MAX(m.time_updated) FROM session_message m WHERE m.session_id = s.id), 0)), "
            "(SELECT COUNT(*) FROM session_message m WHERE m.session_id = s.id), "
            "(SELECT m.type FROM session_message m WHERE m.session_id = s.id ORDER BY m.seq DESC LIMIT 1) "
            "FROM session_v2 s"
        )

    @staticmethod
    def _info(row: tuple) -> SessionInfo:
        return info_from_row(row, FAMILY, ended=row[8] == "idle")

    def sessions(self, ids: list[str] | None) -> list[SessionInfo]:
        """These sessions (all with None), in no particular order."""
        sql = self._select()
        if ids is None:
            return [self._info(r) for r in self.conn.execute(sql)]
        q = f"{sql} WHERE s.id IN ({','.join('?' * len(ids))})"
        return [self._info(r) for r in self.conn.execute(q, ids)]

    def ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT id FROM session_v2")}

    def cursor(self) -> dict[str, int]:
        """The newest rowid of `session_message` (O(log n), the rowid b-tree)."""
        return {"session_message": self.conn.execute(PROBES["cursor"]).fetchone()[0] or 0}

    def changed_since(self, cursor: dict[str, int]) -> set[str]:
        """Sessions with rows inserted after `cursor` (a rowid range: the new rows only).

        A turn's end is a new `idle` row, so an ended turn is always seen here; rows
        updated in place while a step streams belong to a session still settling.
        Migrated 1.x rows keep their old ids but get new rowids: the migration itself
        shows up as a change of every migrated session, once.
        """
        since = cursor["session_message"]
        return {r[0] for r in self.conn.execute(PROBES["new_rows"], (since,))}

    def newest_update(self) -> int | None:
        """The time_updated of the newest row (through the time_created index)."""
        row = self.conn.execute(PROBES["newest"]).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def counts(self) -> dict[str, int]:
        """Sessions (roots and subagents) and rows, for `memoryd status`."""
        parent = "parent_id IS NULL" if "parent_id" in self.columns["session_v2"] else "1"
        roots, total = self.conn.execute(f"SELECT SUM({parent}), COUNT(*) FROM session_v2").fetchone()
        messages = self.conn.execute("SELECT COUNT(*) FROM session_message").fetchone()[0]
        return {"sessions": int(roots or 0), "subagents": int(total - (roots or 0)), "messages": int(messages)}

    def rows(self, session: SessionInfo) -> SessionRows:
        """The session's rows in `seq` order, normalised into messages and parts."""
        # CAST to BLOB: a row with invalid UTF-8 must not fail the whole query.
        raw = self.conn.execute(
            "SELECT id, type, time_created, CAST(data AS BLOB) FROM session_message WHERE session_id = ? ORDER BY seq",
            (session.id,),
        ).fetchall()
        messages, parts = normalise(raw)
        return SessionRows(session, messages, parts)
