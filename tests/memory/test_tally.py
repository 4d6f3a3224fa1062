"""The counts and the inventory order the index keeps (tally.py) give what the plain
queries over every row give, after adds, edits, forgets, root removals and expiry."""

from __future__ import annotations

import random
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from daemon.memory import context
from daemon.memory.index import SearchIndex
from daemon.memory.index_schema import SELECT
from daemon.memory.roots import MemoryRoot
from tests.memory.conftest import NOW, write_memory

# The inventory's order as one SQL ORDER BY over every visible row: what tally.py replaced.
PLAIN_GROUP = (
    "CASE WHEN lower(d.kind) = 'session' THEN (CASE WHEN {ours} THEN 4 ELSE 5 END) "
    "ELSE (CASE WHEN {ours} THEN 0 ELSE 2 END) + (CASE WHEN lower(d.kind) IN ('lesson', 'gotcha') THEN 0 ELSE 1 END) END"
)
TITLES = ("Deploy needs pnpm", "WAL needs shm", "Editor is helix", "Retry with backoff", "Cache keys", "部署脚本")
KINDS = ("lesson", "gotcha", "Gotcha", "session", "SESSION", "fact", "decision", "rule")
CATEGORIES = ("lesson", "fact", "sessions")


def plain_count(index: SearchIndex, roots: list[MemoryRoot], now, project: str | None) -> int:  # noqa: ANN001
    where, params = index._visible(roots, now, True, project)
    return index._db.execute(f"SELECT count(*) FROM doc d WHERE {where}", params).fetchone()[0]


def plain_inventory(index: SearchIndex, roots, now, limit, *, project=None, exclude_id=None, hard_rules_too=False) -> list[str]:  # noqa: ANN001
    where, params = index._visible(roots, now, True, project)
    if not hard_rules_too:
        where += " AND d.hard_rule = 0"
    if exclude_id is not None:
        where += " AND d.id != ?"
        params.append(exclude_id)
    ours = "(d.scope = 'project' OR d.project = ?)" if project else "d.scope = 'project'"
    order = PLAIN_GROUP.format(ours=ours) + f", d.sort_ts DESC, d.title_key, d.path LIMIT {int(limit)}"
    sql = f"SELECT {SELECT} FROM doc d WHERE {where} ORDER BY {order}"
    return [row[0] for row in index._db.execute(sql, [*params, *([project] * 2 if project else [])])]


class Trees:
    """A global tree and two project trees, written at random and synced into one index."""

    def __init__(self, tmp_path: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        worktrees = [tmp_path / "work" / name for name in ("app", "web")]
        for worktree in worktrees:
            (worktree / ".git").mkdir(parents=True)
        self.owners = ["", *map(str, worktrees)]
        self.roots = [MemoryRoot(tmp_path / "global", "global"), *(MemoryRoot(w / ".memory", "project") for w in worktrees)]
        self.index = SearchIndex(tmp_path / "state" / "index.db")
        self.files: list[tuple[MemoryRoot, Path]] = []

    def write(self, root: MemoryRoot, path: Path | None = None) -> None:
        rng = self.rng
        if path is None:
            path = root.path / rng.choice(CATEGORIES) / f"m{len(self.files)}-{rng.randrange(10**6)}.md"
            self.files.append((root, path))
        front = [f"title: {rng.choice(TITLES)}", f"kind: {rng.choice(KINDS)}", f"id: id-{rng.randrange(40)}"]
        front.append(f"updated: {(NOW - timedelta(days=rng.randrange(5))).isoformat()}")  # ties: same day
        if rng.random() < 0.15:
            front.append("hard_rule: true")
        if rng.random() < 0.3:
            front.append(f"expires: {(NOW + timedelta(days=rng.randrange(-3, 4))).date().isoformat()}")
        if root.scope == "global" and rng.random() < 0.6:
            front.append(f"project: {rng.choice(self.owners[1:])}")
        write_memory(root.path, str(path.relative_to(root.path)), "\n".join(front))

    def step(self) -> None:
        """One random change: add, edit or forget a memory, or drop a whole root."""
        roll = self.rng.random()
        if roll < 0.5 or not self.files:
            self.write(self.rng.choice(self.roots))
        elif roll < 0.8:
            self.write(*self.rng.choice(self.files))
        elif roll < 0.97:
            root, path = self.files.pop(self.rng.randrange(len(self.files)))
            path.unlink()
            self.index.remove_file(path)
            return
        else:
            root = self.rng.choice(self.roots)
            self.index.forget_root(root)
            return
        for root in self.roots:
            if root.exists():
                self.index.sync_root(root)

    def check(self, now) -> None:  # noqa: ANN001
        index = self.index
        for roots in (self.roots[:1], [self.roots[1], self.roots[0]], [self.roots[2], self.roots[0]], self.roots[1:2]):
            for project in (None, "", *self.owners[1:]):
                assert index.count_visible(roots, now, project) == plain_count(index, roots, now, project)
                for limit, exclude, hard in ((3, None, False), (50, None, True), (7, "id-3", False)):
                    fast = [str(m.path) for m in index.inventory_rows(
                        roots, now, limit, project=project, exclude_id=exclude, hard_rules_too=hard
                    )]  # fmt: skip
                    assert fast == plain_inventory(
                        index, roots, now, limit, project=project, exclude_id=exclude, hard_rules_too=hard
                    )


@pytest.mark.parametrize("seed", range(4))
def test_kept_counts_and_order_match_the_plain_queries_through_every_change(tmp_path: Path, seed: int) -> None:
    trees = Trees(tmp_path, seed)
    try:
        for number in range(60):
            trees.step()
            if number % 6 == 5:
                midnight = NOW.replace(hour=0)  # the instant a date's expiry takes effect
                for now in (NOW - timedelta(days=4), NOW, midnight + timedelta(days=2), NOW + timedelta(days=5)):
                    trees.check(now)  # before, between, at and after expiries
    finally:
        trees.index.close()


def test_the_kept_tables_equal_a_recount_of_the_rows(tmp_path: Path) -> None:
    trees = Trees(tmp_path, 11)
    try:
        for _ in range(80):
            trees.step()
        db = trees.index._db
        tally = [tuple(r) for r in db.execute("SELECT root, scope, project, hard_rule, docs FROM tally ORDER BY 1, 2, 3, 4")]
        recount = [
            tuple(r)
            for r in db.execute("SELECT root, scope, project, hard_rule, count(*) FROM doc GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4")
        ]
        assert tally == recount and tally
        assert trees.index.count() == db.execute("SELECT count(*) FROM doc").fetchone()[0]
        for root in trees.roots:
            assert trees.index.count([root]) == db.execute("SELECT count(*) FROM doc WHERE root = ?", (root.key,)).fetchone()[0]
        twins = [tuple(r) for r in db.execute("SELECT category, title_key FROM twin ORDER BY 1, 2")]
        shared = [
            tuple(r)
            for r in db.execute("SELECT category, title_key FROM doc GROUP BY 1, 2 HAVING count(DISTINCT root) > 1 ORDER BY 1, 2")
        ]
        assert twins == shared and twins
    finally:
        trees.index.close()


def test_a_shadowed_global_memory_is_neither_counted_nor_listed(tmp_path: Path) -> None:
    project = MemoryRoot(tmp_path / "work" / ".memory", "project")
    (tmp_path / "work" / ".git").mkdir(parents=True)
    glob = MemoryRoot(tmp_path / "global", "global")
    write_memory(glob.path, "fact/a.md", "title: Same title\nkind: fact\nid: g1")
    write_memory(glob.path, "fact/b.md", "title: Other\nkind: fact\nid: g2")
    write_memory(project.path, "fact/a.md", "title: same  TITLE\nkind: fact\nid: p1\nexpires: 2025-06-03")
    with SearchIndex(tmp_path / "index.db") as index:
        index.sync_root(glob)
        index.sync_root(project)
        roots = [project, glob]
        assert index.count_visible(roots, NOW, "") == 2  # g1 hidden by p1
        assert [m.id for m in index.inventory_rows(roots, NOW, 10, project="")] == ["p1", "g2"]
        later = NOW + timedelta(days=3)  # p1 expired: g1 shows again
        assert index.count_visible(roots, later, "") == 2
        assert sorted(m.id for m in index.inventory_rows(roots, later, 10, project="")) == ["g1", "g2"]


def test_the_inventory_walks_an_index_not_the_rows(tmp_path: Path) -> None:
    trees = Trees(tmp_path, 3)
    try:
        for _ in range(10):
            trees.step()
        traced: list[str] = []
        trees.index._db.set_trace_callback(traced.append)
        project = trees.owners[1]
        trees.index.inventory_rows([trees.roots[1], trees.roots[0]], NOW, 5, project=project)
        trees.index._db.set_trace_callback(None)
        walks = [statement for statement in traced if "ORDER BY d.sort_ts" in statement]
        assert walks
        for statement in walks:
            plan = " ".join(str(r[3]) for r in trees.index._db.execute(f"EXPLAIN QUERY PLAN {statement}"))
            assert "doc_inventory" in plan and "TEMP B-TREE FOR ORDER BY" not in plan, plan  # ties only: RIGHT PART
    finally:
        trees.index.close()


def test_the_block_is_what_the_plain_queries_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trees = Trees(tmp_path, 5)
    try:
        for _ in range(40):
            trees.step()
        roots = [trees.roots[1], trees.roots[0]]
        fast = context.build_stable(trees.index, roots, NOW).text
        index = trees.index

        def plain_total(self, r, now=None, p=None, hard_rules=True):  # noqa: ANN001, ANN202
            rules = 0 if hard_rules else len(self.visible(r, now, hard_rules=True, project=p))
            return plain_count(self, r, now, p) - rules

        monkeypatch.setattr(type(index), "count_visible", plain_total)

        def plain_rows(self, r, now, limit, **kw):  # noqa: ANN001, ANN003, ANN202
            paths = plain_inventory(self, r, now, limit, **kw)
            return [next(m for m in self.visible(r, now) if str(m.path) == p) for p in paths]

        monkeypatch.setattr(type(index), "inventory_rows", plain_rows)
        assert context.build_stable(index, roots, NOW).text == fast
    finally:
        trees.index.close()


def test_a_touched_but_unchanged_file_keeps_the_stored_parts(tmp_path: Path) -> None:
    trees = Trees(tmp_path, 8)
    try:
        for _ in range(6):
            trees.step()
        db: sqlite3.Connection = trees.index._db
        db.execute("INSERT INTO stable VALUES ('k', NULL, '{}')")
        db.execute("UPDATE doc SET sig = 'moved'")  # what a sync of a touched, unchanged file writes
        db.execute("DELETE FROM folder")
        assert db.execute("SELECT count(*) FROM stable").fetchone()[0] == 1
        db.execute("UPDATE doc SET title = title || '!' WHERE rowid = (SELECT min(rowid) FROM doc)")
        assert db.execute("SELECT count(*) FROM stable").fetchone()[0] == 0
    finally:
        trees.index.close()


def test_the_count_without_hard_rules_is_the_count_less_the_visible_hard_rules(tmp_path: Path) -> None:
    trees = Trees(tmp_path, 13)
    try:
        for _ in range(50):
            trees.step()
        index = trees.index
        for roots in ([trees.roots[1], trees.roots[0]], trees.roots[:1]):
            for project in (None, "", trees.owners[1]):
                rules = index.visible(roots, NOW, hard_rules=True, project=project)
                assert index.count_visible(roots, NOW, project, hard_rules=False) == (
                    plain_count(index, roots, NOW, project) - len(rules)
                )
    finally:
        trees.index.close()
