"""Reading the search index: the visible memories of a scope and what compile needs (search: `search`).

`IndexQueries` is the read half of `SearchIndex` (kept apart to keep each file small);
every query filters in SQL, so a recall over 10,000 memories reads a few rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from daemon.memory.frontmatter import parse_time
from daemon.memory.index_schema import SELECT
from daemon.memory.roots import MemoryRoot
from daemon.memory.search import Hit, SearchQueries, SearchResult
from daemon.memory.tally import inventory_page, visible_count
from daemon.memory.tokenize import quote
from daemon.memory.tree import Memory, Problem, title_key

__all__ = ["Hit", "IndexEntry", "IndexQueries", "SearchResult"]

class IndexEntry(NamedTuple):
    """What compiling needs of a memory, read from the index without parsing its file."""

    category: str
    filename: str
    title: str
    title_key: str
    description: str
    tags: tuple[str, ...]
    scenarios: tuple[str, ...]
    hard_rule: bool

    def relative_path(self) -> str:
        return f"{self.category}/{self.filename}"


@lru_cache(maxsize=256)
def _root(key: str, scope: str) -> MemoryRoot:
    """The root an index row names (its key is already resolved: resolved once, not per query)."""
    return MemoryRoot.of_key(key, scope)


# Where each of SELECT's columns is in a row that starts with them (index_schema decides
# the order; read from it, so a column added there moves nothing here).
_NAMES = [column.strip().removeprefix("d.") for column in SELECT.split(",")]
_WIDTH = len(_NAMES)
(_PATH, _ROOT, _SCOPE, _CATEGORY, _ID, _TITLE, _DESCRIPTION, _KIND, _TAGS, _SCENARIOS, _HARD_RULE,
 _CREATED, _UPDATED, _EXPIRES, _MTIME, _HASH, _PROJECT) = (_NAMES.index(name) for name in (
    "path", "root", "scope", "category", "id", "title", "description", "kind", "tags", "scenarios", "hard_rule",
    "created", "updated", "expires", "mtime", "hash", "project"))  # fmt: skip


# A search reads the same candidates' rows prompt after prompt: their path and times are
# made once (a Path costs ~5 µs; both are immutable, so sharing them changes nothing).
_path = lru_cache(maxsize=8192)(Path)


@lru_cache(maxsize=8192)
def _time(text: str | None) -> datetime | None:
    """An ISO time column as `parse_time` reads it (a frozen datetime: shared safely)."""
    return parse_time(text)


@lru_cache(maxsize=4096)
def _json_list(text: str) -> tuple[str, ...]:
    """A tags or scenarios column as a tuple (kept: a store's tag lists repeat, json.loads is not free)."""
    return () if text == "[]" else tuple(json.loads(text))


class IndexQueries(SearchQueries):
    """The read-only queries of the search index (mixed into SearchIndex)."""

    _db: sqlite3.Connection

    def count(self, roots: Sequence[MemoryRoot] | None = None) -> int:
        """Return the number of indexed memories (in `roots`, if given), from the kept
        counts (tally.py): a count(*) reads a whole index of the store, every prompt."""
        if roots is None:
            return self._db.execute("SELECT coalesce(sum(docs), 0) FROM tally").fetchone()[0]
        marks = ", ".join("?" * len(roots))
        sql = f"SELECT coalesce(sum(docs), 0) FROM tally WHERE root IN ({marks})"
        return self._db.execute(sql, [r.key for r in roots]).fetchone()[0]

    def _memory(self, row: Sequence, roots: dict[str, MemoryRoot], at: int = 0) -> Memory:
        """The Memory of a row holding SELECT's columns from position `at` (a Row or a tuple).
        By position: a Row's lookup by name compares every column's name, on every field."""
        c = row[at : at + _WIDTH]
        root = roots.get(c[_ROOT])
        if root is None:
            root = roots[c[_ROOT]] = _root(c[_ROOT], c[_SCOPE])
        return Memory(
            path=_path(c[_PATH]),
            root=root,
            category=c[_CATEGORY],
            id=c[_ID],
            title=c[_TITLE],
            description=c[_DESCRIPTION],
            kind=c[_KIND],
            tags=_json_list(c[_TAGS]),
            scenarios=_json_list(c[_SCENARIOS]),
            hard_rule=bool(c[_HARD_RULE]),
            created=_time(c[_CREATED]),
            updated=_time(c[_UPDATED]),
            expires=_time(c[_EXPIRES]),
            content_hash=c[_HASH],
            mtime=c[_MTIME],
            project=c[_PROJECT],
        )

    def _select(self, where: str, params: Sequence[object], order: str = "d.sort_ts DESC, d.path") -> list[Memory]:
        roots: dict[str, MemoryRoot] = {}
        rows = self._db.execute(f"SELECT {SELECT} FROM doc d WHERE {where} ORDER BY {order}", params)
        return [self._memory(row, roots) for row in rows]

    def memories(self, root: MemoryRoot) -> list[Memory]:
        """Return every indexed memory of a root (expired ones included), newest first."""
        return self._select("d.root = ?", (root.key,))

    def entries(
        self, root: MemoryRoot, *, category: str | None = None, listed_only: bool = False, path: str | None = None
    ) -> list[IndexEntry]:
        """Return what compile needs for the memories of a root (expired ones included).

        `category` keeps one category; `listed_only` keeps those ROOT.md lists (with
        scenarios or a hard rule). Cheap enough for every file event of a large tree.
        """
        where, params = "root = ?", [root.key]
        if category is not None:
            where += " AND category = ?"
            params.append(category)
        if listed_only:
            where += " AND (scenarios != '[]' OR hard_rule = 1)"
        if path is not None:
            where += " AND path = ?"
            params.append(path)
        rows = self._db.execute(
            f"SELECT category, path, title, title_key, description, tags, scenarios, hard_rule FROM doc WHERE {where}",
            params,
        )
        return [
            IndexEntry(c, p[p.rfind("/") + 1 :], t, k, d, _json_list(tags), _json_list(sc), bool(h))
            for c, p, t, k, d, tags, sc, h in rows
        ]

    def category_counts(self, root: MemoryRoot) -> dict[str, int]:
        """Return category → number of memories, for one root (from the cat_tag counts)."""
        sql = "SELECT category, docs FROM cat_tag WHERE root = ? AND tag = ''"
        return dict(self._db.execute(sql, (root.key,)))

    def tag_counts(self, root: MemoryRoot, categories: Iterable[str]) -> dict[str, dict[str, int]]:
        """Return category → tag → number of memories carrying it, for some categories of a root."""
        wanted = list(categories)
        counts: dict[str, dict[str, int]] = {c: {} for c in wanted}
        if not wanted:
            return counts
        marks = ", ".join("?" * len(wanted))
        for category, tag, count in self._db.execute(
            f"SELECT category, tag, docs FROM cat_tag WHERE root = ? AND category IN ({marks}) AND tag != ''",
            (root.key, *wanted),
        ):
            counts[category][tag] = count
        return counts

    def find_by_id(self, memory_id: str) -> list[Memory]:
        """Return the memories with this id, in any root (normally one)."""
        return self._select("d.id = ?", (memory_id,))

    def find_by_title(self, root: MemoryRoot, title: str) -> list[Memory]:
        """Return the memories of a root whose title is `title` (case and spacing ignored)."""
        return self._select("d.root = ? AND d.title_key = ?", (root.key, title_key(title)))

    def problems(self, root: MemoryRoot | None = None) -> list[Problem]:
        """Return the files skipped or partly read at the last sync (of `root`, or all)."""
        sql = "SELECT path, reason, skipped FROM problem"
        params: tuple = ()
        if root is not None:
            sql += " WHERE root = ?"
            params = (root.key,)
        return [Problem(Path(p), r, bool(s)) for p, r, s in self._db.execute(sql + " ORDER BY path", params)]

    @staticmethod
    def _visible(
        roots: Sequence[MemoryRoot], now: datetime, keep_global_hard_rules: bool, project: str | None = None
    ) -> tuple[str, list[object]]:
        """SQL filter: in `roots`, not expired, and no global entry a project entry shadows.

        `project` (a canonical worktree; "" for none) keeps, of the global tree, only the
        machine-wide entries and that project's: what a session's block may show.
        """
        marks = ", ".join("?" * len(roots))
        where = f"d.root IN ({marks}) AND (d.expires_ts IS NULL OR d.expires_ts > ?)"
        params: list[object] = [r.key for r in roots]
        params.append(now.timestamp())
        if project is not None:
            where += " AND (d.scope = 'project' OR d.project = '' OR d.project = ?)"
            params.append(project)
        projects = [r.key for r in roots if r.scope == "project"]
        if projects:
            # Project wins: a global memory with the same category and title as one in
            # the caller's project is hidden (global hard rules stay, where asked). Only a
            # pair in `twin` (held by more than one root) can be: asked first, a probe of
            # a small table instead of the store's title index for each global row.
            pmarks = ", ".join("?" * len(projects))
            hard = " AND d.hard_rule = 0" if keep_global_hard_rules else ""
            where += (
                f" AND NOT (d.scope = 'global'{hard}"
                " AND EXISTS (SELECT 1 FROM twin t WHERE t.category = d.category AND t.title_key = d.title_key)"
                f" AND EXISTS (SELECT 1 FROM doc p WHERE p.root IN ({pmarks})"
                " AND p.category = d.category AND p.title_key = d.title_key"
                " AND (p.expires_ts IS NULL OR p.expires_ts > ?)))"
            )
            params.extend(projects)
            params.append(now.timestamp())
        return where, params

    def visible(
        self,
        roots: Sequence[MemoryRoot],
        now: datetime | None = None,
        kind: str | None = None,
        keep_global_hard_rules: bool = True,
        limit: int | None = None,
        listed_only: bool = False,
        hard_rules: bool = False,
        project: str | None = None,
    ) -> list[Memory]:
        """Return the live memories a caller with these roots sees, newest first.

        `listed_only` keeps those with scenarios or a hard rule, `hard_rules` the hard rules;
        `project` keeps the global tree's machine-wide entries and that project's only.
        """
        if not roots:
            return []
        where, params = self._visible(roots, now or datetime.now(UTC), keep_global_hard_rules, project)
        if kind is not None:
            where += " AND d.kind = ? COLLATE NOCASE"
            params.append(kind)
        if hard_rules:
            where += " AND d.hard_rule = 1"
        elif listed_only:
            where += " AND (d.scenarios != '[]' OR d.hard_rule = 1)"  # as doc_listed is defined: its index serves
        order = "d.sort_ts DESC, d.title_key, d.path"
        if limit is not None:
            order += f" LIMIT {max(0, int(limit))}"
        return self._select(where, params, order)

    def routed(self, roots: Sequence[MemoryRoot], now: datetime) -> list[tuple[str, str, str, tuple[str, ...]]]:
        """(category, file name, id, scenarios) of the live memories with scenarios that a
        caller with these roots sees: ROOT.md's routing, without a Memory built for each."""
        if not roots:
            return []
        where, params = self._visible(roots, now, True)
        sql = f"SELECT d.category, d.path, d.id, d.scenarios FROM doc d WHERE {where} AND (d.scenarios != '[]' OR d.hard_rule = 1)"
        return [(c, p[p.rfind("/") + 1 :], i, _json_list(sc)) for c, p, i, sc in self._db.execute(sql, params) if sc != "[]"]

    def rule_keys(self, roots: Sequence[MemoryRoot], now: datetime, project: str | None = None) -> list[sqlite3.Row]:
        """(rowid, id, kind, sort_ts, title_key, path) of the live hard rules a caller with
        these roots sees (`project`: as in `visible`): what orders them."""
        if not roots:
            return []
        where, params = self._visible(roots, now, True, project)
        sql = f"SELECT d.rowid, d.id, d.kind, d.sort_ts, d.title_key, d.path FROM doc d WHERE {where} AND d.hard_rule = 1"
        return self._db.execute(sql, params).fetchall()

    def by_rowids(self, rowids: Sequence[int]) -> list[Memory]:
        """The memories of these index rows, in this order."""
        if not rowids:
            return []
        roots: dict[str, MemoryRoot] = {}
        sql = f"SELECT d.rowid AS row_number, {SELECT} FROM doc d WHERE d.rowid IN ({', '.join('?' * len(rowids))})"
        found = {row["row_number"]: self._memory(row, roots, 1) for row in self._db.execute(sql, list(rowids))}
        return [found[rowid] for rowid in rowids]

    def count_visible(
        self, roots: Sequence[MemoryRoot], now: datetime | None = None, project: str | None = None, *, hard_rules: bool = True
    ) -> int:
        """Return how many live memories a caller with these roots sees (`project`: as in
        `visible`; `hard_rules` false: those that are no hard rule); from the counts the
        index keeps (tally.py), not a pass over the rows."""
        return visible_count(self._db, roots, now or datetime.now(UTC), project, hard=hard_rules)

    def scoped_counts(
        self, terms: Sequence[str], roots: Sequence[MemoryRoot], now: datetime, project: str | None, cap: int
    ) -> dict[str, int]:
        """How many of the memories these roots and `project` see hold each term, counted up
        to `cap` (more: cap + 1). Kept until the index changes: a session's words recur."""
        if not terms or not roots:
            return {}
        known: dict[str, int] = self._scope_cache(roots, project).setdefault(cap, {})
        missing = [t for t in terms if t not in known]
        if missing:
            where, params = self._visible(roots, now, True, project)
            sql = (
                "SELECT count(*) FROM (SELECT 1 FROM doc_fts CROSS JOIN doc d ON d.rowid = doc_fts.rowid "
                f"WHERE doc_fts MATCH ? AND {where} LIMIT ?)"
            )
            for term in missing:
                known[term] = self._db.execute(sql, [quote(term), *params, cap + 1]).fetchone()[0]
        return {t: known[t] for t in terms}

    def scope_size(self, roots: Sequence[MemoryRoot], now: datetime, project: str | None) -> int:
        """`count_visible`, kept until the index changes (asked on every prompt)."""
        cache = self._scope_cache(roots, project)
        if "size" not in cache:
            cache["size"] = self.count_visible(roots, now, project)
        return cache["size"]

    def _scope_cache(self, roots: Sequence[MemoryRoot], project: str | None) -> dict:
        """What is kept about one scope while the index stays as it is (any write, by this
        connection or another, changes `total_changes` or `data_version`)."""
        version = (self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes)
        cache = self.__dict__.setdefault("_scoped", {})
        if cache.get("version") != version:
            cache.clear()
            cache["version"] = version
        return cache.setdefault((tuple(r.key for r in roots), project), {})

    def inventory_rows(
        self,
        roots: Sequence[MemoryRoot],
        now: datetime,
        limit: int,
        *,
        project: str | None = None,
        exclude_id: str | None = None,
        hard_rules_too: bool = False,
    ) -> list[Memory]:
        """The first `limit` memories of an inventory, in its order: this project's lessons
        and gotchas, its other curated memories, then the machine-wide ones alike, then this
        project's sessions, then anything else; newest first in each (see tally.py).

        A memory is "this project's" when it is in the project tree, or in the global tree
        with `project` set to it; `project` None counts the project tree alone.
        """
        if not roots or limit < 1:
            return []
        where, params = self._visible(roots, now, True, project)
        if not hard_rules_too:
            where += " AND d.hard_rule = 0"
        if exclude_id is not None:
            where += " AND d.id != ?"
            params.append(exclude_id)
        roots_seen: dict[str, MemoryRoot] = {}
        rows = inventory_page(self._db, roots, (where, params), limit, project=project, hard=hard_rules_too)
        return [self._memory(row, roots_seen) for row in rows]

    def expired(self, root: MemoryRoot, now: datetime) -> list[Memory]:
        """Return the memories of a root whose `expires` has passed."""
        where = "d.root = ? AND d.expires_ts IS NOT NULL AND d.expires_ts <= ?"
        return self._select(where, (root.key, now.timestamp()))
