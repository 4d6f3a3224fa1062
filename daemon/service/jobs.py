"""The work the daemon does, one method per kind; all of it runs on the worker thread.

Each method is the same code path the CLI uses (`memoryd distill`, `compile`, `sweep`),
plus the cheap checks that let an idle daemon do almost nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from daemon.config import Paths, Settings
from daemon.logs import get_logger
from daemon.timefmt import iso

MODEL_RETRY_S = 300.0  # how long a stop other than the budget keeps the model alone


@dataclass(frozen=True)
class CaptureResult:
    recheck_in: float | None  # seconds until a settling session should be quiet
    new_roots: bool  # a session ran in a project memoryd did not know yet


class Jobs:
    """Capture, tree refresh and sweep for `memoryd run`."""

    def __init__(self, settings: Settings, paths: Paths, clock: Callable[[], float] = time.time) -> None:
        from daemon.memory.index import SearchIndex
        from daemon.state import StateDB

        self.settings = settings
        self.paths = paths
        self.clock = clock
        self.log = get_logger("memoryd.jobs")
        self.state = StateDB(paths.state_db)
        self.index = SearchIndex(paths.index_db, settings.source.busy_timeout_ms)
        self._capture = None
        self._data_version: int | None = None
        self._replaced = threading.Event()
        self._stop = threading.Event()
        self._source_error = ""
        self._opened_identity: tuple[int, int] | None = None
        self._hold_until = 0.0
        self._project_dirs = self._known_project_dirs()

    # -- capture -----------------------------------------------------------------------

    def _open_capture(self):  # noqa: ANN202 - Capture, imported lazily
        from daemon.capture.pipeline import open_capture
        from daemon.config import ConfigError
        from daemon.opencode.reader import SourceError

        # OpenCode's database deleted or replaced (the watcher says so, or, where events
        # are missed, its inode changed): a connection to the old inode would read a file
        # nobody writes any more.
        replaced = self._replaced.is_set() or self._source_identity() != self._opened_identity
        if replaced and self._capture is not None:
            self._replaced.clear()
            self._close_capture()
            self.log.info("source.reopened", db=str(self.paths.opencode_db))
        if self._capture is None:
            try:
                self._capture = open_capture(self.settings, self.paths, self.clock)
            except (SourceError, ConfigError) as exc:
                if str(exc) != self._source_error:
                    self.log.warning("source.unavailable", error=str(exc))
                self._source_error = str(exc)
                return None
            self._source_error = ""
            self._opened_identity = self._source_identity()
            self._capture.should_stop = self._stop.is_set
            self._data_version = None
        return self._capture

    def capture(self, full: bool = False, idle: frozenset[str] = frozenset()) -> CaptureResult | None:
        """Run a capture pass if anything can have changed; None when there is no source.

        `idle`: sessions OpenCode said went idle; they are distilled without settling.
        """
        capture = self._open_capture()
        if capture is None:
            return None
        now = self.clock()
        if capture.hold is not None and now >= self._hold_until:
            capture.hold = None  # the stop has lifted: retry what it left pending
            self.log.info("model.resumed")
        holding = capture.hold is not None
        version = capture.reader.data_version()
        quiet = not self.state.ids_to_revisit(upgrades=False, stopped=not holding)
        if not full and not idle and version == self._data_version and quiet:
            return CaptureResult(self._hold_remaining(now), False)  # nothing committed since the last pass
        self._data_version = version
        from daemon.capture.pipeline import PassOptions

        report = capture.run_pass(PassOptions(full_scan=full, idle=idle))
        if report.stop_reason and capture.hold is None:
            self._hold(capture, report.stop_reason, report.stop_message, now)
        recheck = self._hold_remaining(now)
        if report.settling:
            now_ms = int(now * 1000)
            due = report.next_settled_ms or now_ms + int(self.settings.capture.settle_seconds * 1000)
            settle = max(0.05, (due - now_ms) / 1000)
            recheck = settle if recheck is None else min(recheck, settle)
        dirs = self._known_project_dirs()
        new_roots = bool(dirs - self._project_dirs)
        self._project_dirs = dirs
        return CaptureResult(recheck, new_roots)

    def _hold(self, capture, reason: str, message: str, now: float) -> None:  # noqa: ANN001
        """After a stop, leave the model alone: till tomorrow for a spent budget, a few
        minutes otherwise (a server coming back, a key being fixed with a reload)."""
        from daemon.capture.distill.base import StopPass

        if reason == "budget":
            tomorrow = datetime.fromtimestamp(now).date() + timedelta(days=1)
            until = datetime.combine(tomorrow, datetime.min.time()).timestamp()
        else:
            until = now + MODEL_RETRY_S
        capture.hold = StopPass(message, reason)
        self._hold_until = until
        self.log.warning("model.held", reason=reason, until=iso(int(until * 1000)), error=message)

    def _hold_remaining(self, now: float) -> float | None:
        """Seconds until a hold lifts (the loop then runs a pass), or None."""
        if self._capture is None or self._capture.hold is None:
            return None
        return max(1.0, self._hold_until - now)

    def _source_identity(self) -> tuple[int, int] | None:
        try:
            st = self.paths.opencode_db.stat()
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def source_replaced(self) -> None:
        """Called from the observer thread: reopen the database before the next pass."""
        self._replaced.set()

    def _known_project_dirs(self) -> set[str]:
        return self.state.project_dirs() if self.settings.memory.discover_projects else set()

    # -- trees ------------------------------------------------------------------------

    def roots(self) -> list:
        """Every memory tree that exists: global, configured, and the sessions' projects."""
        from daemon.memory.tree import discover_roots

        return discover_roots(self.settings, self.paths, [Path(d) for d in sorted(self._project_dirs)])

    def refresh_tree(self, root_path: Path) -> None:
        """Bring a tree's search entries up to date, then recompile what they touched.

        Only the categories whose memories changed get their index.md rewritten; an
        event that changed no memory (index.md deleted, ROOT.md edited) recompiles all
        of the tree, from the index rather than the files.
        """
        from daemon.memory.compile import compile_root

        root = next((r for r in self.roots() if r.path == root_path), None)
        if root is None:
            return
        synced = self.index.sync_root_report(root)
        categories = synced.categories if synced.changed else None
        written = compile_root(root, index=self.index, categories=categories)
        if written or synced.changed:
            self.log.info(
                "tree.refreshed", root=str(root.path), written=[str(p) for p in written], index_changes=synced.changed
            )

    # -- sweep -----------------------------------------------------------------------

    def sweep(self) -> None:
        from daemon.memory.sweep import sweep

        now = datetime.fromtimestamp(self.clock(), UTC)
        report = sweep(
            self.roots(),
            now,
            self.settings.sweep.keep_expired_days,
            self.paths.opencode_memory_db,
            index=self.index,
        )
        self.state.set_meta("last_sweep", iso(int(self.clock() * 1000)))
        self.log.info(
            "sweep.done",
            moved=len(report.moved),
            purged=len(report.purged),
            store_deleted=report.store_deleted,
            problems=len(report.problems),
        )

    # -- status and shutdown ---------------------------------------------------------

    def status_line(self) -> str:
        counts = self.state.counts()
        line = (
            f"{counts['distilled']} notes, {counts['pending']} pending, {counts['failed']} failed, "
            f"{len(self._project_dirs)} projects"
        )
        return f"{line}; waiting for {self.paths.opencode_db}" if self._source_error else line

    def request_stop(self) -> None:
        """Ask a running pass to stop after the session it is on."""
        self._stop.set()

    def _close_capture(self) -> None:
        from daemon.capture.pipeline import close_capture

        if self._capture is not None:
            close_capture(self._capture)
            self._capture = None

    def close(self) -> None:
        self._close_capture()
        self.index.close()
        self.state.close()
