"""Transcripts (the scrubbed model inputs in the state folder): how long they are kept, and
the current secret rules applied again to the ones kept.

A transcript is only needed while its session may be distilled again and to show what a
model was given (`memoryd distill --dry-run`, skipped sessions). `capture.transcript_days`
bounds how long anything a rule missed stays on disk; 0 keeps none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from daemon.files import atomic_write_text
from daemon.memory.deletions import DeletionLedger
from daemon.scrub import redact

DAY_S = 86400
TRANSCRIPTS = "transcripts"  # their kind in the deletion ledger


def expired(entries: Iterable[tuple[Path, float]], days: int, now_s: float) -> list[Path]:
    """The transcripts (path, modified time) older than `days` at `now_s`; all of them at 0."""
    if days <= 0:
        return [path for path, _ in entries]
    cutoff = now_s - days * DAY_S
    return [path for path, mtime in entries if mtime < cutoff]


def _transcripts(folder: Path) -> list[tuple[Path, float]]:
    if not folder.is_dir():
        return []
    return [(p, p.stat().st_mtime) for p in sorted(folder.glob("*.md")) if p.is_file()]


def prune_transcripts(
    folder: Path, days: int, now_s: float, dry_run: bool = False, ledger: DeletionLedger | None = None,
    *, wait: bool = True,
) -> list[Path]:
    """Delete the transcripts past their retention; return them.

    Past it by the wall clock is not enough: later sweeps over a real day must agree
    (`ledger`, by default the state folder's), so a clock set ahead deletes none. With
    `days` 0 (keep none), or `wait` False (`memoryd scrub`, asked for now), they go at once.
    """
    gone = expired(_transcripts(folder), days, now_s)
    if dry_run:
        return gone
    if days > 0 and wait:
        ledger = ledger or DeletionLedger.in_state(folder.parent)
        allowed = ledger.may_delete(TRANSCRIPTS, (path.name for path in gone))
        gone = [path for path in gone if path.name in allowed]
        ledger.deleted(TRANSCRIPTS, allowed)
        ledger.save()
    for path in gone:
        path.unlink(missing_ok=True)
    return gone


@dataclass
class TranscriptScrub:
    rewritten: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)


def rescrub_transcripts(folder: Path, days: int, now_s: float, dry_run: bool = False, on_file=None) -> TranscriptScrub:  # noqa: ANN001
    """Drop the expired transcripts, then redact what the current rules find in the rest."""
    report = TranscriptScrub(deleted=prune_transcripts(folder, days, now_s, dry_run, wait=False))
    gone = set(report.deleted)
    for path, _ in _transcripts(folder):
        if path in gone:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        clean = redact(text)
        if clean != text:
            report.rewritten.append(path)
            if not dry_run:
                atomic_write_text(path, clean, durable=False)
        if on_file is not None:
            on_file(path)
    return report


def count_transcripts(folder: Path) -> int:
    return len(_transcripts(folder))
