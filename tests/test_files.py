"""Atomic private writes, write-only-on-change, durable batches."""

from __future__ import annotations

import os

import pytest

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


def test_a_few_notes_are_fsynced_and_a_large_batch_syncs_its_file_system_once(tmp_path, monkeypatch):
    """A daemon's pass saving one note must not wait for every other program's pending
    writes on the disk (syncfs does); a backfill's batch pays one syncfs, not an fsync a note."""
    from daemon import files

    calls: dict[str, list] = {"syncfs": [], "fsync": []}
    real_fsync = os.fsync
    monkeypatch.setattr(files, "_SYNCFS", lambda fd: calls["syncfs"].append(fd) or 0)
    monkeypatch.setattr(files.os, "fsync", lambda fd: calls["fsync"].append(fd) or real_fsync(fd))
    few = [tmp_path / "few" / f"{i}.md" for i in range(2)]
    for path in few:
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, "x", durable=False)
    sync_files(few)
    assert calls["syncfs"] == [] and len(calls["fsync"]) == 3  # two notes, then their folder

    calls["fsync"].clear()
    many = [tmp_path / "many" / f"{i}.md" for i in range(files.SYNCFS_FROM)]
    for path in many:
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, "x", durable=False)
    sync_files(many)
    assert len(calls["syncfs"]) == 1 and calls["fsync"] == []


def test_a_failed_syncfs_falls_back_to_an_fsync_of_each_file_and_folder(tmp_path, monkeypatch):
    from daemon import files

    synced: list[int] = []
    monkeypatch.setattr(files, "_SYNCFS", lambda fd: -1)
    monkeypatch.setattr(files.os, "fsync", synced.append)
    many = [tmp_path / f"{i}.md" for i in range(files.SYNCFS_FROM)]
    for path in many:
        atomic_write_text(path, "x", durable=False)
    sync_files(many)
    assert len(synced) == files.SYNCFS_FROM + 1  # every note, then their folder


def test_stale_temp_files_of_a_dead_writer_are_removed_and_a_live_ones_kept(tmp_path):
    import subprocess
    import sys

    from daemon.files import TEMP_PREFIX, remove_stale_temps

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid is free now (reused only after the whole pid space wraps)
    stale = tmp_path / f"{TEMP_PREFIX}{dead.pid}-0"
    live = tmp_path / f"{TEMP_PREFIX}{os.getpid()}-7"  # a write of ours in flight
    note = tmp_path / "note.md"
    for path in (stale, live, note):
        path.write_bytes(b"")
    assert remove_stale_temps([tmp_path, tmp_path / "missing"]) == [stale]
    assert not stale.exists() and live.exists() and note.exists()


def test_an_interrupt_at_any_point_of_a_write_leaves_no_temp_file(tmp_path, monkeypatch):
    # Ctrl-C (KeyboardInterrupt) raised by each system call in turn that a write makes.
    from daemon import files

    target = tmp_path / "note.md"
    for name in ("open", "write", "fsync", "fchmod", "close", "replace"):
        real = getattr(os, name)

        def interrupted(*args, _real=real, **kwargs):
            _real(*args, **kwargs)  # the call happens (the temp file exists), then Ctrl-C
            raise KeyboardInterrupt

        monkeypatch.setattr(files.os, name, interrupted)
        with pytest.raises(KeyboardInterrupt):
            files.atomic_write_bytes(target, b"text")
        monkeypatch.setattr(files.os, name, real)
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(files.TEMP_PREFIX)] == [], name
