"""A disk that fills up, for real: a small tmpfs (as root), every command on it.

Each command must say "disk full" and name the file it could not write, with no
traceback, damage nothing (no state database moved aside), and work again once
there is space.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import OPENCODE_FIXTURE
from tests.service.conftest import wait_for


def _mount_tmpfs(where: Path, size: str) -> str | None:
    """Mount a tmpfs of `size` at `where`; return why not, or None."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "needs root to mount a small tmpfs"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else f"cannot mount a tmpfs here: {done.stderr.strip()}"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    where.mkdir()
    reason = _mount_tmpfs(where, "4m")
    if reason:
        pytest.skip(reason)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Fill `disk` to the last byte; return the filler, whose removal frees it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 1):  # big blocks, then the last bytes
            try:
                while os.write(fd, b"\0" * size):
                    continue
            except OSError:
                continue  # ENOSPC: full at this block size, as wanted
    finally:
        os.close(fd)
    return filler


def env_for(home_on: Path, state_on: Path, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "NOTIFY_SOCKET", "WATCHDOG_"))}
    env.update(
        HOME=str(home_on / "home"),
        XDG_CONFIG_HOME=str(home_on / "home/.config"),
        XDG_DATA_HOME=str(home_on / "home/.local/share"),
        XDG_STATE_HOME=str(state_on / "state"),
        OPENCODE_DB=str(db),
        MEMORYD_CAPTURE__SETTLE_SECONDS="0",
    )
    return env


def memoryd(env: dict[str, str], *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "daemon", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=env["HOME"])


def assert_named_full(done: subprocess.CompletedProcess[str], where: Path) -> None:
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    assert "disk full" in out and str(where) in out, out
    assert "truncated or damaged" not in out and "delete it" not in out, "a full disk is not damage"


def test_every_command_names_a_full_state_disk(small_disk: Path, tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", db)
    env = env_for(tmp_path, small_disk, db)
    Path(env["HOME"]).mkdir(parents=True)
    assert memoryd(env, "distill").returncode == 0
    state_dir = small_disk / "state" / "memoryd"
    filler = fill(small_disk)

    for args in (("distill", "--force"), ("remember", "--global", "--kind", "lesson", "--title", "T", "body")):
        done = memoryd(env, *args)
        assert done.returncode == 1, done.stderr
        assert_named_full(done, state_dir)
    status = memoryd(env, "status")
    assert_named_full(status, state_dir)
    run = memoryd(env, "run", timeout=60)
    assert run.returncode == 1
    assert_named_full(run, state_dir)

    filler.unlink()
    assert not list(state_dir.glob("*.broken-*")), "a full disk must not make memoryd move its state aside"
    again = memoryd(env, "distill", "--force")
    assert again.returncode == 0, again.stderr
    assert "disk full" not in memoryd(env, "status").stdout


def test_a_full_tree_disk_is_named_by_distill_and_by_the_daemon(small_disk: Path, tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", db)
    env = env_for(small_disk, tmp_path, db)  # the trees on the small disk, the state elsewhere
    Path(env["HOME"]).mkdir(parents=True)
    filler = fill(small_disk)
    tree = small_disk / "home/.config/opencode/memory"

    done = memoryd(env, "distill")
    assert done.returncode == 1
    assert_named_full(done, tree)

    log = tmp_path / "daemon.out"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "daemon", "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "daemon.disk_full" in log.read_text(), 60, "daemon.disk_full in the log")
    finally:
        proc.terminate()
        proc.wait(30)
    text = log.read_text()
    assert "Traceback" not in text and str(tree) in text

    filler.unlink()
    assert memoryd(env, "distill").returncode == 0
    assert list((tree / "sessions").glob("*.md"))
