"""Capture benchmark: full backfill rate vs the raw read + json.loads rate, and a one-change pass.

    python bench/bench_capture.py [--sessions 10000]

Grows a real-shape database (the fixture's sessions cloned with fresh ids), then in
one run measures (1) the raw rate: every session's messages and parts read and each
`data` parsed with json.loads; (2) `memoryd distill`'s full backfill with the default
extractive distiller; (3) the pass after one session changed; (4) a pass with nothing new.
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

from grow_db import grow  # noqa: E402


def raw_rate(db: Path) -> tuple[int, float]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    start = time.perf_counter()
    ids = [r[0] for r in conn.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created, id")]
    for sid in ids:
        for (data,) in conn.execute("SELECT data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)):
            json.loads(data)
        for (data,) in conn.execute("SELECT data FROM part WHERE session_id = ?", (sid,)):
            json.loads(data)
    elapsed = time.perf_counter() - start
    conn.close()
    return len(ids), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ.update(
            HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"),
            XDG_DATA_HOME=str(home / "data"), OPENCODE_DB=str(home / "opencode.db"),
        )
        t0 = time.perf_counter()
        roots = grow(home / "opencode.db", args.sessions)
        print(f"database: {roots} root sessions, {(home / 'opencode.db').stat().st_size / 1e6:.1f} MB (built in {time.perf_counter() - t0:.1f}s)")

        n, raw_s = raw_rate(home / "opencode.db")
        raw = n / raw_s
        print(f"raw read + json.loads:   {raw:8.0f} sessions/s ({raw_s:.2f}s)")

        from daemon.capture.pipeline import PassOptions, open_capturer
        from daemon.config import Config, load_settings
        from daemon.logs import setup_logging
        from tests.capture.helpers import add_message, max_time

        settings, paths = load_settings()
        settings.capture.settle_seconds = 0
        setup_logging("info", paths.log_file, stderr=False)  # the file log costs what it costs in real use
        capture = open_capturer(Config(settings, paths))
        start = time.perf_counter()
        report = capture.run_pass(PassOptions())
        full_s = time.perf_counter() - start
        done = len(report.distilled) + len(report.junk)
        rate = done / full_s
        print(f"memoryd full backfill:   {rate:8.0f} sessions/s ({full_s:.2f}s, {len(report.distilled)} notes, {len(report.junk)} junk)")
        print(f"  = {100 * rate / raw:.0f} % of the raw rate (target >= 25 %)")

        start = time.perf_counter()
        idle = capture.run_pass(PassOptions())
        print(f"pass with nothing new:   {1000 * (time.perf_counter() - start):8.1f} ms ({idle.unchanged} unchanged, {len(idle.distilled)} distilled)")

        start = time.perf_counter()
        scan = capture.run_pass(PassOptions(full_scan=True))
        print(
            f"full scan, nothing new:  {1000 * (time.perf_counter() - start):8.1f} ms "
            f"({scan.unchanged} unchanged; the daemon's reconcile and `memoryd distill`)"
        )

        sid = report.distilled[len(report.distilled) // 2]
        at = max_time(paths.opencode_db) + 1000
        add_message(paths.opencode_db, sid, "msg_zzzzzzzz", "user", [("prt_zzzzzzzz", {"type": "text", "text": "one more thing: bump the version"})], at)
        capture.clock = lambda: (at + 60_000) / 1000
        answers = capture.answers
        start = time.perf_counter()
        one = capture.run_pass(PassOptions())
        print(
            f"pass after one change:   {1000 * (time.perf_counter() - start):8.1f} ms "
            f"({len(one.distilled)} distilled, {capture.answers - answers} distiller answer(s))"
        )
        capture.close()


if __name__ == "__main__":
    main()
