"""Capture benchmark, OpenCode 1.x and 2.0 side by side: backfill rate vs the raw read +
json.loads rate, passes with nothing new, and a one-change pass.

    python bench/bench_capture.py [--sessions 10000] [--v2-sessions 10000]

Grows two real-shape databases (the 1.18.33 fixture's sessions, and the recorded 2.0.15
ones in a fresh 2.0 database, cloned with fresh ids), then for each, in one run,
measures (1) the raw rate: every session's rows read and each `data` parsed with
json.loads; (2) the full backfill with the default extractive distiller; (3) a pass with
nothing new on the same connection (PRAGMA data_version answers) and on a new one (the
rowid probes answer: a daemon start, `memoryd distill`); (4) the full comparison; (5) the
pass after one session changed. `--v2-sessions 0` skips 2.0.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grow_db import grow, grow_v2  # noqa: E402


def raw_rate(db: Path, v2: bool) -> tuple[int, float]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    start = time.perf_counter()
    table = "session_v2" if v2 else "session"
    ids = [r[0] for r in conn.execute(f"SELECT id FROM {table} WHERE parent_id IS NULL ORDER BY time_created, id")]
    for sid in ids:
        if v2:
            for (data,) in conn.execute("SELECT data FROM session_message WHERE session_id = ? ORDER BY seq", (sid,)):
                json.loads(data)
            continue
        for (data,) in conn.execute("SELECT data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)):
            json.loads(data)
        for (data,) in conn.execute("SELECT data FROM part WHERE session_id = ?", (sid,)):
            json.loads(data)
    elapsed = time.perf_counter() - start
    conn.close()
    return len(ids), elapsed


def timed(label: str, run, detail) -> object:  # noqa: ANN001
    start = time.perf_counter()
    result = run()
    print(f"  {label:<34}{1000 * (time.perf_counter() - start):9.1f} ms ({detail(result)})")
    return result


def change_one(db: Path, sid: str, v2: bool) -> int:
    """Append a turn to one session as the OpenCode version would; return its time."""
    from tests.capture.helpers import add_message, max_time
    from tests.opencode.v2fixture import add_v2_row

    if not v2:
        at = max_time(db) + 1000
        add_message(db, sid, "msg_zzzzzzzz", "user", [("prt_zzzzzzzz", {"type": "text", "text": "one more thing: bump the version"})], at)
        return at
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    at = conn.execute("SELECT MAX(time_updated) FROM session_message").fetchone()[0] + 1000
    conn.close()
    add_v2_row(db, sid, "user", {"text": "one more thing: bump the version", "files": []}, at, "msg_zzzzzzzz01")
    add_v2_row(db, sid, "idle", {"outcome": "succeeded"}, at + 1, "msg_zzzzzzzz02")
    return at + 1


# The 1.x probes a pass made before the source interface (issue #22): a scan of `session`
# for time_updated, a second one for its MAX, and a DISTINCT over a message id range that
# SQLite planned as a scan of the whole (session_id, time_created, id) index.
OLD_V1_PROBES = (
    "SELECT MAX(id) FROM message",
    "SELECT MAX(time_updated) FROM session",
    "SELECT id FROM session WHERE time_updated > 9e15",
    "SELECT DISTINCT session_id FROM message WHERE id > 'msg_zzzz'",
)


def probes_ms(db: Path, cursor: str, v2: bool, repeat: int = 20) -> tuple[float, float | None]:
    """Median ms of the source's nothing-new questions on a new connection (cursor,
    newest row, changed_since), and of the old 1.x probes on the same file."""
    from statistics import median

    from daemon.opencode.reader import OpenCodeReader

    new, old = [], []
    for _ in range(repeat):
        with OpenCodeReader(db) as reader:
            start = time.perf_counter()
            reader.cursor(), reader.newest_update()
            assert not reader.changed_since(cursor)
            new.append(1000 * (time.perf_counter() - start))
            if not v2:
                start = time.perf_counter()
                for sql in OLD_V1_PROBES:
                    reader.conn.execute(sql).fetchall()
                old.append(1000 * (time.perf_counter() - start))
    return median(new), (median(old) if old else None)


def measure(home: Path, sessions: int, v2: bool) -> None:
    from daemon.capture.pipeline import PassOptions, open_capturer
    from daemon.config import Config, load_settings
    from daemon.logs import setup_logging

    name = "OpenCode 2.0 (session_v2)" if v2 else "OpenCode 1.x (session/message/part)"
    db = home / "opencode.db"
    os.environ.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"),
        XDG_DATA_HOME=str(home / "data"), OPENCODE_DB=str(db),
    )
    t0 = time.perf_counter()
    roots = (grow_v2 if v2 else grow)(db, sessions)
    print(f"{name}: {roots} root sessions, {db.stat().st_size / 1e6:.1f} MB (built in {time.perf_counter() - t0:.1f}s)")
    n, raw_s = raw_rate(db, v2)
    raw = n / raw_s
    print(f"  raw read + json.loads:            {raw:9.0f} sessions/s ({raw_s:.2f}s)")

    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    setup_logging("info", paths.log_file, stderr=False)  # the file log costs what it costs in real use
    capture = open_capturer(Config(settings, paths))
    start = time.perf_counter()
    report = capture.run_pass(PassOptions())
    full_s = time.perf_counter() - start
    rate = (len(report.distilled) + len(report.junk)) / full_s
    print(f"  full backfill:                    {rate:9.0f} sessions/s ({full_s:.2f}s, {len(report.distilled)} notes, {len(report.junk)} junk)")
    print(f"    = {100 * rate / raw:.0f} % of the raw rate (target >= 25 %)")
    unchanged = lambda r: f"{r.unchanged} unchanged, {len(r.distilled)} distilled"  # noqa: E731
    # The first pass after a backfill checks every junk verdict once (then a marker skips it).
    timed("first pass after the backfill:", lambda: capture.run_pass(PassOptions()), unchanged)
    timed("pass, nothing new (same conn.):", lambda: capture.run_pass(PassOptions()), unchanged)
    capture.close()
    capture = open_capturer(Config(settings, paths))
    timed("pass, nothing new (new conn.):", lambda: capture.run_pass(PassOptions()), unchanged)
    source, before = probes_ms(db, capture.state.get_meta("source_cursor"), v2)
    print(f"  source probes, nothing new:       {source:9.2f} ms (cursor, newest row, changed_since; new connection)")
    if before is not None:
        print(f"  the same with the old 1.x probes: {before:9.2f} ms (time_updated scan, MAX scan, DISTINCT over ids)")
    timed("full comparison, nothing new:", lambda: capture.run_pass(PassOptions(full_scan=True)), unchanged)
    sid = report.distilled[len(report.distilled) // 2]
    at = change_one(db, sid, v2)
    capture.clock = lambda: (at + 60_000) / 1000
    answers = capture.answers
    timed("pass after one change:", lambda: capture.run_pass(PassOptions()),
          lambda r: f"{len(r.distilled)} distilled, {capture.answers - answers} distiller answer(s)")  # fmt: skip
    capture.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000, help="1.x root sessions")
    parser.add_argument("--v2-sessions", type=int, default=10_000, help="2.0 root sessions (0: skip)")
    args = parser.parse_args()
    for v2, sessions in ((False, args.sessions), (True, args.v2_sessions)):
        if sessions:
            with tempfile.TemporaryDirectory() as tmp:
                measure(Path(tmp), sessions, v2)


if __name__ == "__main__":
    main()
