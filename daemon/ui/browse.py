"""The viewer's listings, paged, read from the search index on a read-only connection.

Every listing asks SQLite for one page (PAGE_SIZE + 1 rows: the extra one says whether
there is a next page) and counts from the kept tallies, never from a pass over the rows:
a page costs the same at 100 memories and at 100,000.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

PAGE_SIZE = 50
MAX_PAGE = 2000  # past 100,000 rows an offset is no way to browse: search instead
SESSION_KIND = "session"

_COLUMNS = "id, title, description, kind, category, tags, hard_rule, scope, project, root, path, sort_ts, expires"


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

    @property
    def day(self) -> str:
        return self.when.strftime("%Y-%m-%d")


@dataclass(frozen=True)
class Page:
    """One page of a listing."""

    rows: list[Row]
    number: int
    has_next: bool
    total: int | None = None


def _row(r: sqlite3.Row) -> Row:
    try:
        tags = tuple(json.loads(r["tags"]))
    except ValueError:
        tags = ()
    return Row(
        r["id"], r["title"], r["description"], r["kind"], r["category"], tags, bool(r["hard_rule"]), r["scope"],
        r["project"], r["root"], r["path"], datetime.fromtimestamp(r["sort_ts"], UTC), r["expires"],
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

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            db = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA busy_timeout = 2000")
            self._conn = db
        return self._conn

    def available(self) -> bool:
        return self.db_path.exists()

    def _page(self, where: str, params: list[object], order: str, number: int) -> Page:
        offset = (number - 1) * PAGE_SIZE
        sql = f"SELECT {_COLUMNS} FROM doc WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?"
        rows = [_row(r) for r in self._db().execute(sql, [*params, PAGE_SIZE + 1, offset])]
        return Page(rows[:PAGE_SIZE], number, len(rows) > PAGE_SIZE)

    @staticmethod
    def _live(now: datetime) -> tuple[str, list[object]]:
        return "(expires_ts IS NULL OR expires_ts > ?)", [now.timestamp()]

    def memories(self, now: datetime, *, category: str = "", project: str | None = None, number: int = 1) -> Page:
        """Memories other than session notes, hard rules first, then newest."""
        where, params = self._live(now)
        where += " AND category != 'sessions' AND lower(kind) != ?"
        params.append(SESSION_KIND)
        if category:
            where += " AND category = ?"
            params.append(category)
        if project is not None:
            where += " AND project = ?"
            params.append(project)
        return self._page(where, params, "hard_rule DESC, sort_ts DESC, path", number)

    def sessions(self, now: datetime, *, project: str | None = None, number: int = 1) -> Page:
        """Session notes, newest first (the timeline groups them by day)."""
        where, params = self._live(now)
        where += " AND (category = 'sessions' OR lower(kind) = ?)"
        params.append(SESSION_KIND)
        if project is not None:
            where += " AND project = ?"
            params.append(project)
        return self._page(where, params, "sort_ts DESC, path", number)

    def categories(self) -> list[tuple[str, int]]:
        """(category, memories) over every tree, from the index's kept counts."""
        sql = "SELECT category, sum(docs) FROM cat_tag WHERE tag = '' AND category != 'sessions' GROUP BY category"
        return sorted(self._db().execute(sql).fetchall(), key=lambda r: (-r[1], r[0]))

    def projects(self) -> list[tuple[str, int]]:
        """(project, memories) over every tree ('' for machine-wide ones), from the kept counts."""
        sql = "SELECT project, sum(docs) FROM tally GROUP BY project"
        return sorted(self._db().execute(sql).fetchall(), key=lambda r: (r[0] != "", r[0]))

    def total(self) -> int:
        return self._db().execute("SELECT coalesce(sum(docs), 0) FROM tally").fetchone()[0]

    def by_id(self, memory_id: str) -> Row | None:
        """The row of one memory id (the first, if a hand-made tree repeats it)."""
        row = self._db().execute(f"SELECT {_COLUMNS} FROM doc WHERE id = ? ORDER BY path LIMIT 1", (memory_id,))
        found = row.fetchone()
        return _row(found) if found else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
