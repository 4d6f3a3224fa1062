"""The viewer's listings, paged, read from the search index on a read-only connection.

A page is found by walking the index's `doc_inventory` (root, project, kind rank, newest
first) from a cursor, the last row of the page before (its time and rowid), for each
(tree, project) the tallies name: PAGE_SIZE + 1 rows from each walk, merged. No page
sorts or skips the whole store, so the thousandth page costs what the first does, at
100 memories and at 100,000. A kind (category) is read from its own index
(`doc_root_title`) and sorted: what it costs grows with that kind, not the store; counts
come from the kept tallies.
"""

from __future__ import annotations

import json
import sqlite3
import heapq
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from daemon.source import AGENT_LABELS, AGENT_TAG, agent_of_tags

PAGE_SIZE = 50
MAX_PAGE = 2000  # of the record of given blocks (a small file): page numbers there
SESSION_KIND = "session"

_COLUMNS = "id, title, description, kind, category, tags, hard_rule, scope, project, root, path, sort_ts, expires, rowid"
HARD_RULES_SHOWN = 100
# The index's kind ranks (index_schema.KIND_RANK): 0 lessons and gotchas, 1 the rest, 2 sessions.
MEMORY_RANKS, SESSION_RANKS = (0, 1), (2,)


@dataclass(frozen=True)
class Row:
    """One memory as a listing shows it (no body)."""

    id: str
    title: str
    description: str
    kind: str
    category: str
    tags: tuple[str, ...]
    hard_rule: bool
    scope: str
    project: str
    root: str
    path: str
    when: datetime
    expires: str | None
    rowid: int = 0
    sort_ts: float = 0.0  # as stored: a page's cursor must compare equal to it

    @property
    def day(self) -> str:
        return self.when.strftime("%Y-%m-%d")

    @property
    def agent(self) -> str:
        """The agent whose session this note is ("OpenCode", "Claude Code"…), "" for none."""
        return AGENT_LABELS.get(agent_of_tags(self.tags), "")


@dataclass(frozen=True)
class Page:
    """One page of a listing, and the cursor of the next one ("" when it is the last)."""

    rows: list[Row]
    after: str  # where the page started ("" : the newest)
    next_after: str
    hard_rules: list[Row] = field(default_factory=list)  # on a first page of memories


def cursor_of(row: Row) -> str:
    return f"{row.sort_ts!r}:{row.rowid}"


def parse_cursor(text: str | None) -> tuple[float, int] | None:
    """(time, rowid) from a page link's `after`; None for the first page or anything unreadable."""
    try:
        when, rowid = (text or "").split(":")
        return float(when), int(rowid)
    except ValueError:
        return None


def _row(r: sqlite3.Row) -> Row:
    try:
        tags = tuple(json.loads(r["tags"]))
    except ValueError:
        tags = ()
    return Row(
        r["id"], r["title"], r["description"], r["kind"], r["category"], tags, bool(r["hard_rule"]), r["scope"],
        r["project"], r["root"], r["path"], datetime.fromtimestamp(r["sort_ts"], UTC), r["expires"], r["rowid"], r["sort_ts"],
    )  # fmt: skip


def clamp_page(value: str | int | None) -> int:
    """A page number from a query string: 1..MAX_PAGE, 1 for anything unreadable."""
    try:
        number = int(value or 1)
    except ValueError:
        return 1
    return max(1, min(MAX_PAGE, number))


class Browser:
    """Read-only queries over the index file, on one connection of the viewer's own (the
    viewer answers on one thread: its event loop)."""

    def __init__(self, db_path: Path, notes_category: str = "sessions") -> None:
        self.db_path = db_path
        self.notes_category = notes_category
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            db = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA busy_timeout = 2000")
            self._conn = db
        return self._conn

    def _trees(self, project: str | None) -> list[tuple[str, str]]:
        """(root, project) of every tree with memories (of one project, if given)."""
        sql, params = "SELECT DISTINCT root, project FROM tally", []
        if project is not None:
            sql, params = sql + " WHERE project = ?", [project]
        return [(r[0], r[1]) for r in self._db().execute(sql, params)]

    def _walk(
        self,
        now: datetime,
        ranks: tuple[int, ...],
        project: str | None,
        where: str,
        params: list[object],
        after: str,
    ) -> Page:
        """PAGE_SIZE rows newest first from `after`, over every tree's walk of doc_inventory."""
        start = parse_cursor(after)
        cond = "root = ? AND project = ? AND kind_rank = ? AND (expires_ts IS NULL OR expires_ts > ?)" + where
        if start is not None:  # from the cursor on: a range of the index, not a filter
            cond += " AND sort_ts <= ? AND NOT (sort_ts = ? AND rowid <= ?)"
        sql = f"SELECT {_COLUMNS} FROM doc WHERE {cond} ORDER BY sort_ts DESC, rowid LIMIT ?"
        walks = []
        for root, owner in self._trees(project):
            for rank in ranks:
                args = [root, owner, rank, now.timestamp(), *params]
                if start is not None:
                    args += [start[0], start[0], start[1]]
                walks.append([_row(r) for r in self._db().execute(sql, [*args, PAGE_SIZE + 1])])
        merged = list(heapq.merge(*walks, key=lambda r: (-r.sort_ts, r.rowid)))[: PAGE_SIZE + 1]
        rows = merged[:PAGE_SIZE]
        return Page(rows, after if start else "", cursor_of(rows[-1]) if len(merged) > PAGE_SIZE else "")

    def _sorted(self, now: datetime, category: str, project: str | None, after: str) -> Page:
        """A kind's page: its rows from their own index (doc_root_title), sorted: the cost
        of the kind's size, not the store's (a walk would read every row of other kinds)."""
        start = parse_cursor(after)
        cond = "category = ? AND lower(kind) != 'session' AND hard_rule = 0 AND (expires_ts IS NULL OR expires_ts > ?)"
        params: list[object] = [category, now.timestamp()]
        if project is not None:
            # `+project`: no index on it (SQLite's rule), so the planner keeps to the kind's
            # index instead of walking every row of the project.
            cond += " AND +project = ?"
            params.append(project)
        if start is not None:
            cond += " AND (sort_ts < ? OR (sort_ts = ? AND rowid > ?))"
            params += [start[0], start[0], start[1]]
        roots = sorted({root for root, _ in self._trees(project)})
        if not roots:
            return Page([], "", "")
        cond = f"root IN ({', '.join('?' * len(roots))}) AND " + cond
        sql = f"SELECT {_COLUMNS} FROM doc WHERE {cond} ORDER BY sort_ts DESC, rowid LIMIT ?"
        merged = [_row(r) for r in self._db().execute(sql, [*roots, *params, PAGE_SIZE + 1])]
        rows = merged[:PAGE_SIZE]
        return Page(rows, after if start else "", cursor_of(rows[-1]) if len(merged) > PAGE_SIZE else "")

    def memories(self, now: datetime, *, category: str = "", project: str | None = None, after: str = "") -> Page:
        """Memories other than session notes, newest first; a first page leads with the hard rules."""
        if category:
            page = self._sorted(now, category, project, after)
        else:
            page = self._walk(now, MEMORY_RANKS, project, " AND hard_rule = 0", [], after)
        if not page.after:
            page.hard_rules.extend(self.hard_rules(now, category=category, project=project))
        return page

    def hard_rules(self, now: datetime, *, category: str = "", project: str | None = None) -> list[Row]:
        """The live hard rules (of a kind, of a project), newest first. Read from the index
        of listed memories alone and filtered here: a filter on the project in SQL lets the
        planner walk the project's every row instead."""
        roots = sorted({root for root, _ in self._trees(project)})
        if not roots:
            return []
        cond = f"root IN ({', '.join('?' * len(roots))}) AND (scenarios != '[]' OR hard_rule = 1) AND hard_rule = 1"
        sql = f"SELECT {_COLUMNS} FROM doc WHERE {cond} AND (expires_ts IS NULL OR expires_ts > ?)"
        rows = [_row(r) for r in self._db().execute(sql, [*roots, now.timestamp()])]
        kept = [r for r in rows if (not category or r.category == category) and (project is None or r.project == project)]
        return sorted(kept, key=lambda r: (-r.sort_ts, r.rowid))[:HARD_RULES_SHOWN]

    def sessions(self, now: datetime, *, project: str | None = None, agent: str = "", after: str = "") -> Page:
        """Session notes (kind session), newest first (the timeline groups them by day); of one
        agent's sessions when `agent` names one (the note's `agent-<agent>` tag)."""
        if agent not in AGENT_LABELS:
            return self._walk(now, SESSION_RANKS, project, "", [], after)
        # tags is the note's JSON list: the quoted tag matches that tag alone, never a longer one.
        return self._walk(now, SESSION_RANKS, project, " AND instr(tags, ?) > 0", [f'"{AGENT_TAG}{agent}"'], after)

    def categories(self) -> list[tuple[str, int]]:
        """(category, memories) over every tree, from the index's kept counts."""
        sql = "SELECT category, sum(docs) FROM cat_tag WHERE tag = '' AND category != ? GROUP BY category"
        return sorted(self._db().execute(sql, (self.notes_category,)).fetchall(), key=lambda r: (-r[1], r[0]))

    def projects(self) -> list[tuple[str, int]]:
        """(project, memories) over every tree ('' for machine-wide ones), from the kept counts."""
        sql = "SELECT project, sum(docs) FROM tally GROUP BY project"
        return sorted(self._db().execute(sql).fetchall(), key=lambda r: (r[0] != "", r[0]))

    def total(self) -> int:
        return self._db().execute("SELECT coalesce(sum(docs), 0) FROM tally").fetchone()[0]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
