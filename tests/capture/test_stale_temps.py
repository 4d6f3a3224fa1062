"""Temp files a killed run left behind (its pool's workers end without cleaning up) are
removed by the next run, wherever memoryd writes; a live writer's are not touched."""

from __future__ import annotations

import subprocess
import sys

from daemon.files import TEMP_PREFIX


def test_the_next_distill_removes_the_temp_files_a_killed_run_left(home, fixture_db):
    first = subprocess.run([sys.executable, "-m", "daemon", "distill", "--settle", "0"], capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folders = [home.state_dir, home.state_dir / "transcripts", home.global_root, home.global_root / "sessions"]
    left = [folder / f"{TEMP_PREFIX}{dead.pid}-{n}" for n, folder in enumerate(folders)]
    for path in left:
        path.write_bytes(b"")  # 0 bytes: killed between the open and the write
    again = subprocess.run([sys.executable, "-m", "daemon", "distill", "--settle", "0"], capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert [path for path in left if path.exists()] == []
