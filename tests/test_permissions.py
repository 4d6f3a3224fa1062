"""Private by default: every file memoryd creates is 0600 and every folder 0700, whatever
the umask; a loose state folder is tightened; folders the user made are left alone."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.files import atomic_write_text, ensure_dir
from daemon.logs import get_logger, setup_logging
from daemon.service.lock import InstanceLock
from daemon.state import StateDB


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def modes_under(root: Path) -> dict[str, int]:
    """Relative path → mode of `root` and everything in it."""
    found = {".": mode(root)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = mode(path)
    return found


def loose(root: Path) -> dict[str, str]:
    """Entries under `root` that are not 0700 folders or 0600 files."""
    return {
        name: oct(m)
        for name, m in modes_under(root).items()
        if m != (0o700 if (root / name).is_dir() else 0o600)
    }


@pytest.fixture
def umask_zero() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)



def test_the_building_blocks_are_private_under_umask_zero(tmp_path, umask_zero, restore_logging):
    state = tmp_path / "state" / "memoryd"
    ensure_dir(state / "transcripts")
    db = StateDB(state / "state.db")
    db.set_meta("probe", "1")  # a write: SQLite creates its -wal and -shm files
    assert (state / "state.db-wal").exists() and (state / "state.db-shm").exists()
    atomic_write_text(state / "transcripts" / "ses_1.md", "transcript")
    lock = InstanceLock(state / "memoryd.lock")
    lock.acquire()
    setup_logging(log_file=state / "memoryd.log", max_bytes=10_000, backups=2, stderr=False)
    for number in range(400):  # enough to rotate twice
        get_logger("test").info("filler", number=number, padding="x" * 60)
    try:
        assert (state / "memoryd.log.2").exists()
        assert mode(tmp_path / "state") == 0o700  # a missing parent memoryd made is private too
        assert loose(state) == {}
    finally:
        lock.release()
        db.close()


def test_ensure_dir_leaves_an_existing_folder_as_it_is(tmp_path, umask_zero):
    mine = tmp_path / "memory"
    mine.mkdir(mode=0o755)
    ensure_dir(mine / "sessions")
    assert mode(mine) == 0o755
    assert mode(mine / "sessions") == 0o700


def test_memoryd_under_umask_zero_creates_nothing_readable_by_others(home, fixture_db, tmp_path):
    project = tmp_path / "work" / "app"
    (project / ".git").mkdir(parents=True)
    (project / ".memory").mkdir(mode=0o755)  # the user opted in: their folder
    os.chmod(project / ".memory", 0o755)

    def memoryd(*args: str, cwd: Path | None = None) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "daemon", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            preexec_fn=lambda: os.umask(0),
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    memoryd("distill", "--settle", "0")
    memoryd("compile")
    memoryd("reindex")
    memoryd("remember", "-k", "fact", "-t", "Runner", "Use the backup runner.", cwd=project)

    assert {"state.db", "index.db", "memoryd.log"} <= {p.name for p in home.state_dir.iterdir()}
    assert loose(home.state_dir) == {}
    # ~/.config existed (the user's); memoryd made opencode/memory and everything in it.
    assert loose(home.config / "opencode") == {}
    assert mode(project / ".memory") == 0o755
    assert loose(project / ".memory" / "fact") == {}


def test_a_loose_state_folder_is_tightened_at_start(home, fixture_db):
    state = home.state_dir
    (state / "transcripts").mkdir(parents=True)
    for folder in (state, state / "transcripts"):
        os.chmod(folder, 0o755)
    for name in ("index.db", "memoryd.log.1", "transcripts/ses_old.md"):
        (state / name).write_text("old")
        os.chmod(state / name, 0o644)
    tree = home.global_root / "sessions"
    tree.mkdir(parents=True)
    os.chmod(tree, 0o755)  # the user made their memory tree: not ours to change

    result = CliRunner().invoke(cli, ["distill", "--settle", "0"])
    assert result.exit_code == 0, result.output
    assert loose(state) == {}
    assert mode(tree) == 0o755
    assert any(tree.glob("*.md"))


def test_a_state_folder_loosened_again_is_walked_again(tmp_path):
    from daemon.files import TIGHTENED_STAMP, tighten_private_tree

    state = tmp_path / "state"
    (state / "transcripts").mkdir(parents=True)
    (state / "transcripts" / "ses_a.md").write_text("a")
    os.chmod(state / "transcripts" / "ses_a.md", 0o644)
    assert tighten_private_tree(state) == []
    assert (state / TIGHTENED_STAMP).exists() and loose(state) == {}
    # An older release (or a copy under a loose umask) later leaves the folder open again:
    # the stamp does not excuse it; the whole folder is walked.
    os.chmod(state, 0o755)
    os.chmod(state / "transcripts", 0o755)
    os.chmod(state / "transcripts" / "ses_a.md", 0o644)
    assert tighten_private_tree(state) == []
    assert loose(state) == {}
