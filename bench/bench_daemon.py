"""Daemon benchmark: idle cost and reaction times of `memoryd run` on a 10,000-session database.

    python bench/bench_daemon.py [--sessions 10000] [--idle-seconds 60]

Measures, against a real `memoryd run` process (backfill done first, settle 0):
  * idle CPU % and RSS over --idle-seconds with no activity (from /proc);
  * latency from a committed session row to its note rewritten on disk;
  * latency from a Markdown edit to the recompiled index.md.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import frontmatter  # noqa: E402
from grow_db import grow  # noqa: E402


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_for(predicate, timeout: float = 60.0, step: float = 0.002) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if predicate():
            return time.perf_counter() - start
        time.sleep(step)
    raise TimeoutError("condition not met")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        db = home / "data" / "opencode" / "opencode.db"
        db.parent.mkdir(parents=True)
        env = {
            **os.environ,
            "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_STATE_HOME": str(home / "state"),
            "XDG_DATA_HOME": str(home / "data"), "MEMORYD_CAPTURE__SETTLE_SECONDS": "0",
        }
        env.pop("OPENCODE_DB", None)
        roots = grow(db, args.sessions)
        print(f"database: {roots} root sessions, {db.stat().st_size / 1e6:.0f} MB")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "daemon", "distill"], env=env, check=True, capture_output=True)
        print(f"backfill before the daemon starts: {time.perf_counter() - t0:.1f}s")

        sock_path = home / "notify.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(sock_path))
        sock.settimeout(120)
        daemon = subprocess.Popen(
            [sys.executable, "-m", "daemon", "run"], env={**env, "NOTIFY_SOCKET": str(sock_path)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            start = time.perf_counter()
            while b"READY=1" not in sock.recv(4096):
                pass
            print(f"start-up to READY=1 (first reconcile over {roots} sessions): {time.perf_counter() - start:.2f}s")
            time.sleep(7)  # let the first sweep (5 s after start) and compiles finish
            cpu0, wall0 = proc_cpu_seconds(daemon.pid), time.perf_counter()
            rss = [proc_rss_mb(daemon.pid)]
            windows = []
            while time.perf_counter() - wall0 < args.idle_seconds:
                before = proc_cpu_seconds(daemon.pid)
                time.sleep(min(10.0, args.idle_seconds))
                windows.append(proc_cpu_seconds(daemon.pid) - before)
                rss.append(proc_rss_mb(daemon.pid))
            cpu = proc_cpu_seconds(daemon.pid) - cpu0
            wall = time.perf_counter() - wall0
            print(f"idle {wall:.0f}s: CPU {100 * cpu / wall:.3f} % ({cpu:.2f}s), RSS max {max(rss):.1f} MB (targets < 0.1 %, < 80 MB)")
            print("  CPU seconds per 10 s window:", " ".join(f"{w:.2f}" for w in windows))

            from tests.capture.helpers import add_message, max_time

            sessions = sorted((home / "config" / "opencode" / "memory" / "sessions").glob("*pnpm-lw0000*.md"))
            capture_ms = []
            for n in range(args.rounds):
                note = sessions[n]
                sid = frontmatter.load(note)["session_id"]
                marker = f"benchmark edit {n} {time.time()}"
                at = max(max_time(db), int(time.time() * 1000)) + 1
                t = time.perf_counter()
                add_message(db, sid, f"msg_zzzzbench{n:03d}", "user", [(f"prt_zzzzbench{n:03d}", {"type": "text", "text": marker})], at)
                wait_for(lambda: marker in note.read_text())
                capture_ms.append(1000 * (time.perf_counter() - t))
            print(
                f"committed session -> note on disk: median {statistics.median(capture_ms):.0f} ms, "
                f"max {max(capture_ms):.0f} ms over {len(capture_ms)} (target < 1000 ms)"
            )

            compile_ms = []
            lessons = home / "config" / "opencode" / "memory" / "lesson"
            lessons.mkdir(exist_ok=True)
            index = lessons / "index.md"
            for n in range(args.rounds):
                title = f"Benchmark lesson {n} {time.time()}"
                t = time.perf_counter()
                (lessons / f"bench-{n}.md").write_text(f"---\ntitle: {title}\nkind: lesson\n---\nbody {n}\n")
                wait_for(lambda: index.exists() and title in index.read_text())
                compile_ms.append(1000 * (time.perf_counter() - t))
                time.sleep(0.3)
            print(
                f"Markdown edit -> index.md recompiled: median {statistics.median(compile_ms):.0f} ms, "
                f"max {max(compile_ms):.0f} ms over {len(compile_ms)} (target < 300 ms)"
            )
        finally:
            daemon.terminate()
            daemon.wait(30)
            sock.close()


if __name__ == "__main__":
    main()
