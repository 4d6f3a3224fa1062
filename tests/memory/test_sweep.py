"""Expiry: expired memories leave the live tree, old ones are purged, the opencode-memory store is swept."""

from __future__ import annotations

import os
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from daemon.memory.compile import sync_and_compile
from daemon.memory.deletions import DeletionLedger
from daemon.memory.sweep import plan_expired, sweep

from .conftest import NOW, write_memory

# The opencode-memory store's schema (v0.3.0): FTS5 kept in step by triggers.
OPENCODE_MEMORY_SCHEMA = """
CREATE TABLE entries (
  id TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE VIRTUAL TABLE entries_fts USING fts5(title, body, tags, content='entries', content_rowid='rowid');
CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
  INSERT INTO entries_fts(rowid, title, body, tags) VALUES (new.rowid, new.title, new.body, new.tags);
END;
CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
  INSERT INTO entries_fts(entries_fts, rowid, title, body, tags) VALUES ('delete', old.rowid, old.title, old.body, old.tags);
END;
CREATE TRIGGER entries_au AFTER UPDATE ON entries BEGIN
  INSERT INTO entries_fts(entries_fts, rowid, title, body, tags) VALUES ('delete', old.rowid, old.title, old.body, old.tags);
  INSERT INTO entries_fts(rowid, title, body, tags) VALUES (new.rowid, new.title, new.body, new.tags);
END;
"""


def make_store(path: Path, rows: list[tuple[str, int | None]]) -> Path:
    """Create an opencode-memory store with entries (title, expires_at in epoch ms)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(OPENCODE_MEMORY_SCHEMA)
    now_ms = int(NOW.timestamp() * 1000)
    db.executemany(
        "INSERT INTO entries (id, scope, kind, title, body, created_at, updated_at, expires_at) VALUES (?, 'global', 'fact', ?, 'zebra body', ?, ?, ?)",
        [(f"e{i}", title, now_ms, now_ms, expires) for i, (title, expires) in enumerate(rows)],
    )
    db.commit()
    db.close()
    return path


class LivedThrough:
    """A machine that really lived through the days a test's sweeps name: its clock since
    boot moves with them (the real clock, read by the ledger, would stay at the test's
    few seconds)."""

    def __init__(self) -> None:
        self.up = 0.0

    def at(self, moment) -> object:  # noqa: ANN001 - a datetime
        self.up = (moment - NOW).total_seconds()
        return moment

    def __call__(self) -> tuple[str, float]:
        return "boot-1", self.up


@pytest.fixture
def lived(tmp_path) -> tuple[LivedThrough, DeletionLedger]:
    clock = LivedThrough()
    return clock, DeletionLedger(tmp_path / "deletions.json", clock)


@pytest.fixture
def expiring(global_root, index):
    root = global_root.path
    write_memory(root, "fact/outage.md", "title: CI outage\nexpires: 2025-05-31", "the runner is down")
    write_memory(root, "fact/later.md", "title: Later\nexpires: 2025-07-01")
    write_memory(root, "fact/forever.md", "title: Forever")
    write_memory(root, "fact/today.md", "title: Today\nexpires: 2025-06-01")  # through the end of today
    sync_and_compile(index, global_root)
    return global_root


def test_expired_files_move_to_expired_and_the_tree_is_recompiled(expiring, index):
    root = expiring.path
    index.sync_root(expiring)
    report = sweep([expiring], NOW, 30, None, index=index)

    assert report.moved == [(root / "fact/outage.md", root / ".expired/fact/outage.md")]
    assert (root / ".expired/fact/outage.md").read_text().startswith("---\ntitle: CI outage")
    assert "CI outage" not in (root / "fact/index.md").read_text()
    assert root / "fact/index.md" in report.compiled and root / "ROOT.md" in report.compiled
    assert index.search("runner down", [expiring], now=NOW - timedelta(days=30)).hits == []
    assert sorted(m.title for m in index.memories(expiring)) == ["Forever", "Later", "Today"]


def test_sweep_finds_files_the_index_has_not_seen_yet(global_root, index):
    write_memory(global_root.path, "fact/outage.md", "title: CI outage\nexpires: 2025-05-31")
    report = sweep([global_root], NOW, 30, None, index=index)
    assert [src.name for src, _ in report.moved] == ["outage.md"]


def test_a_name_taken_in_expired_gets_a_suffix(index, expiring):
    write_memory(expiring.path, ".expired/fact/outage.md", "title: Earlier outage")
    report = sweep([expiring], NOW, 30, None, index=index)
    assert report.moved[0][1] == expiring.path / ".expired/fact/outage-2.md"
    assert (expiring.path / ".expired/fact/outage.md").read_text().count("Earlier outage") == 1


def test_expired_files_are_purged_after_keep_days(index, expiring, lived):
    clock, ledger = lived
    sweep([expiring], clock.at(NOW), 30, None, index=index, ledger=ledger)
    moved = expiring.path / ".expired/fact/outage.md"
    assert moved.stat().st_mtime == NOW.timestamp()  # the purge clock starts at the move
    assert sweep([expiring], clock.at(NOW + timedelta(days=29)), 30, None, index=index, ledger=ledger).purged == []
    assert moved.exists()
    # Due at 31 days; deleted once a second sweep a real day later agrees.
    report = sweep([expiring], clock.at(NOW + timedelta(days=31)), 30, None, index=index, ledger=ledger)
    assert report.purged == [] and report.waiting == [moved]
    report = sweep([expiring], clock.at(NOW + timedelta(days=32)), 30, None, index=index, ledger=ledger)
    assert moved in report.purged and not moved.exists()
    # Today and Later expired meanwhile and were moved by those sweeps: not purged yet.
    assert sorted(p.name for p in (expiring.path / ".expired/fact").iterdir()) == ["later.md", "today.md"]
    for day in (70, 71):
        sweep([expiring], clock.at(NOW + timedelta(days=day)), 30, None, index=index, ledger=ledger)
    assert not (expiring.path / ".expired/fact").exists()  # emptied folders go too


def test_a_clock_set_ahead_deletes_nothing_for_good(index, expiring, lived):
    clock, ledger = lived
    sweep([expiring], clock.at(NOW), 30, None, index=index, ledger=ledger)
    moved = expiring.path / ".expired/fact/outage.md"
    # The date jumps 40 days ahead for a few real hours, sweeping hourly, then is set right.
    for hour in range(1, 6):
        clock.up = hour * 3600.0
        report = sweep([expiring], NOW + timedelta(days=40, hours=hour), 30, None, index=index, ledger=ledger)
        assert report.purged == [] and moved in report.waiting
    clock.up = 6 * 3600.0
    report = sweep([expiring], NOW + timedelta(hours=6), 30, None, index=index, ledger=ledger)
    assert report.purged == [] and report.waiting == [] and moved.exists()
    # A reboot counts no real time: due again after it, the file waits a real day anew.
    reboot = DeletionLedger(ledger.path, lambda: ("boot-2", 10.0))
    report = sweep([expiring], NOW + timedelta(days=40), 30, None, index=index, ledger=reboot)
    assert report.purged == [] and moved.exists()


def test_a_memory_moved_while_the_clock_was_ahead_comes_back(expiring, index, lived):
    clock, ledger = lived
    root = expiring.path
    ahead = sweep([expiring], NOW + timedelta(days=40), 30, None, index=index, ledger=ledger)
    assert (root / "fact/later.md", root / ".expired/fact/later.md") in ahead.moved  # expires 2025-07-01
    assert "Later" not in (root / "fact/index.md").read_text()
    back = sweep([expiring], NOW, 30, None, index=index, ledger=ledger)  # the clock set right
    assert (root / ".expired/fact/later.md", root / "fact/later.md") in back.restored
    assert (root / ".expired/fact/outage.md").exists()  # expired by any clock: stays out
    assert "Later" in (root / "fact/index.md").read_text()
    assert [m.title for m in index.memories(expiring) if m.title == "Later"] == ["Later"]


def test_plan_expired_is_pure_and_ordered(expiring, index):
    memories = index.memories(expiring)
    assert [m.title for m in plan_expired(memories, NOW + timedelta(days=40))] == ["CI outage", "Today", "Later"]


def test_opencode_memory_store_loses_expired_rows_and_their_fts(index, tmp_path, global_root):
    now_ms = int(NOW.timestamp() * 1000)
    store = make_store(
        tmp_path / "data" / "opencode-memory" / "memory.db",
        [("gone one", now_ms - 1), ("gone two", now_ms), ("kept", now_ms + 1), ("no expiry", None)],
    )
    report = sweep([global_root], NOW, 30, store, index=index)

    assert report.store == store and report.store_deleted == 2
    db = sqlite3.connect(store)
    assert sorted(r[0] for r in db.execute("SELECT title FROM entries")) == ["kept", "no expiry"]
    fts = sorted(r[0] for r in db.execute("SELECT e.title FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid WHERE entries_fts MATCH 'zebra'"))
    assert fts == ["kept", "no expiry"]
    assert db.execute("INSERT INTO entries_fts(entries_fts) VALUES ('integrity-check')") is not None
    db.close()


def test_absent_store_is_off_and_a_foreign_file_is_reported_untouched(index, tmp_path, global_root):
    assert sweep([global_root], NOW, 30, tmp_path / "missing.db", index=index).store is None
    foreign = tmp_path / "foreign.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE notes (x)")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    report = sweep([global_root], NOW, 30, foreign, index=index)
    assert report.store_deleted == 0
    assert "expires_at" in report.problems[0].reason
    assert foreign.read_bytes() == before


def test_a_locked_store_is_reported_not_fatal(tmp_path, global_root):
    now_ms = int(NOW.timestamp() * 1000)
    store = make_store(tmp_path / "memory.db", [("gone", now_ms - 1)])
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        from daemon.memory.sweep import StoreError, sweep_opencode_memory

        with pytest.raises(StoreError, match="cannot sweep"):
            sweep_opencode_memory(store, NOW, busy_timeout_ms=50)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert sweep_opencode_memory(store, NOW) == 1


def test_a_symlink_in_expired_is_removed_not_followed(index, global_root, tmp_path, lived):
    clock, ledger = lived
    target = tmp_path / "precious.md"
    target.write_text("keep me")
    folder = global_root.path / ".expired" / "fact"
    folder.mkdir(parents=True)
    link = folder / "link.md"
    link.symlink_to(target)
    old = (NOW - timedelta(days=90)).timestamp()
    os.utime(link, (old, old), follow_symlinks=False)
    sweep([global_root], clock.at(NOW), 30, None, index=index, ledger=ledger)
    report = sweep([global_root], clock.at(NOW + timedelta(days=1)), 30, None, index=index, ledger=ledger)
    assert link in report.purged and target.read_text() == "keep me"


def test_an_expired_folder_that_is_a_symlink_is_refused(index, expiring, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (expiring.path / ".expired").symlink_to(elsewhere, target_is_directory=True)
    report = sweep([expiring], NOW, 30, None, index=index)
    assert report.moved == [] and (expiring.path / "fact/outage.md").exists()
    assert list(elsewhere.iterdir()) == []
    assert "symlink" in report.problems[0].reason
