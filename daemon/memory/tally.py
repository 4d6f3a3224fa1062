"""Counts and orders kept in the index so that a block's inventory costs what it shows.

Without a daemon, `memoryd context` builds the prompt-free part of a block (hard rules,
routing, inventory) in a fresh process. The inventory needs how many memories a caller
sees and the first few of them in the inventory's order. Counted and sorted over the
rows, both grow with the store (~450 ms at 100,000 memories); kept by triggers as the
rows are written, both are read with a few index lookups:

- `tally`: memories per (root, scope, project, hard rule), expired ones included (those
  are few: the sweep moves them out, and they are subtracted through `doc_expires`);
- `twin`: the (category, title) pairs held by more than one root, the only memories a
  project entry can shadow (a global memory with the title of a project one is hidden);
- `doc_inventory`: the rows in the inventory's order within one (root, project, kind
  rank), so the first N of each group are an index walk of N rows, merged here.

The plain queries these replace are in tests/memory/test_tally.py, which checks that
both give the same answers after adds, edits, forgets and expiry.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import NamedTuple

from daemon.memory.index_schema import SELECT
from daemon.memory.roots import MemoryRoot

class _Source(NamedTuple):
    root: str
    scope: str
    project: str
    ours: bool


def _sources(db: sqlite3.Connection, roots: Sequence[MemoryRoot], project: str | None, hard: bool) -> list[_Source]:
    """The (root, scope, project) row sets of `roots` a caller of `project` may see."""
    marks = ", ".join("?" * len(roots))
    rules = "" if hard else " AND hard_rule = 0"
    found: list[_Source] = []
    for root, scope, owner in db.execute(
        f"SELECT DISTINCT root, scope, project FROM tally WHERE root IN ({marks}) AND docs > 0{rules} ORDER BY 1, 2, 3",
        [r.key for r in roots],
    ):
        if project is not None and scope != "project" and owner not in ("", project):
            continue  # another project's memory in the global tree
        found.append(_Source(root, scope, owner, scope == "project" or bool(project) and owner == project))
    return found


def visible_count(
    db: sqlite3.Connection, roots: Sequence[MemoryRoot], now: datetime, project: str | None, *, hard: bool = True
) -> int:
    """How many live memories a caller with these roots sees (`hard`: hard rules counted
    too); the same number as a count over `IndexQueries._visible`, in O(roots + expired + twins)."""
    if not roots:
        return 0
    sources = _sources(db, roots, project, hard)
    if not sources:
        return 0
    keys = [(s.root, s.scope, s.project) for s in sources]
    rules = "" if hard else " AND hard_rule = 0"
    total = sum(
        db.execute(f"SELECT coalesce(sum(docs), 0) FROM tally WHERE root = ? AND scope = ? AND project = ?{rules}", k).fetchone()[0]
        for k in keys
    )
    marks = ", ".join("?" * len(roots))
    scoped, scoped_params = "", []
    if project is not None:
        scoped, scoped_params = " AND (d.scope = 'project' OR d.project = '' OR d.project = ?)", [project]
    expired = db.execute(
        f"SELECT count(*) FROM doc d INDEXED BY doc_expires WHERE d.expires_ts IS NOT NULL AND d.expires_ts <= ? AND d.root IN ({marks})"
        f"{scoped}{' AND d.hard_rule = 0' if not hard else ''}",
        [now.timestamp(), *[r.key for r in roots], *scoped_params],
    ).fetchone()[0]
    return total - expired - _shadowed(db, roots, now, project, scoped, scoped_params)


def _shadowed(
    db: sqlite3.Connection, roots: Sequence[MemoryRoot], now: datetime, project: str | None, scoped: str, params: list
) -> int:
    """Live global memories in scope that a live project memory of the same title hides."""
    projects = [r.key for r in roots if r.scope == "project"]
    if not projects:
        return 0
    marks, pmarks = ", ".join("?" * len(roots)), ", ".join("?" * len(projects))
    return db.execute(
        f"SELECT count(*) FROM twin t CROSS JOIN doc d ON d.root IN ({marks}) AND d.category = t.category "
        "AND d.title_key = t.title_key WHERE d.scope = 'global' AND d.hard_rule = 0 "
        f"AND (d.expires_ts IS NULL OR d.expires_ts > ?){scoped} AND EXISTS (SELECT 1 FROM doc p "
        f"WHERE p.root IN ({pmarks}) AND p.category = d.category AND p.title_key = d.title_key "
        "AND (p.expires_ts IS NULL OR p.expires_ts > ?))",
        [*[r.key for r in roots], now.timestamp(), *params, *projects, now.timestamp()],
    ).fetchone()[0]


def _group(source: _Source, rank: int) -> int:
    if rank == 2:
        return 4 if source.ours else 5
    return (0 if source.ours else 2) + rank


def inventory_page(
    db: sqlite3.Connection,
    roots: Sequence[MemoryRoot],
    visible: tuple[str, Sequence[object]],
    limit: int,
    *,
    project: str | None = None,
    hard: bool = False,
) -> list[sqlite3.Row]:
    """The first `limit` rows (SELECT's columns) of the inventory, in its order: per group,
    one index walk of at most `limit` rows per row set, merged newest first. `visible`:
    the filter on `doc d` (SQL, parameters) a row must pass (`IndexQueries._visible`)."""
    if not roots or limit < 1:
        return []
    where, params = visible
    by_group: dict[int, list[tuple[_Source, int]]] = {}
    for source in _sources(db, roots, project, hard):
        for rank in (0, 1, 2):
            by_group.setdefault(_group(source, rank), []).append((source, rank))
    found: list[sqlite3.Row] = []
    for group in sorted(by_group):
        need = limit - len(found)
        if need < 1:
            break
        walks = [_walk(db, source, rank, where, params, need) for source, rank in by_group[group]]
        merged = heapq.merge(*walks, key=lambda row: (-row["sort_ts"], row["title_key"], row["path"]))
        found.extend(row for _, row in zip(range(need), merged))
    return found


def _walk(
    db: sqlite3.Connection, source: _Source, rank: int, where: str, params: Sequence[object], limit: int
) -> Iterator[sqlite3.Row]:
    yield from db.execute(
        f"SELECT {SELECT}, d.title_key FROM doc d WHERE d.root = ? AND d.project = ? AND d.kind_rank = ? "
        f"AND d.scope = ? AND {where} ORDER BY d.sort_ts DESC, d.title_key, d.path LIMIT {int(limit)}",
        [source.root, source.project, rank, source.scope, *params],
    )
