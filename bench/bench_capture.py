"""Capture benchmark, OpenCode 1.x and 2.0 side by side: backfill rate vs the raw read +
json.loads rate, passes with nothing new, and a one-change pass.

    python bench/bench_capture.py [--sessions 10000] [--v2-sessions 10000] [--profile DIR]

Grows two real-shape databases (the 1.18.33 fixture's sessions, and the recorded 2.0.15
ones in a fresh 2.0 database, cloned with fresh ids), then for each, in one run,
measures (1) the raw rate: every session's rows read and each `data` parsed with
json.loads; (2) the full backfill as a user runs it: the whole `memoryd distill` command
in its own process with the default extractive distiller, start-up, notes, transcripts,
state and the indexing and compiling of the trees it wrote included; (3) a pass with
nothing new on the same connection (PRAGMA data_version answers: the daemon) and on a
new one (the rowid probes answer: a daemon start, `memoryd distill`); (4) the full
comparison; (5) the pass after one session changed. `--v2-sessions 0` skips 2.0;
`--profile DIR` runs the backfill under cProfile (CPU time) and writes DIR/distill-<version>-<n>.prof.
Before each backfill it prints what one file create costs in that home: on this machine's
journal-less ext4 that cost grows 10-30 times for minutes after a mass delete (the previous
bench run's homes, say), so a high figure there means the backfill figure below it is not comparable.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from commandenv import command_env  # noqa: E402
from grow_db import grow, grow_v2  # noqa: E402
from machine import Steal, machine_line  # noqa: E402


def raw_rate(db: Path, v2: bool) -> tuple[int, float, float]:
    """Root sessions read, and the seconds it took: wall clock, and CPU (the process's)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    start, cpu = time.perf_counter(), time.process_time()
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
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    conn.close()
    return len(ids), elapsed, cpu


def create_cost_us(folder: Path, files: int = 300) -> float:
    """CPU microseconds to create, write and rename one small file in `folder` now.

    On ext4 without a journal (this machine's disk) the kernel skips every inode freed in
    the last 60-300 s when it allocates one, so right after a mass delete each create
    scans them all and costs 10-30 times more. The files are kept (deleting them would
    cause just that); the run deletes its homes only at its end."""
    probe = folder / "create-probe"
    probe.mkdir()
    start = time.process_time()
    for i in range(files):
        tmp = probe / f".tmp{i}"
        tmp.write_bytes(b"x" * 1500)
        tmp.rename(probe / f"note-{i}.md")
    return 1e6 * (time.process_time() - start) / files


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


# cProfile on CPU time, not wall time: on a machine shared with other work the wall clock
# charges the waits for a core to whatever ran next.
PROFILED = """
import cProfile, sys, time
from daemon.cli.main import main
out, sys.argv = sys.argv[1], ["memoryd", *sys.argv[2:]]
profile = cProfile.Profile(time.process_time)
try:
    profile.runcall(main)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
profile.dump_stats(out)
sys.exit(code)
"""

# The command's own CPU (user + system), written at exit, apart from its workers': which
# side of the pipeline bounds the rate.
SPLIT = """
import resource, sys
from daemon.cli.main import main
out, sys.argv = sys.argv[1], ["memoryd", *sys.argv[2:]]
try:
    main()
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    open(out, "w").write(str(usage.ru_utime + usage.ru_stime))
"""


def distill_command(home: Path, profile: Path | None, tag: str) -> tuple[float, float, float | None, str]:
    """Run the whole `memoryd distill` in its own process; return its seconds (wall clock,
    and CPU: user + system, which a loaded machine inflates less; the command's own CPU
    without its workers' when not profiled) and its summary."""
    own = home / "distill-cpu.txt"
    command = [sys.executable, "-c", SPLIT, str(own), "distill", "--settle", "0"]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        command[2:4] = [PROFILED, str(profile / f"distill-{tag}.prof")]
    # The database just grown is still being written back: that is the bench's cost, not the command's.
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=command_env(), capture_output=True, text=True, check=False, cwd=home)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"memoryd distill failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    main_cpu = float(own.read_text()) if own.exists() else None
    return seconds, cpu, main_cpu, done.stdout.strip().splitlines()[-1]


REPEAT = 7


def nothing_new_ms(config, new_connection: bool) -> float:  # noqa: ANN001
    """Median ms of a pass with nothing new, each on a capturer of its own (the pass
    timed, not the opening) or all on one (after a first pass that is not counted)."""
    from statistics import median

    from daemon.capture.pipeline import PassOptions, open_capturer

    times = []
    capture = open_capturer(config)
    capture.run_pass(PassOptions())
    for _ in range(REPEAT):
        if new_connection:
            capture.close()
            capture = open_capturer(config)
        start = time.perf_counter()
        report = capture.run_pass(PassOptions())
        times.append(1000 * (time.perf_counter() - start))
        assert not report.distilled and not report.junk, "a pass with nothing new distilled something"
    capture.close()
    return median(times)


def measure(home: Path, sessions: int, v2: bool, profile: Path | None = None) -> None:
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
    n, raw_s, raw_cpu = raw_rate(db, v2)
    raw = n / raw_s
    print(f"  raw read + json.loads:            {raw:9.0f} sessions/s ({raw_s:.2f}s; CPU {raw_cpu:.2f}s)")

    print(f"  file create + rename in the home:  {create_cost_us(home):9.0f} us CPU (here: ~80 quiet, ~900 after a mass delete)")
    steal = Steal()
    full_s, full_cpu, main_cpu, summary = distill_command(home, profile, f"{'v2' if v2 else 'v1'}-{sessions}")
    rate = n / full_s
    print(f"  `memoryd distill`, whole command: {rate:9.0f} sessions/s ({full_s:.2f}s; CPU {full_cpu:.2f}s: {summary};"
          f" CPU steal {steal.share()})")
    print(f"    = {100 * rate / raw:.1f} % of the raw rate (target >= 25 %); by CPU time {100 * raw_cpu / full_cpu:.1f} %")
    if main_cpu is not None:
        per = lambda cpu: f"{1000 * cpu / n:.2f} ms a session"  # noqa: E731
        print(f"    CPU: the command's own {main_cpu:.2f}s ({per(main_cpu)}), its workers' {full_cpu - main_cpu:.2f}s ({per(full_cpu - main_cpu)})")
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    setup_logging("info", paths.log_file, stderr=False)  # the file log costs what it costs in real use
    config = Config(settings, paths)
    capture = open_capturer(config)
    # The first pass after a backfill checks every junk verdict once (then a marker skips it).
    timed("first pass after the backfill:", lambda: capture.run_pass(PassOptions()), lambda r: f"{r.unchanged} unchanged")
    capture.close()
    fresh = nothing_new_ms(config, new_connection=True)
    print(f"  pass, nothing new (new conn.):    {fresh:9.2f} ms (median of {REPEAT}; a daemon start, a `memoryd distill`)")
    same = nothing_new_ms(config, new_connection=False)
    print(f"  pass, nothing new (same conn.):   {same:9.2f} ms (median of {REPEAT}; the daemon's passes)")
    capture = open_capturer(config)
    source, before = probes_ms(db, capture.state.get_meta("source_cursor"), v2)
    print(f"  source probes, nothing new:       {source:9.2f} ms (cursor, newest row, changed_since; new connection)")
    if before is not None:
        print(f"  the same with the old 1.x probes: {before:9.2f} ms (time_updated scan, MAX scan, DISTINCT over ids)")
    unchanged = lambda r: f"{r.unchanged} unchanged, {len(r.distilled)} distilled"  # noqa: E731
    timed("full comparison, nothing new:", lambda: capture.run_pass(PassOptions(full_scan=True)), unchanged)
    distilled = [r.session_id for r in capture.state.records("distilled")]
    sid = sorted(distilled)[len(distilled) // 2]
    at = change_one(db, sid, v2)
    capture.clock = lambda: (at + 60_000) / 1000
    timed("pass after one change:", lambda: capture.run_pass(PassOptions()),
          lambda r: f"{len(r.distilled)} distilled, {r.unchanged} unchanged")  # fmt: skip
    capture.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000, help="1.x root sessions")
    parser.add_argument("--v2-sessions", type=int, default=10_000, help="2.0 root sessions (0: skip)")
    parser.add_argument("--profile", type=Path, help="run the backfill under cProfile, writing its .prof here")
    parser.add_argument("--keep", type=Path, help="build the homes under this folder and keep them (to profile later)")
    args = parser.parse_args()
    print(machine_line())
    # Every home is deleted only when the run ends: a delete of the first home's ~20k files
    # would slow the next home's file creates (see create_cost_us).
    with contextlib.ExitStack() as homes:
        for v2, sessions in ((False, args.sessions), (True, args.v2_sessions)):
            if not sessions:
                continue
            name = f"{'v2' if v2 else 'v1'}-{sessions}"
            if args.keep is not None:
                home = args.keep / name
                home.mkdir(parents=True)
            else:
                home = Path(homes.enter_context(tempfile.TemporaryDirectory(prefix=f"bench-capture-{name}-")))
            measure(home, sessions, v2, args.profile)


if __name__ == "__main__":
    main()
