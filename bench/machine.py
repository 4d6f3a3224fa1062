"""How fast this machine is right now: a line each benchmark prints beside its figures.

Absolute figures move with the machine, not only with the code: on this project's VMs the
same commit has measured 1.5-2.5 times apart on different days (the 1.x raw read at 5,800
and at 14,300 sessions/s), and a VM's CPU steal inflates any run it overlaps. Two runs'
figures compare only when their machine lines do.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.commandenv import command_env

_STAT = Path("/proc/stat")


def reference_ms(rounds: int = 5) -> float:
    """CPU ms of a fixed pure-Python workload (integer loop, dicts, JSON), the fastest of `rounds`."""
    record = {"id": "ses_0001", "parts": [{"type": "text", "text": "deploy with pnpm " * 20}] * 8}
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        total = sum(i * i for i in range(500_000))
        for _ in range(800):
            total += len(json.loads(json.dumps(record))["parts"])
        best = min(best, time.process_time() - start)
    return 1000 * best


def startup_ms(runs: int = 10) -> float:
    """Median wall ms of `python -c pass`: interpreter start, what every command pays."""
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=command_env(), check=True)
        walls.append(1000 * (time.perf_counter() - start))
    return statistics.median(walls)


def _jiffies() -> tuple[int, int] | None:
    """(steal, total) CPU jiffies since boot; None where /proc/stat is missing (macOS)."""
    try:
        fields = [int(x) for x in _STAT.read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return None
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


class Steal:
    """The share of CPU time the hypervisor took from this VM since the last `share()` call."""

    def __init__(self) -> None:
        self._last = _jiffies()

    def share(self) -> str:
        now, last = _jiffies(), self._last
        self._last = now
        if now is None or last is None or now[1] == last[1]:
            return "n/a"
        return f"{100 * (now[0] - last[0]) / (now[1] - last[1]):.1f} %"


def machine_line() -> str:
    """This machine's speed now, for the head of a benchmark's output."""
    return f"machine: pure-Python reference {reference_ms():.0f} ms CPU, `python -c pass` {startup_ms():.0f} ms"
