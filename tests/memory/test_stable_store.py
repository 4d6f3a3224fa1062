"""The prompt-free part kept in the index for `memoryd context`: reused only while it is exact."""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import pytest

from daemon.memory import context as context_module
from daemon.memory.context import context_payload
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from daemon.memory.stable_store import StoredStable
from daemon.memory.workspace import Workspace
from tests.memory.conftest import NOW, write_memory
from tests.memory.test_context import inject


@pytest.fixture
def filled(ws: Workspace, project_root: MemoryRoot, global_root: MemoryRoot) -> Workspace:
    write_memory(project_root.path, "rule/main.md", "title: Never push to main\nkind: rule\nhard_rule: true\nid: p-rule\n"
                 "scenarios: [releasing]\nupdated: 2025-02-01")  # fmt: skip
    write_memory(project_root.path, "lesson/pnpm.md", "title: pnpm needs the frozen lockfile\nkind: lesson\nid: p-lesson\n"
                 "updated: 2025-03-01", "The deploy broke because pnpm rewrote the lockfile.")  # fmt: skip
    write_memory(global_root.path, "fact/editor.md", "title: Editor is helix\nkind: fact\nid: g-fact\nupdated: 2025-05-01\n"
                 "expires: 2025-06-02")  # fmt: skip
    aged(project_root.path, global_root.path)
    ws.refresh()
    return ws


def aged(*folders: Path) -> None:
    """Files an hour old: the index trusts their stat (a file seconds old is read again each sync)."""
    old = time.time() - 3600
    for folder in folders:
        for path in folder.rglob("*.md"):
            os.utime(path, (old, old))


def payload(ws: Workspace, prompt: str = "why does the deploy break", now=NOW, settings=None) -> dict:  # noqa: ANN001
    settings = settings or inject()
    kept = StoredStable(ws.index, ws.roots("all"), settings, now)
    return context_payload(ws, settings, None, prompt, now, stable_cache=kept)


def rows(index: SearchIndex) -> int:
    return index._db.execute("SELECT count(*) FROM stable").fetchone()[0]


def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    builds: list[int] = []
    real = context_module.build_stable

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(context_module, "build_stable", counting)
    return builds


def test_a_second_call_reuses_the_part_and_gives_the_same_bytes(filled: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    builds = count_builds(monkeypatch)
    first = payload(filled)
    assert rows(filled.index) == 1 and len(builds) == 1
    again = payload(filled)
    assert again == first and len(builds) == 1
    other = payload(filled, "editor")  # another prompt: the same prompt-free part
    assert len(builds) == 1 and other["generation"] == first["generation"]
    assert context_payload(filled, inject(), None, "why does the deploy break", NOW) == first  # as built afresh


def test_any_change_to_the_index_empties_it(filled: Workspace, project_root: MemoryRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    first = payload(filled)
    builds = count_builds(monkeypatch)
    write_memory(project_root.path, "gotcha/wal.md", "title: WAL needs shm\nkind: gotcha\nid: p-wal\nupdated: 2025-05-05")
    aged(project_root.path)
    filled.refresh()
    assert rows(filled.index) == 0
    second = payload(filled)
    assert len(builds) == 1 and "WAL needs shm" in second["block"] and second["generation"] != first["generation"]
    (project_root.path / "gotcha" / "wal.md").unlink()
    filled.index.remove_file(project_root.path / "gotcha" / "wal.md")
    assert rows(filled.index) == 0
    assert payload(filled)["block"] == first["block"]


def test_an_expiry_ends_it(filled: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    first = payload(filled)
    assert "Editor is helix" in first["block"]
    builds = count_builds(monkeypatch)
    later = NOW + timedelta(days=2)  # past the fact's expiry
    after = payload(filled, now=later)
    assert len(builds) == 1 and "Editor is helix" not in after["block"]
    assert payload(filled, now=later) == after and len(builds) == 1  # kept again, with no expiry ahead


def test_other_settings_are_another_entry(filled: Workspace) -> None:
    wide = payload(filled)
    narrow = payload(filled, settings=inject(inventory_chars=60))
    assert narrow["block"] != wide["block"] and rows(filled.index) == 2
    assert payload(filled) == wide


def test_a_commit_by_another_process_while_building_keeps_nothing(
    filled: Workspace, project_root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = context_module.build_stable
    other = sqlite3.connect(filled.index.db_path, isolation_level=None)

    def interrupted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        part = real(*args, **kwargs)
        other.execute("INSERT INTO meta VALUES ('elsewhere', 'a write by another process')")
        return part

    monkeypatch.setattr(context_module, "build_stable", interrupted)
    payload(filled)
    other.close()
    assert rows(filled.index) == 0


def test_a_writer_holding_the_lock_does_not_make_it_wait(filled: Workspace, tmp_path: Path) -> None:
    other = sqlite3.connect(filled.index.db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert payload(filled)["enabled"]  # answered; nothing stored
        assert rows(filled.index) == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert filled.index.busy_timeout_ms == 5000
    assert filled.index._db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
