"""The wall clock jumping under a running daemon (libfaketime moves it; the monotonic
clock stays real, as it does when a user or NTP sets the date): sweeps go on, nothing is
deleted for good early, and a session settling across the jump gets its note."""

from __future__ import annotations

import glob
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

from tests.capture.test_note_names import add_session
from tests.service.conftest import wait_for
from tests.service.test_daemon import session_notes

REQUIRED = os.environ.get("MEMORYD_REQUIRE_FAKETIME") == "1"
DAY_S = 86_400


def faketime_library() -> str:
    found = glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1") + glob.glob("/usr/lib/faketime/libfaketimeMT.so.1")
    if not found:
        reason = "libfaketime is not installed (.ci/install-faketime)"
        if REQUIRED:
            pytest.fail(f"{reason} (MEMORYD_REQUIRE_FAKETIME=1 makes this an error)", pytrace=False)
        pytest.skip(reason)
    return found[0]


class WallClock:
    """The daemon's wall clock, as an offset from the real one (libfaketime's file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.set("+0")

    def set(self, offset: str) -> None:
        self.path.write_text(offset + "\n")


@pytest.fixture
def clock(daemon, tmp_path) -> WallClock:
    wall = WallClock(tmp_path / "faketime")
    daemon.env.update(
        LD_PRELOAD=faketime_library(),
        FAKETIME_TIMESTAMP_FILE=str(wall.path),
        FAKETIME_CACHE_DURATION="1",  # the file is read again every second
        FAKETIME_DONT_FAKE_MONOTONIC="1",  # a date change moves the wall clock only
        MEMORYD_SWEEP__INTERVAL_MINUTES="0.05",  # a sweep and a reconcile every 3 s
        MEMORYD_WATCH__RECONCILE_MINUTES="0.05",
    )
    return wall


def tracebacks(output: str) -> list[str]:
    """The tracebacks in the daemon's output, less libfaketime's own: its sleep wrapper
    fails with EINVAL when the offset changes during a sleep (`time.sleep(0.001)` in a
    loop, alone under libfaketime, does it too; a real date change moves no relative
    sleep), which ends the watchdog thread that was sleeping."""
    lines = output.splitlines()
    found = []
    for n, line in enumerate(lines):
        if not line.startswith("Traceback (most recent call last):"):
            continue
        block = lines[n : n + 60]
        end = next((i for i, text in enumerate(block) if re.match(r"[A-Za-z_.]+(Error|Exception|Exit)\b", text)), -1)
        text = "\n".join(block[: end + 1] if end >= 0 else block)
        if not (block[end] == "OSError: [Errno 22] Invalid argument" and "time.sleep(" in text):
            found.append(text)
    return found


def count(daemon, event: str) -> int:
    return daemon.output().count(f'"event": "{event}"')


def test_sweeps_and_reconciles_go_on_when_the_clock_goes_back_a_day(home, fixture_db, daemon, notify, clock):
    daemon.start()
    wait_for(lambda: count(daemon, "sweep.done") >= 1, 30, "the first sweep")
    clock.set("-1d")
    time.sleep(1.5)  # the daemon reads the new offset
    sweeps, passes = count(daemon, "sweep.done"), count(daemon, "tree.pass")
    wait_for(lambda: count(daemon, "sweep.done") >= sweeps + 2, 30, "two sweeps a day back")
    assert count(daemon, "tree.pass") > passes  # a reconcile refreshed the trees too
    clock.set("+0")
    time.sleep(1.5)
    sweeps = count(daemon, "sweep.done")
    wait_for(lambda: count(daemon, "sweep.done") >= sweeps + 1, 30, "a sweep once the clock is right")
    assert daemon.stop() == 0
    assert tracebacks(daemon.output()) == []


def test_thirty_days_ahead_and_back_deletes_nothing_for_good(home, fixture_db, daemon, notify, clock):
    daemon.env["MEMORYD_SWEEP__KEEP_EXPIRED_DAYS"] = "30"
    # Kept 25 days so far: 5 more to go. Due at once 30 days ahead; it must outlive the jump.
    kept = home.global_root / ".expired" / "fact" / "old-outage.md"
    kept.parent.mkdir(parents=True)
    kept.write_text("---\ntitle: Old outage\nkind: fact\nexpires: 2020-01-01\n---\nThe cache fell over.\n")
    moved_at = time.time() - 25 * DAY_S
    os.utime(kept, (moved_at, moved_at))
    # Ten days left: expired 30 days ahead (moved out, not deleted), back once the clock is right.
    soon = home.global_root / "fact" / "soon.md"
    soon.parent.mkdir(parents=True)
    in_ten_days = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 10 * DAY_S))
    soon.write_text(f"---\ntitle: Staging freeze\nkind: fact\nexpires: {in_ten_days}\n---\nNo deploys.\n")
    daemon.start()
    wait_for(lambda: len(session_notes(home)) == 6, 30, "the first pass's notes")
    wait_for(lambda: count(daemon, "sweep.done") >= 1, 30, "the first sweep")
    transcripts = sorted((home.state_dir / "transcripts").glob("*.md"))
    assert transcripts  # kept 14 days: all of them due 30 days ahead
    clock.set("+30d")
    time.sleep(1.5)
    sweeps = count(daemon, "sweep.done")
    wait_for(lambda: count(daemon, "sweep.done") >= sweeps + 3, 30, "three sweeps 30 days ahead")
    assert kept.exists() and sorted((home.state_dir / "transcripts").glob("*.md")) == transcripts
    assert '"purge_waiting": 1' in daemon.output()  # due by the wall clock, and kept
    assert not soon.exists() and (home.global_root / ".expired" / "fact" / "soon.md").exists()
    clock.set("+0")
    time.sleep(1.5)
    sweeps = count(daemon, "sweep.done")
    wait_for(lambda: count(daemon, "sweep.done") >= sweeps + 2, 30, "two sweeps back at the right time")
    assert kept.exists() and sorted((home.state_dir / "transcripts").glob("*.md")) == transcripts
    assert soon.exists() and "Staging freeze" in (home.global_root / "fact" / "index.md").read_text()
    assert daemon.stop() == 0
    assert tracebacks(daemon.output()) == []


def status_of(home, session_id: str) -> str | None:
    db = home.state_dir / "state.db"
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT status FROM session WHERE session_id = ?", (session_id,)).fetchone()
    except sqlite3.OperationalError:
        return None
    finally:
        conn.close()
    return row[0] if row else None


def test_a_session_settling_when_the_clock_is_set_right_gets_its_note(home, fixture_db, daemon, notify, clock):
    daemon.env["MEMORYD_CAPTURE__SETTLE_SECONDS"] = "3"
    clock.set("+30d")
    daemon.start()
    wait_for(lambda: len(session_notes(home)) == 6, 30, "the first pass's notes")
    # OpenCode, under the same clock a month ahead, writes a session's rows with its times.
    sid = "ses_ahead0000settling"
    add_session(fixture_db, sid, int((time.time() + 30 * DAY_S) * 1000), "Bump the base image.")
    wait_for(lambda: status_of(home, sid) == "settling", 30, "the session settling")
    clock.set("+0")  # set right while it settles: its rows now look a month from quiet
    wait_for(lambda: any(sid in p.read_text() for p in session_notes(home)), 30, "its note")
    assert daemon.stop() == 0
    assert tracebacks(daemon.output()) == []
