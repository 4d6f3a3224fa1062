"""OpenCode's database going bad under a running daemon: damaged inside a valid header,
vanished, rewritten in place with an older copy. Reported once, shown by `memoryd
status`, retried with backoff (not at every file event), and picked up again."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import frontmatter

from tests.capture.helpers import add_message, max_time
from tests.service.conftest import wait_for
from tests.service.test_daemon import session_notes
from tests.service.test_robustness import events

PAGE = 4096


def damage_inside(db: Path) -> None:
    """Overwrite the leaf pages of the `part` table with noise, in place: the header, the
    schema and the other tables stay valid, so it opens, `memoryd status`'s own cheap
    reads see nothing wrong, and reading a session's parts says `database disk image is
    malformed`."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        pages = [row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = 'part' AND pagetype = 'leaf'")]
    finally:
        conn.close()
    noise = random.Random(7)
    with db.open("r+b") as handle:  # in place: same inode, as a disk fault would leave it
        for page in pages:
            handle.seek((page - 1) * PAGE)
            handle.write(bytes(noise.randrange(256) for _ in range(PAGE)))


def status_text(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "daemon", "status"], env=env, capture_output=True, text=True,
                          timeout=60)
    return done.stdout + done.stderr


def touch_often(db: Path, seconds: float) -> None:
    """File events, as OpenCode's writes (or our own reads of the WAL) would make them."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        os.utime(db)
        time.sleep(0.1)


def test_a_damaged_database_is_reported_once_shown_in_status_and_retried_with_backoff(
    home, fixture_db, daemon, notify
):
    daemon.start()
    wait_for(lambda: len(session_notes(home)) == 6, what="the first pass's notes")
    good = home.root / "good.db"
    shutil.copy(fixture_db, good)
    for extra in ("-wal", "-shm"):
        Path(f"{fixture_db}{extra}").unlink(missing_ok=True)
    damage_inside(fixture_db)
    wait_for(lambda: "source.unavailable" in events(daemon.output()), 30, "source.unavailable")
    touch_often(fixture_db, 6)  # sixty file events in six seconds
    seen = events(daemon.output())
    assert seen.count("source.unavailable") == 1, "reported once, not at every event"
    # Backoff 1 s, 2 s, 4 s: a few attempts in those six seconds, not one per event.
    assert seen.count("source.still_unavailable") <= 4, seen.count("source.still_unavailable")
    shown = status_text(daemon.env)
    assert "malformed" in shown and "retried with backoff" in shown, shown

    os.replace(good, fixture_db)  # a good file again (a new inode: tried at once)
    wait_for(lambda: "source.recovered" in events(daemon.output()), 30, "source.recovered")
    assert "malformed" not in status_text(daemon.env)
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.output()


def test_a_vanished_database_is_reported_once_and_picked_up_when_it_is_back(home, fixture_db, daemon, notify):
    daemon.start()
    wait_for(lambda: len(session_notes(home)) == 6, what="the first pass's notes")
    kept = home.root / "kept.db"
    shutil.move(fixture_db, kept)
    for extra in ("-wal", "-shm"):
        Path(f"{fixture_db}{extra}").unlink(missing_ok=True)
    wait_for(lambda: "source.unavailable" in events(daemon.output()), 30, "source.unavailable")
    time.sleep(3)
    assert events(daemon.output()).count("source.unavailable") == 1
    shown = status_text(daemon.env)
    assert f"OpenCode database not found at {fixture_db}" in shown, shown
    shutil.move(kept, fixture_db)
    wait_for(lambda: "source.recovered" in events(daemon.output()), 30, "source.recovered")
    assert daemon.stop() == 0


def _older_and_newer(db: Path, sid: str, tmp: Path) -> Path:
    """Make `db` the newer file (session `sid` deleted, more rows elsewhere); return the
    older copy, which still has `sid`."""
    older = tmp / "older.db"
    shutil.copy(db, older)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM part WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM message WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM session WHERE id = ?", (sid,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return older


def test_a_database_rewritten_in_place_with_an_older_copy_is_noticed(
    home, fixture_db, fixture_sessions, daemon, notify, tmp_path
):
    sid = fixture_sessions["cjk-deploy"]["session"]
    older = _older_and_newer(fixture_db, sid, tmp_path)
    # The newer file grows on (other sessions continue), so the older copy is smaller.
    other = fixture_sessions["deploy-pnpm"]["session"]
    at = max_time(fixture_db) + 1000
    for n in range(40):
        text = f"more work {n} " + "x" * 2000
        add_message(fixture_db, other, f"msg_zz{n:04d}", "user", [(f"prt_zz{n:04d}", {"type": "text", "text": text})],
                    at + n)
    conn = sqlite3.connect(fixture_db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    daemon.start()
    wait_for(lambda: len(session_notes(home)) == 5, what="the notes of the newer file")
    inode = fixture_db.stat().st_ino
    shutil.copyfile(older, fixture_db)  # `cp older.db opencode.db`: same inode, older bytes
    assert fixture_db.stat().st_ino == inode

    def has_note() -> bool:
        return any(frontmatter.load(n).get("session_id") == sid for n in session_notes(home))

    # Long before the periodic full pass (10 minutes): the rewrite itself is noticed.
    wait_for(has_note, 30, "a note for the session only the older copy has")
    assert "source.replaced" in events(daemon.output())
    assert daemon.stop() == 0


def hold_exclusive(db: Path) -> subprocess.Popen:
    """Another program holding OpenCode's database with locking_mode=EXCLUSIVE until killed."""
    code = ("import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE'); c.execute('COMMIT')\n"
            "print('held', flush=True); time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_database_held_locked_is_busy_not_damaged_and_picked_up_when_released(home, fixture_db, daemon, notify):
    holder = hold_exclusive(fixture_db)
    try:
        # A status answers within its own timeout (it would wait five busy timeouts before).
        done = subprocess.run([sys.executable, "-m", "daemon", "status"], env=daemon.env, capture_output=True,
                              text=True, timeout=15)
        assert "busy, retrying" in done.stdout and "damaged" not in done.stdout, done.stdout
        daemon.start()
        wait_for(lambda: "source.unavailable" in events(daemon.output()), 30, "source.unavailable")
        assert "busy, retrying" in daemon.output() and "damaged" not in daemon.output()
    finally:
        holder.kill()
        holder.wait()
    wait_for(lambda: len(session_notes(home)) == 6, 60, "the notes once the lock is gone")
    shown = status_text(daemon.env)
    assert "busy" not in shown and "OpenCode database: " in shown, shown
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.output()
