"""The work the daemon does, one method per kind; all of it runs on the worker thread.

Each method is the same code path the CLI uses (`memoryd distill`, `compile`, `sweep`),
plus the cheap checks that let an idle daemon do almost nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.config import Config
from daemon.logs import get_logger
from daemon.service.sourcehealth import FileIdentity, SourceHealth, file_identity, went_back
from daemon.state import WriteFence
from daemon.timefmt import iso

if TYPE_CHECKING:
    from daemon.memory.roots import MemoryRoot


@dataclass(frozen=True)
class CaptureResult:
    recheck_in: float | None  # seconds until a settling session is quiet, a retry due or a hold over
    new_roots: bool  # a session ran in a project memoryd did not know yet


class Jobs:
    """Capture, tree refresh and sweep for `memoryd run`."""

    def __init__(self, config: Config, fence: WriteFence | None = None, clock: Callable[[], float] = time.time) -> None:
        from daemon.capture.lifecycle import SettleWatch
        from daemon.capture.treewrite import OwnWrites
        from daemon.state import StateDB

        self.config = config
        self.settings, self.paths = config.settings, config.paths
        self.clock = clock
        self.log = get_logger("memoryd.jobs")
        # The daemon's (one per generation, shared with its sink thread); closed by
        # request_stop() too: after it, no connection of this daemon writes state.
        self.fence = fence or WriteFence()
        self.state, rebuilt = StateDB.open_or_rebuild(self.paths.state_db, self.fence)
        if rebuilt:
            self.log.warning("state.rebuilt", detail=rebuilt)
        self.index = self._open_index()
        self._capture = None
        self._data_version: int | None = None
        self._replaced = threading.Event()
        self._stop = threading.Event()
        self._source = SourceHealth()  # failures: reported once, retried with backoff
        self._settle = SettleWatch()  # settling sessions by our own clock (rows' times can be a clock jump off)
        self._opened_identity: FileIdentity | None = None
        self._opened_stores: tuple[str, ...] = ()
        self._full_next = False  # the source was replaced: the next pass compares every session
        self._project_dirs = self._known_project_dirs()
        self._roots: dict[Path, MemoryRoot] = {}
        self._refused: set[Path] = set()  # `.memory` links out of their project, warned of
        # What the capture pass wrote into the trees: the watcher's echo of it is no work.
        self.own_writes = OwnWrites()
        # Called after each session a pass finishes: the daemon's watchdog sees a long pass
        # that makes progress as alive.
        self.on_progress: Callable[[], None] = lambda: None

    def _open_index(self):  # noqa: ANN202 - SearchIndex, imported lazily
        """Open index.db; a corrupt or foreign one is moved aside and rebuilt from the trees.

        The search index is derived data: losing it costs one re-index (the reconcile
        after start refreshes every tree), never a memory.
        """
        from daemon.memory.index import SearchIndexError, open_index
        from daemon.state import move_aside

        try:
            return open_index(self.config)
        except SearchIndexError as exc:
            aside = move_aside(self.paths.index_db)
            cause = exc.__cause__ or exc
            note = (
                f"search index {self.paths.index_db} was unusable ({cause}); "
                f"moved to {aside.name}, rebuilt from the memory files"
            )
            self.log.warning("index.rebuilt", detail=note)
            self.state.set_meta("index_rebuilt", f"{iso(int(self.clock() * 1000))} {note}")
            return open_index(self.config)

    # -- capture -----------------------------------------------------------------------

    def _open_capture(self):  # noqa: ANN202 - Capturer, imported lazily
        from daemon.capture.pipeline import open_capturer
        from daemon.config import ConfigError
        from daemon.opencode.reader import SourceError

        # OpenCode's database deleted or replaced (the watcher says so, or, where events
        # are missed, its inode changed), or rewritten in place (`cp older.db`: its size,
        # mtime or header moved without a commit we saw): a connection opened before
        # would read a file nobody writes any more, or stale pages.
        from daemon.capture.sources import present

        now = file_identity(self.paths.opencode_db)
        # Another agent's store appeared (or went): the sources are opened again to include it.
        stores = present(self.config)
        replaced = self._replaced.is_set() or now != self._opened_identity or stores != self._opened_stores
        if replaced and self._capture is not None:
            self._replaced.clear()
            self._close_capture()
            self.log.debug("source.reopened", db=str(self.paths.opencode_db))
        if self._capture is None:
            # Checked on every reopen, also after a failed one: a copy caught half written
            # fails to open first, and the older file it ends as must still be compared whole.
            back = went_back(self._opened_identity, now) if self._opened_identity else None
            if back and now is not None and now.inode == self._opened_identity.inode and not self._full_next:
                self._full_next = True  # rows it holds may be older than what a pass looks at
                self.log.info("source.replaced", db=str(self.paths.opencode_db), reason=back,
                              hint="comparing every session once")
            try:
                self._capture = open_capturer(self.config, self.clock, fence=self.fence, own_writes=self.own_writes)
            except (SourceError, ConfigError) as exc:
                self._source_failed(str(exc))
                return None
            self._opened_identity, self._opened_stores = now, stores
            self._capture.should_stop = self._stop.is_set
            self._data_version = None
            # Another file than the one the watermark was taken on (an older copy put
            # back, a restore): rows older than the watermark may be new to us.
            identity = ":".join(map(str, self._opened_identity.inode if self._opened_identity else ()))
            if identity != self.state.get_meta("source_identity", identity):
                self._full_next = True
                self.log.info("source.replaced", db=str(self.paths.opencode_db), hint="comparing every session once")
            self.state.set_meta("source_identity", identity)
        return self._capture

    def _source_failed(self, error: str) -> None:
        """Say once (per distinct error) that the source cannot be used, for the log and
        `memoryd status`; the daemon goes on and tries again after a backoff."""
        now = self.clock()
        if self._source.failed(error, now, file_identity(self.paths.opencode_db)):
            self.log.warning("source.unavailable", error=error, retry_in_s=round(self._source.retry_at - now, 1))
            self.state.set_meta("source_error", f"{iso(int(now * 1000))} {error}")
        else:
            self.log.debug("source.still_unavailable", error=error, failures=self._source.failures)

    def _retry_result(self) -> CaptureResult:
        """The source failed: look again once its backoff is over (no file event needed)."""
        return CaptureResult(max(0.05, self._source.retry_at - self.clock()), False)

    def _source_recovered(self) -> None:
        if self._source.recovered():
            self.log.info("source.recovered", db=str(self.paths.opencode_db))  # the pass cleared source_error

    def capture(self, full: bool = False, idle: frozenset[str] = frozenset()) -> CaptureResult | None:
        """Run a capture pass if anything can have changed; None when there is no source.

        `idle`: sessions OpenCode said went idle; they are distilled without settling.
        """
        import sqlite3

        from daemon.capture.pipeline import PassOptions
        from daemon.diskfull import raise_if_disk_full
        from daemon.opencode.reader import unreadable

        wait = self._source.wait(self.clock(), file_identity(self.paths.opencode_db))
        if wait is not None:  # the source failed lately and is the same file: not yet
            return CaptureResult(wait, False)
        capture = self._open_capture()
        if capture is None:
            return self._retry_result()
        now_ms = int(self.clock() * 1000)
        settle_s = self.settings.capture.settle_seconds
        idle = idle | self._settle.quiet(settle_s, time.monotonic())  # quiet by our clock, whatever the rows say
        try:
            if not self._may_have_work(capture, now_ms) and not (full or self._full_next or idle):
                return CaptureResult(self._recheck_in(now_ms, None), False)  # nothing committed since the last pass
            report = capture.run_pass(PassOptions(full_scan=full or self._full_next, patient=True, idle=idle),
                                      progress=lambda done, total, title: self.on_progress())
            settling = capture.reader.sessions(report.settling) if report.settling else []
            self._settle.saw(((s.id, s.time_updated) for s in settling), time.monotonic())
        except sqlite3.DatabaseError as exc:  # the source broke under us (truncated, replaced by garbage)
            self._close_capture()
            raise_if_disk_full(exc, self.paths.state_dir)  # or memoryd's own files are full
            self._source_failed(str(unreadable(self.paths.opencode_db, exc)))
            return self._retry_result()
        except Exception:
            if self._stop.is_set():  # the stop cut the pass short (its writes are fenced off)
                return None
            raise
        self._source_recovered()
        self._full_next = self._full_next and report.interrupted
        for root in report.roots:  # the notes are indexed and compiled now, not on their echo
            # The pass indexed its notes from memory: only what it could not is read again.
            written = report.written.get(root.path)
            self._refresh(root, set(written.unindexed) if written else None, written.indexed if written else None)
        dirs = self._known_project_dirs()
        new_roots = bool(dirs - self._project_dirs)
        self._project_dirs = dirs
        recheck = self._recheck_in(now_ms, report.next_settled_ms if report.settling else None)
        if report.settling and settle_s:  # quiet by our own clock then at the latest
            recheck = min(settle_s + 0.05, settle_s if recheck is None else recheck)
        return CaptureResult(recheck, new_roots)

    def _may_have_work(self, capture, now_ms: int) -> bool:  # noqa: ANN001
        """OpenCode committed since the last pass, or a session waits on a time that has come."""
        from daemon.capture import lifecycle

        holding = lifecycle.hold_in_force(self.state, now_ms) is not None
        version = capture.reader.data_version()
        changed = version != self._data_version
        self._data_version = version
        return changed or bool(lifecycle.ids_to_revisit(self.state, upgrades=False, held=not holding, now_ms=now_ms))

    def _recheck_in(self, now_ms: int, settled_ms: int | None) -> float | None:
        """Seconds until the next time-driven pass: a session quiet, a retry due, a hold over."""
        from daemon.capture import lifecycle

        due: list[tuple[int, float]] = []
        if settled_ms is not None:
            due.append((settled_ms, 0.05))
        # Only retries still to come: one already due was looked at by this pass (or its
        # session is gone from OpenCode), and must not make the daemon spin.
        retry, hold_ends = lifecycle.next_due_ms(self.state, now_ms)
        due += [(at, 1.0) for at in (retry, hold_ends) if at is not None]
        if not due:
            return None
        return min(max(floor, (at - now_ms) / 1000) for at, floor in due)

    def source_replaced(self) -> None:
        """Called from the observer thread: reopen the database before the next pass."""
        self._replaced.set()

    def _known_project_dirs(self) -> set[str]:
        return self.state.project_dirs() if self.settings.memory.discover_projects else set()

    # -- trees ------------------------------------------------------------------------

    def roots(self) -> list:
        """Every memory tree that exists: global, configured, and the sessions' projects."""
        from daemon.memory.roots import known_roots, refused_roots

        roots = known_roots(self.config, self.state)
        self._roots = {root.path: root for root in roots}
        refused = {root.path: root for root in refused_roots(self.config, self.state)}
        for path in refused.keys() - self._refused:  # said once per link (again if it comes back)
            self.log.warning("tree.refused", root=str(path), target=str(refused[path].outside),
                             hint=refused[path].warning())
        self._refused = set(refused)
        return roots

    def refresh_tree(self, root_path: Path) -> None:
        """Bring a tree's search entries up to date, then recompile what they touched."""
        # Roots found by the last discovery: an event does not walk every project up to .git.
        from daemon.service.events import PENDING

        paths = PENDING.take(root_path)  # the files its events named: only those are read again
        root = self._roots.get(root_path) or next((r for r in self.roots() if r.path == root_path), None)
        if root is not None:
            self._refresh(root, paths)

    def _refresh(self, root: MemoryRoot, paths: set[Path] | None = None, synced=None) -> None:  # noqa: ANN001
        """Re-index `paths` (None: sync the whole tree) with what `synced` says a writer
        indexed already (a SyncReport), then recompile what changed."""
        from daemon.memory.refresh import refresh_paths, refresh_tree

        if not root.exists() or self._stop.is_set():  # stopping: nothing more is written
            return
        if paths is None:
            done = refresh_tree(self.index, root, synced=synced)
        else:
            done = refresh_paths(self.index, root, paths, synced)
        self.log.debug("tree.pass", root=str(root.path), index_changes=done.changed, written=len(done.written))
        if done.written or done.changed:
            self.log.info(
                "tree.refreshed", root=str(root.path), written=[str(p) for p in done.written], index_changes=done.changed
            )

    # -- sweep -----------------------------------------------------------------------

    def sweep(self) -> None:
        from daemon.memory.sweep import sweep

        if self._stop.is_set():  # stopping: nothing more is written
            return
        now = datetime.fromtimestamp(self.clock(), UTC)
        report = sweep(
            self.roots(),
            now,
            self.settings.sweep.keep_expired_days,
            self.paths.opencode_memory_db,
            index=self.index,
        )
        from daemon.capture.retention import prune_transcripts

        old = prune_transcripts(self.paths.transcripts_dir, self.settings.capture.transcript_days, self.clock())
        self.state.set_meta("last_sweep", iso(int(self.clock() * 1000)))
        self.log.info(
            "sweep.done",
            transcripts_deleted=len(old),
            moved=len(report.moved),
            purged=len(report.purged),
            purge_waiting=len(report.waiting),
            store_deleted=report.store_deleted,
            problems=len(report.problems),
        )

    # -- status and shutdown ---------------------------------------------------------

    def status_line(self) -> str:
        from daemon.capture import lifecycle

        counts = lifecycle.session_counts(self.state)
        waiting = sum(counts[s] for s in lifecycle.WAITING)
        line = (
            f"{counts['distilled']} notes, {waiting} waiting, {counts['failed']} failed, "
            f"{len(self._project_dirs)} projects"
        )
        if self._source.error:
            if not self.paths.opencode_db.exists():
                return f"{line}; waiting for {self.paths.opencode_db}"
            return f"{line}; source unusable: {self._source.error}"
        hold = lifecycle.hold_in_force(self.state, int(self.clock() * 1000))
        if hold is not None:
            return f"{line}; model held ({hold.reason}) until {iso(hold.until_ms)}"
        return line

    def request_stop(self) -> None:
        """Stop all work: the pass after the session it is on, requests in flight now, and
        every state write from here on (nothing is written once the daemon says `stopped`)."""
        self._stop.set()
        self.fence.close()
        if self._capture is not None:
            self._capture.cancel()

    def _close_capture(self) -> None:
        if self._capture is not None:
            self._capture.close()
            self._capture = None

    def close(self) -> None:
        self._close_capture()
        self.index.close()
        self.state.close()
