"""A backfill killed with SIGKILL, twice, then run to its end: nothing lost, nothing twice.

A pass syncs and records its notes once per interval (run.COMMIT_SECONDS), not per note:
a kill leaves notes on disk that state.db does not know yet. The next pass must write
those sessions to the same files (found by session id), record every session once, and
leave the index with one entry per note.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from daemon.capture.notefind import session_id_of
from daemon.files import TEMP_PREFIX

REPO = Path(__file__).resolve().parents[2]
SESSIONS = 240


def _grow(db: Path, sessions: int) -> int:
    spec = importlib.util.spec_from_file_location("grow_db", REPO / "bench" / "grow_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.grow(db, sessions)


def _notes(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.suffix == ".md" and p.name != "index.md" and not p.name.startswith(TEMP_PREFIX)]


def _distill(env: dict[str, str], kill_at: int | None, folder: Path) -> int:
    """Run `memoryd distill`; with `kill_at`, SIGKILL it once that many notes exist. Return its status."""
    command = [sys.executable, "-m", "daemon", "distill", "--settle", "0"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if kill_at is not None:
        deadline = time.monotonic() + 120
        while proc.poll() is None and len(_notes(folder)) < kill_at and time.monotonic() < deadline:
            time.sleep(0.01)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert kill_at is not None or proc.returncode == 0, err.decode()
    return proc.returncode


def test_kill_9_mid_backfill_loses_nothing_and_duplicates_nothing(home, fixture_db):
    roots = _grow(fixture_db, SESSIONS)
    env = dict(os.environ)
    folder = home.global_root / "sessions"  # the fixture's projects are other machines' paths

    assert _distill(env, 20, folder) == -signal.SIGKILL, "the first pass ended before it could be killed"
    assert _distill(env, roots // 2, folder) == -signal.SIGKILL, "the second pass ended before it could be killed"
    _distill(env, None, folder)

    conn = sqlite3.connect(home.state_dir / "state.db")
    status = dict(conn.execute("SELECT session_id, status FROM session"))
    paths = dict(conn.execute("SELECT session_id, note_path FROM session WHERE status = 'distilled'"))
    conn.close()
    conn = sqlite3.connect(f"file:{fixture_db}?mode=ro", uri=True)
    root_ids = {r[0] for r in conn.execute("SELECT id FROM session WHERE parent_id IS NULL")}
    conn.close()
    assert root_ids <= set(status), "a session was lost"
    assert set(status.values()) <= {"distilled", "junk"}

    notes = _notes(folder)
    owners = Counter(session_id_of(p) for p in notes)
    assert [sid for sid, n in owners.items() if n > 1] == [], "a session got two notes"
    assert set(owners) == set(paths)
    assert {str(p) for p in notes} == set(paths.values())

    index = sqlite3.connect(home.state_dir / "index.db")
    indexed = Counter(r[0] for r in index.execute("SELECT path FROM doc WHERE path LIKE ?", (f"{folder}/%",)))
    index.close()
    assert set(indexed) == {str(p) for p in notes}, "the index misses a note or holds one that is gone"
    assert max(indexed.values()) == 1
