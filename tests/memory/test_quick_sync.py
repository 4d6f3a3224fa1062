"""The quick sync of reads without a daemon: only category folders whose stat moved are listed."""

from __future__ import annotations

import os
import time

import pytest

from daemon.memory.tree import list_tree

from .conftest import write_memory


def age(*paths) -> None:
    """Move mtimes an hour back: stat signatures are trusted only once a file is older than the clock's granularity."""
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))


@pytest.fixture
def aged(global_root, index):
    """A tree of two categories, indexed by a full sync after every file and folder aged."""
    root = global_root.path
    files = [
        write_memory(root, "fact/a.md", "title: Alpha", "first words"),
        write_memory(root, "fact/b.md", "title: Beta", "second words"),
        write_memory(root, "lesson/c.md", "title: Gamma", "third words"),
    ]
    age(*files, root / "fact", root / "lesson")
    index.sync_root(global_root)
    return global_root


def titles(index, root) -> list[str]:
    return sorted(m.title for m in index.memories(root))


def test_unchanged_folders_are_not_listed(aged, index):
    listing = list_tree(aged, dict(index._db.execute("SELECT name, sig FROM folder")), time.time_ns())
    assert listing.skipped == {"fact", "lesson"}
    assert listing.files == []
    assert index.sync_root(aged, quick=True) == 0


def test_a_file_added_or_removed_moves_its_folder_and_is_seen(aged, index):
    write_memory(aged.path, "fact/d.md", "title: Delta", "new one")
    (aged.path / "lesson" / "c.md").unlink()
    assert index.sync_root_report(aged, quick=True).categories == {"fact", "lesson"}
    assert titles(index, aged) == ["Alpha", "Beta", "Delta"]


def test_a_file_replaced_by_rename_is_seen(aged, index):
    target = aged.path / "fact" / "a.md"
    temp = target.with_name(".a.md.tmp")
    temp.write_text("---\ntitle: Alpha renamed\n---\n\nbody\n", encoding="utf-8")
    os.replace(temp, target)  # an atomic save: how memoryd and most editors write
    assert index.sync_root(aged, quick=True) == 1
    assert "Alpha renamed" in titles(index, aged)


def test_an_edit_in_place_waits_for_a_full_sync(aged, index):
    folder = aged.path / "fact"
    before = folder.stat()
    (folder / "a.md").write_text("---\ntitle: Alpha edited\n---\n\nbody\n", encoding="utf-8")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # in place: the folder did not move
    assert index.sync_root(aged, quick=True) == 0
    assert index.sync_root(aged) == 1
    assert "Alpha edited" in titles(index, aged)


def test_a_removed_folder_takes_its_memories(aged, index):
    for path in (aged.path / "lesson").iterdir():
        path.unlink()
    (aged.path / "lesson").rmdir()
    assert index.sync_root(aged, quick=True) == 1
    assert titles(index, aged) == ["Alpha", "Beta"]


def test_a_broken_file_in_a_skipped_folder_stays_reported(aged, index):
    bad = aged.path / "fact" / "broken.md"
    bad.write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")
    age(bad, bad.parent)
    index.sync_root(aged)
    assert [p.path.name for p in index.problems(aged)] == ["broken.md"]
    index.sync_root(aged, quick=True)
    assert [p.path.name for p in index.problems(aged)] == ["broken.md"]


def test_a_folder_holding_a_link_is_always_listed(aged, index):
    link = aged.path / "fact" / "link.md"
    link.symlink_to(aged.path / "lesson" / "c.md")
    age(aged.path / "fact")
    index.sync_root(aged)
    folders = dict(index._db.execute("SELECT name, sig FROM folder"))
    assert folders["fact"] == "" and folders["lesson"] != ""


def test_a_memory_put_into_a_new_folder_is_listed_by_the_next_quick_sync(aged, index, tmp_path):
    from daemon.memory.tree import read_memory

    path = write_memory(aged.path, "decision/e.md", "title: Epsilon", "put by its writer")
    memory, _ = read_memory(path, aged)
    index.put(memory, path.stat())
    age(path, path.parent)
    assert dict(index._db.execute("SELECT name, sig FROM folder"))["decision"] == ""
    path.unlink()
    path.parent.rmdir()
    index.sync_root(aged, quick=True)
    assert "Epsilon" not in titles(index, aged)
