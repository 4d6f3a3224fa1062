"""Expiry: move expired memories out of the live trees, purge old ones, clean an opencode-memory store.

A memory whose `expires` has passed moves to `<root>/.expired/<category>/` (hidden, so
neither compiled nor indexed) and its tree is recompiled; one there whose `expires` is
still to come (moved while the clock was ahead) moves back. Files that have sat in
`.expired/` longer than `sweep.keep_expired_days` are deleted, once later sweeps over a
real day agree (`daemon.memory.deletions`: a clock set ahead deletes nothing). When an opencode-memory
store exists, its expired rows go too, in one transaction; its own triggers keep its
FTS table in step.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from daemon.files import ensure_dir
from daemon.memory.compile import compile_root
from daemon.memory.deletions import DeletionLedger
from daemon.memory.index import SearchIndex
from daemon.memory.frontmatter import MemoryFileError
from daemon.memory.roots import MemoryRoot, is_memory_name
from daemon.memory.tree import Memory, Problem, read_memory

log = logging.getLogger("memoryd.memory.sweep")


@dataclass
class SweepReport:
    """What a sweep moved, purged, deleted from the store, recompiled, and could not do."""

    moved: list[tuple[Path, Path]] = field(default_factory=list)
    restored: list[tuple[Path, Path]] = field(default_factory=list)  # out of .expired/: not expired after all
    purged: list[Path] = field(default_factory=list)
    waiting: list[Path] = field(default_factory=list)  # due by the wall clock, kept until sweeps over a real day agree
    store_deleted: int = 0
    store: Path | None = None  # the opencode-memory store swept, if one exists
    compiled: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


# --- plans (pure) ---------------------------------------------------------------------


def plan_expired(memories: Iterable[Memory], now: datetime) -> list[Memory]:
    """Return the memories whose `expires` is at or before `now`, oldest expiry first."""
    return sorted((m for m in memories if m.is_expired(now)), key=lambda m: (m.expires, str(m.path)))


def expired_destination(memory: Memory, taken: set[Path] | None = None) -> Path:
    """Return a free path for a memory in `<root>/.expired/<category>/`."""
    folder = memory.root.expired_dir / memory.category
    candidate, n = folder / memory.filename, 2
    taken = taken or set()
    while candidate in taken or candidate.exists() or candidate.is_symlink():
        candidate, n = folder / f"{memory.path.stem}-{n}{memory.path.suffix}", n + 1
    return candidate


def plan_purge(root: MemoryRoot, now: datetime, keep_days: int) -> list[Path]:
    """Return files in `<root>/.expired/` moved there more than `keep_days` ago."""
    cutoff = (now - timedelta(days=keep_days)).timestamp()
    doomed: list[Path] = []
    for folder in _expired_folders(root):
        with os.scandir(folder) as files:
            for entry in files:
                # lstat: a symlink is judged (and removed) as itself, never followed.
                if entry.stat(follow_symlinks=False).st_mtime < cutoff and not entry.is_dir(follow_symlinks=False):
                    doomed.append(Path(entry.path))
    return sorted(doomed)


def plan_restore(root: MemoryRoot, now: datetime) -> list[tuple[Path, Path]]:
    """Files in `<root>/.expired/` whose `expires` is after `now`, with their way back: moved
    while the clock was ahead (or given a later date since). Never over another file."""
    back: list[tuple[Path, Path]] = []
    for folder in _expired_folders(root):
        with os.scandir(folder) as files:
            names = [e.name for e in files if is_memory_name(e.name) and e.is_file(follow_symlinks=False)]
        for name in sorted(names):
            try:
                memory, _ = read_memory(folder / name, root)
            except (MemoryFileError, OSError):
                continue  # unreadable or broken: it stays where it is
            target = root.path / folder.name / name
            if memory.expires is not None and memory.expires > now and not (target.exists() or target.is_symlink()):
                back.append((folder / name, target))
    return back


def _expired_folders(root: MemoryRoot) -> list[Path]:
    try:
        with os.scandir(root.expired_dir) as listing:
            return [Path(e.path) for e in listing if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


# --- actions --------------------------------------------------------------------------


def _move_expired(root: MemoryRoot, expired: Sequence[Memory], now: datetime, report: SweepReport) -> list[Path]:
    moved: list[Path] = []
    taken: set[Path] = set()
    stamp = now.timestamp()
    for memory in expired:
        target = expired_destination(memory, taken)
        taken.add(target)
        try:
            ensure_dir(target.parent)
            os.replace(memory.path, target)
            # The purge clock starts now: mtime records when the file was moved.
            os.utime(target, (stamp, stamp), follow_symlinks=False)
        except FileNotFoundError:
            continue  # already gone: nothing to move
        except OSError as exc:
            report.problems.append(Problem(memory.path, f"could not move to {target}: {exc.strerror or exc}"))
            continue
        report.moved.append((memory.path, target))
        moved.append(memory.path)
        log.info("sweep.expired", extra={"title": memory.title, "path": str(memory.path), "moved_to": str(target)})
    return moved


def _restore(root: MemoryRoot, now: datetime, report: SweepReport) -> set[str]:
    """Move back what is no longer expired; return the categories it went back to."""
    categories: set[str] = set()
    for source, target in plan_restore(root, now):
        try:
            os.replace(source, target)
        except OSError as exc:
            report.problems.append(Problem(source, f"could not move back to {target}: {exc.strerror or exc}"))
            continue
        report.restored.append((source, target))
        categories.add(target.parent.name)
        log.info("sweep.restored", extra={"path": str(target), "from": str(source)})
    return categories


def _purge(root: MemoryRoot, now: datetime, keep_days: int, report: SweepReport, ledger: DeletionLedger) -> None:
    due = {str(path.relative_to(root.expired_dir)): path for path in plan_purge(root, now, keep_days)}
    allowed = ledger.may_delete(root.key, due)
    report.waiting.extend(path for name, path in sorted(due.items()) if name not in allowed)
    for path in sorted(due[name] for name in allowed):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            report.problems.append(Problem(path, f"could not delete: {exc.strerror or exc}"))
            continue
        report.purged.append(path)
        ledger.deleted(root.key, [str(path.relative_to(root.expired_dir))])
        log.info("sweep.purged", extra={"path": str(path), "keep_expired_days": keep_days})
    for folder in _expired_folders(root):
        with os.scandir(folder) as listing:
            empty = next(listing, None) is None
        if empty:
            folder.rmdir()


class StoreError(Exception):
    """An opencode-memory store that cannot be swept; the message says why."""


def sweep_opencode_memory(db_path: Path, now: datetime, busy_timeout_ms: int = 5000) -> int:
    """Delete the expired rows of an opencode-memory store in one transaction; return how many."""
    try:
        db = sqlite3.connect(db_path, timeout=busy_timeout_ms / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {db_path}: {exc}") from exc
    try:
        columns = {row[1] for row in db.execute("PRAGMA table_info(entries)")}
        if "expires_at" not in columns:
            raise StoreError(
                f"{db_path} has no table entries with a column expires_at: not an opencode-memory "
                "store? Point sweep.opencode_memory_db at the right file"
            )
        now_ms = int(now.timestamp() * 1000)
        db.execute("BEGIN IMMEDIATE")
        try:
            # expires_at is epoch milliseconds; the store itself treats "<= now" as expired.
            count = db.execute(
                "DELETE FROM entries WHERE expires_at IS NOT NULL AND expires_at <= ?", (now_ms,)
            ).rowcount
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return count
    except sqlite3.Error as exc:
        raise StoreError(f"cannot sweep {db_path}: {exc}") from exc
    finally:
        db.close()


def sweep(
    roots: Iterable[MemoryRoot],
    now: datetime,
    keep_expired_days: int,
    opencode_memory_db: Path | None,
    *,
    index: SearchIndex,
    ledger: DeletionLedger | None = None,
) -> SweepReport:
    """Move expired memories out, purge old expired files, sweep the opencode-memory store.

    Expiry dates come from the search index (synced first, no full parse of the trees)
    and moved files leave it at once. One root's failure does not stop the others.
    `ledger`: what earlier sweeps found due (default: the one beside the index).
    """
    report = SweepReport()
    ledger = ledger or DeletionLedger.in_state(index.db_path.parent)
    for root in roots:
        if not root.exists():
            continue
        if root.expired_dir.is_symlink():
            # Moving into a link could carry memories out of the tree: refuse.
            report.problems.append(Problem(root.expired_dir, "is a symlink: replace it with a folder to sweep"))
            continue
        try:
            restored = _restore(root, now, report)
            index.sync_root(root)
            moved = _move_expired(root, plan_expired(index.expired(root, now), now), now, report)
            for path in moved:
                index.remove_file(path)
            moved_from = {path.parent.name for path in moved} | restored
            report.compiled.extend(compile_root(root, index, categories=moved_from))
            _purge(root, now, keep_expired_days, report, ledger)
        except OSError as exc:
            report.problems.append(Problem(root.path, f"sweep failed: {exc.strerror or exc}"))
    ledger.save()
    if opencode_memory_db is not None and opencode_memory_db.exists():
        report.store = opencode_memory_db
        try:
            report.store_deleted = sweep_opencode_memory(opencode_memory_db, now)
            log.info("sweep.store", extra={"store": str(opencode_memory_db), "deleted": report.store_deleted})
        except StoreError as exc:
            report.problems.append(Problem(opencode_memory_db, str(exc)))
    for problem in report.problems:
        log.warning("sweep.problem", extra={"path": str(problem.path), "reason": problem.reason})
    return report
