"""Memory benchmark: one huge Markdown file in a tree, and the RSS it costs.

    python bench/bench_bigfile.py [--mb 50]

Writes a global tree with a few ordinary memories and one --mb MB memory file, then
measures, as separate processes of this checkout:

1. `memoryd reindex`: wall time and peak RSS;
2. `memoryd run`: peak RSS after its first pass over the tree, and after one line is
   appended to the huge file (the idle daemon's reaction).

Target (issue 10): both stay under 150 MB with a 50 MB file; memory.max_file_bytes
(default 1 MB) is how much of a file memoryd reads.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def write_tree(root: Path, mb: int) -> Path:
    for n in range(20):
        folder = root / ("fact" if n % 2 else "decision")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n}.md").write_text(f"---\ntitle: Memory {n}\n---\n\nOrdinary memory {n}.\n")
    huge = root / "fact" / "huge-log.md"
    line = "2025-06-01 12:00:00 worker retried the deploy after a timeout; 部署 again\n"
    with huge.open("w", encoding="utf-8") as handle:
        handle.write("---\ntitle: Huge log dump\n---\n\n")
        for _ in range(mb * 1024 * 1024 // len(line.encode())):
            handle.write(line)
    return huge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memoryd-bigfile-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "NOTIFY_SOCKET", "WATCHDOG_"))}
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / "config"),
            XDG_DATA_HOME=str(home / "data"),
            XDG_STATE_HOME=str(home / "state"),
            OPENCODE_DB=str(home / "data" / "none" / "opencode.db"),
            MEMORYD_LOG__LEVEL="debug",
            MEMORYD_WATCH__DEBOUNCE_MS="50",
            PYTHONUNBUFFERED="1",
        )
        huge = write_tree(home / "config" / "opencode" / "memory", args.mb)
        print(f"tree: 20 memories and {huge.stat().st_size / 1e6:.1f} MB in {huge.name}")

        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "daemon", "reindex"], cwd=ROOT, env=env, stdout=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        print(f"memoryd reindex: {time.perf_counter() - started:.2f} s, peak RSS {usage.ru_maxrss / 1024:.1f} MB"
              f" (exit {os.waitstatus_to_exitcode(status)})")

        log = home / "daemon.out"
        with log.open("wb") as out:
            daemon = subprocess.Popen([sys.executable, "-m", "daemon", "run"], cwd=ROOT, env=env, stdout=out,
                                      stderr=subprocess.STDOUT)
        try:
            def passes() -> int:
                return log.read_text(errors="replace").count('"tree.pass"')

            deadline = time.monotonic() + 60
            while passes() < 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1)
            print(f"memoryd run, after its first pass: peak RSS {peak_rss_mb(daemon.pid):.1f} MB")
            before = passes()
            with huge.open("a", encoding="utf-8") as handle:
                handle.write("one more line\n")
            while passes() == before and time.monotonic() < deadline + 30:
                time.sleep(0.1)
            time.sleep(1)
            print(f"memoryd run, after one line appended to the huge file: peak RSS {peak_rss_mb(daemon.pid):.1f} MB"
                  "   target < 150 MB")
        finally:
            daemon.terminate()
            daemon.wait(20)


if __name__ == "__main__":
    main()
