"""Atomic private writes, write-only-on-change, durable batches."""

from __future__ import annotations

import os

from daemon.files import FILE_MODE, atomic_write_text, sync_files, write_if_changed


def test_atomic_write_is_private_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "a" / "note.md"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two", durable=False)
    assert target.read_text() == "two"
    assert oct(target.stat().st_mode & 0o777) == oct(FILE_MODE)
    assert oct(target.parent.stat().st_mode & 0o777) == "0o700"
    assert [p.name for p in target.parent.iterdir()] == ["note.md"]


def test_a_stale_temp_file_from_a_killed_process_with_our_pid_is_replaced(tmp_path):
    from daemon import files

    counter = next(files._counter) + 1
    stale = tmp_path / f"{files.TEMP_PREFIX}{os.getpid()}-{counter}"
    stale.write_text("left by a kill -9")
    atomic_write_text(tmp_path / "x.md", "fresh")
    assert (tmp_path / "x.md").read_text() == "fresh" and not stale.exists()


def test_write_if_changed_writes_only_new_bytes(tmp_path):
    target = tmp_path / "index.md"
    assert write_if_changed(target, "v1") is True
    mtime = target.stat().st_mtime_ns
    assert write_if_changed(target, "v1") is False
    assert target.stat().st_mtime_ns == mtime
    assert write_if_changed(target, "v2") is True


def test_sync_files_accepts_written_and_vanished_files(tmp_path):
    kept = tmp_path / "kept.md"
    atomic_write_text(kept, "x", durable=False)
    sync_files([kept, tmp_path / "gone.md"])  # a note deleted meanwhile is not an error
    assert kept.read_text() == "x"
