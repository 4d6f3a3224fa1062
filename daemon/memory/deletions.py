"""Permanent deletion that no wall-clock jump can bring forward.

A file past its retention by the wall clock (an expired memory kept in `.expired/` for
`sweep.keep_expired_days`, a transcript past `capture.transcript_days`) is deleted only
once it has been found due by DUE_SWEEPS sweeps spanning DUE_REAL_S of real time: the
machine's clock since boot (CLOCK_BOOTTIME, suspend included), which setting the date does
not move. A clock set 30 days ahead makes files look due at once; they are kept until the
clock has been wrong for a real day (and, set right again, they are no longer due).
Across a reboot no real time is counted: a deletion then waits longer, never less.

The ledger lives in the state folder; losing it only makes deletions wait again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from daemon.files import write_if_changed

LEDGER_FILE = "deletions.json"
DUE_SWEEPS = 2
DUE_REAL_S = 86_400.0
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def machine_clock() -> tuple[str, float]:
    """(this boot's id, seconds since it): the clock no date change moves."""
    try:
        boot = BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        boot = ""  # no boot id (not Linux): a restart of the daemon counts as a reboot
    if hasattr(time, "CLOCK_BOOTTIME"):
        return boot, time.clock_gettime(time.CLOCK_BOOTTIME)
    return boot or f"process-{id(time)}", time.monotonic()


class DeletionLedger:
    """Per kind of file (a tree's `.expired/`, the transcripts), the files found due, for
    how many sweeps and how much real time. Each kind keeps its own clock: two ledgers
    over one file (the sweep's, the transcripts') count each sweep once."""

    def __init__(self, path: Path, clock: Callable[[], tuple[str, float]] = machine_clock) -> None:
        self.path = path
        self._clock = clock
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        self._kinds: dict[str, dict] = data if isinstance(data, dict) else {}

    @classmethod
    def in_state(cls, state_dir: Path, clock: Callable[[], tuple[str, float]] = machine_clock) -> DeletionLedger:
        return cls(state_dir / LEDGER_FILE, clock)

    def may_delete(self, kind: str, due: Iterable[str]) -> set[str]:
        """A sweep found these files of `kind` due by the wall clock: those due for
        DUE_SWEEPS sweeps and DUE_REAL_S of real time may go. A file no longer due (the
        clock was set right, the file went) starts again."""
        boot, up = self._clock()
        ledger = self._kinds.setdefault(kind, {})
        same_boot = ledger.get("boot") == boot and isinstance(ledger.get("up"), (int, float))
        elapsed = max(0.0, up - ledger["up"]) if same_boot else 0.0  # none across a reboot
        ledger.update(boot=boot, up=up)
        before = ledger.get("files") if isinstance(ledger.get("files"), dict) else {}
        files = {}
        for name in set(due):
            sweeps, real = before.get(name, (0, -elapsed))  # found due by this sweep: no time yet
            files[name] = [sweeps + 1, real + elapsed]
        ledger["files"] = files
        return {name for name, (sweeps, real) in files.items() if sweeps >= DUE_SWEEPS and real >= DUE_REAL_S}

    def deleted(self, kind: str, names: Iterable[str]) -> None:
        files = self._kinds.get(kind, {}).get("files", {})
        for name in names:
            files.pop(name, None)

    def save(self) -> None:
        write_if_changed(self.path, json.dumps(self._kinds, sort_keys=True), durable=False)
