"""The daemon loop: watchers → debounced work queue → one worker; scheduled jobs; signals.

The loop only decides *when* work happens. The work itself (a capture pass, compiling
a tree, a sweep) is done by `daemon.service.jobs.Jobs`, the same code the CLI runs.
File-system events never do work on the observer thread: they mark a kind of work
as due, and the worker does it once the burst is over.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.config import Config, ConfigError, Paths, Settings, load_settings
from daemon.diskfull import DiskFull
from daemon.logs import get_logger
from daemon.service.events import DatabaseEvents, TreeEvents
from daemon.service.queue import WorkQueue
from daemon.state import StateFenced

# Kinds of work. A tree's work is keyed by its root path.
CAPTURE = "capture"
SETTLED = "settled"  # a capture pass when a settling session (or a retry, a hold) is due
RECONCILE = "reconcile"
SWEEP = "sweep"
ROOTS = "roots"  # re-discover memory roots (a new project tree may exist)
TREE = "tree:"  # + root path
TREE_DEBOUNCE_MS = 50
# A debounce window that OpenCode's steady writes keep open still closes this long after
# the burst began: a busy session never keeps another's note waiting.
MAX_DEBOUNCE_S = 1.0
EXIT_START_FAILED = 1


class WorkerStartError(Exception):
    """The worker could not open what it works with: the daemon does not half-start."""


@dataclass
class Health:
    """What the worker is doing, for the watchdog and for a shutdown that has to abandon it."""

    busy_since: float | None = None
    last_kind: str = ""


class Daemon:
    """`memoryd run`: everything that keeps memory up to date while the user works."""

    def __init__(
        self,
        config: Config,
        config_path: Path | None = None,
        notifier: Any = None,
        jobs_factory: Callable[[Config], Any] | None = None,
    ) -> None:
        from daemon.service.notify import Notifier

        self.config = config  # replaced as a whole on reload
        self.config_path = config_path
        self.notifier = notifier or Notifier()
        self.log = get_logger("memoryd.daemon")
        self.queue = WorkQueue()
        self._wake = threading.Event()  # the main thread's alarm clock: stop, reload, ping
        self.stop = _WakingEvent(self._wake)
        self.ready = threading.Event()  # READY=1 sent: watchers, socket and worker are up
        self.first_pass = threading.Event()  # the first reconcile (a full pass) is done
        self.health = Health()
        self._jobs_factory = jobs_factory or _default_jobs
        self.jobs: Any = None
        self._observer: Any = None
        self._watched: dict[str, Any] = {}  # path → watch handle
        self._scheduler: Any = None
        self._worker: threading.Thread | None = None
        self._jobs_ready = threading.Event()
        self._watch_lock = threading.Lock()  # the worker and the scheduler both add watches
        self._reload = threading.Event()
        self._idle: set[str] = set()  # sessions OpenCode said went idle, for the next pass
        self._idle_lock = threading.Lock()
        self._socket: Any = None
        self._start_error: BaseException | None = None
        # The worker outlived the stop timeout (a model call that would not end): the
        # process must end now, and the lock is kept until it does.
        self.abandoned = False
        self._sink: Any = None  # the sink thread, when a Cognee server is configured

    # -- lifecycle ---------------------------------------------------------------

    def run(self) -> int:
        """Run until SIGTERM/SIGINT; return the exit code. Call from the main thread."""
        from daemon.service.lock import AlreadyRunning, InstanceLock
        from daemon.service.signals import SignalHandlers

        try:
            lock = InstanceLock(self.paths.lock_file)
            lock.acquire()
        except AlreadyRunning as exc:
            self.log.error("daemon.already_running", pid=exc.pid, lock=str(self.paths.lock_file))
            raise
        try:
            with SignalHandlers(stop=self.stop, on_reload=self._request_reload):
                return self._serve()
        finally:
            # An abandoned worker may still be inside a model call: the lock stays held
            # until the process ends (the caller exits at once; the kernel drops the flock).
            if not self.abandoned:
                lock.release()

    def _serve(self) -> int:
        self.log.info("daemon.starting", pid=os.getpid(), db=str(self.paths.opencode_db))
        try:
            self._start()
            self._start_socket()
        except WorkerStartError as exc:
            self.log.error("daemon.start_failed", error=str(exc))
            self._shutdown()
            return EXIT_START_FAILED
        # READY=1 as soon as the daemon can serve: the watchers, the socket and the worker
        # are up. The first pass is queued behind it and may wait on a slow model for
        # minutes, longer than systemd waits for a start. Never after a stop was asked
        # for (systemd would read READY after STOPPING as a start).
        if not self.stop.is_set():
            self.ready.set()
            self.notifier.ready()
            self.log.info("daemon.ready", pid=os.getpid())
        code = 0
        try:
            # Sleep until a signal, or the next watchdog ping when systemd asks for them:
            # an idle daemon wakes up for nothing else (each wake-up costs CPU time).
            watchdog = self.notifier.watchdog_interval()
            while True:
                self._wake.wait(watchdog)
                self._wake.clear()
                if self.stop.is_set():
                    break
                if self._reload.is_set():
                    self._reload.clear()
                    try:
                        self._do_reload()
                    except WorkerStartError as exc:  # the new configuration cannot run
                        self.log.error("daemon.start_failed", error=str(exc))
                        code = EXIT_START_FAILED
                        break
                if watchdog and self._healthy():
                    self.notifier.watchdog()
            self.log.info("daemon.stopping")
            self.notifier.stopping()
        finally:
            self._shutdown()
        self.log.info("daemon.stopped")
        return code

    def _start(self) -> None:
        self._jobs_ready = threading.Event()
        self._start_error = None
        self._worker = threading.Thread(target=self._work, args=(self.queue,), name="memoryd-worker", daemon=True)
        self._worker.start()
        # The worker owns the jobs (and their SQLite connections); watchers start once
        # they exist, so no event arrives before there is anything to handle it.
        self._jobs_ready.wait()
        if self._start_error is not None:
            exc = self._start_error
            raise WorkerStartError(f"cannot start the worker: {type(exc).__name__}: {exc}") from exc
        try:
            self._start_watchers()
            self._start_scheduler()
        except OSError as exc:  # e.g. the inotify watch limit: no half-started daemon
            raise WorkerStartError(f"cannot watch for changes: {exc}") from exc
        self._start_sink()
        # The first reconcile: a full pass, right after READY=1.
        self.queue.mark(RECONCILE)

    def _shutdown(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self.queue.close()
        if self.jobs is not None:
            self.jobs.request_stop()
        self._stop_sink()
        self._stop_scheduler()
        self._stop_watchers()
        if self._worker is not None:
            self._worker.join(self.settings.service.shutdown_timeout_s)
            if self._worker.is_alive():
                # A model call that would not end: its writes are fenced off, the note is
                # never half-written (atomic writes), and the session is redone next start.
                self.abandoned = True
                self.log.warning("daemon.worker_abandoned", kind=self.health.last_kind)

    def _request_reload(self) -> None:
        self._reload.set()
        self._wake.set()

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def paths(self) -> Paths:
        return self.config.paths

    def _healthy(self) -> bool:
        """The worker is idle, or busy for less than a long model call could take."""
        busy = self.health.busy_since
        limit = max(600.0, self.settings.llm.timeout_s * (self.settings.llm.max_retries + 2))
        return self._worker is not None and self._worker.is_alive() and (busy is None or time.monotonic() - busy < limit)

    def _do_reload(self) -> None:
        self.notifier.reloading()
        try:
            settings, paths = load_settings(self.config_path)
        except ConfigError as exc:
            self.log.error("daemon.reload_failed", error=str(exc), hint="keeping the previous configuration")
            self.notifier.ready()
            return
        self.log.info("daemon.reloading")
        self.queue.close()
        if self.jobs is not None:
            self.jobs.request_stop()
        if self._worker is not None:
            self._worker.join(self.settings.service.shutdown_timeout_s)
            if self._worker.is_alive():
                self.log.warning("daemon.reload_overlap", kind=self.health.last_kind,
                                 hint="the busy worker finishes its item, then ends on its own")
        self._stop_scheduler()
        self._stop_watchers()
        moved = paths.socket_file != self.paths.socket_file
        self._stop_sink()
        self.config = Config(settings, paths)
        self.queue = WorkQueue()
        self._start()
        if moved:
            self._socket.close()
            self._start_socket()
        self.notifier.ready()
        self.log.info("daemon.reloaded")

    # -- the plugin's socket ---------------------------------------------------------

    def _start_socket(self) -> None:
        from daemon.service.context_server import ContextServer

        self._socket = ContextServer(lambda: self.config, self.session_idle)
        self._socket.start(self.paths.socket_file)

    def session_idle(self, session_id: str) -> None:
        """OpenCode says a session went idle: write its note now, not after settle_seconds."""
        with self._idle_lock:
            self._idle.add(session_id)
        self.log.info("session.idle", session_id=session_id)
        self.queue.mark(CAPTURE)

    def _take_idle(self) -> frozenset[str]:
        with self._idle_lock:
            idle, self._idle = frozenset(self._idle), set()
        return idle

    # -- the worker ---------------------------------------------------------------

    def _work(self, queue: WorkQueue) -> None:
        # Each worker owns its jobs and its queue. After a reload that had to leave a
        # busy worker behind, the old one finishes its item with its own jobs, closes
        # them and ends; it never touches the new worker's.
        try:
            jobs = self._jobs_factory(self.config)
        except BaseException as exc:  # noqa: BLE001 - handed to _start, which stops the daemon
            self._start_error = exc
            self._jobs_ready.set()
            return
        self.jobs = jobs
        self._jobs_ready.set()
        try:
            while True:
                kind = queue.take()
                if kind is None:
                    return
                self._run_one(kind, jobs, queue)
        finally:
            jobs.close()

    def _run_one(self, kind: str, jobs: Any, queue: WorkQueue) -> None:
        self.health.busy_since = time.monotonic()
        self.health.last_kind = kind
        try:
            self._do(kind, jobs, queue)
        except StateFenced:
            return  # stopping: the job was cut short, nothing more is written
        except DiskFull as exc:  # named, without a traceback; the next pass tries again
            self.log.error("daemon.disk_full", kind=kind, path=str(exc.path), error=str(exc))
        except Exception as exc:  # noqa: BLE001 - the loop must outlive any one job
            self.log.exception("daemon.job_failed", kind=kind, error=str(exc))
        finally:
            self.health.busy_since = None
        if self._sink is not None:
            self._sink.wake()  # notes or trees may have changed: the sink looks (on its own thread)
        if kind == RECONCILE and not self.first_pass.is_set():
            self.first_pass.set()
            self.log.info("daemon.first_pass_done", status=jobs.status_line())

    def _do(self, kind: str, jobs: Any, queue: WorkQueue) -> None:
        if kind in (CAPTURE, SETTLED, RECONCILE):
            result = jobs.capture(full=kind == RECONCILE, idle=self._take_idle())
            if result is not None:
                if result.recheck_in is not None:
                    # A session is settling: look again when it should have gone quiet,
                    # even if OpenCode writes nothing more. A kind of its own, that no
                    # database event can push back.
                    queue.mark(SETTLED, result.recheck_in)
                if result.new_roots:
                    queue.mark(ROOTS)
            if kind == RECONCILE:
                self._sync_root_watches()
                for root in jobs.roots():
                    queue.mark(TREE + str(root.path))
            self.notifier.status(jobs.status_line())
        elif kind == ROOTS:
            self._sync_root_watches()
        elif kind.startswith(TREE):
            jobs.refresh_tree(Path(kind[len(TREE) :]))
            if self._socket is not None:
                self._socket.warm()  # the next session start finds its block ready
        elif kind == SWEEP:
            jobs.sweep()
            self.notifier.status(jobs.status_line())

    # -- sink ------------------------------------------------------------------------

    def _start_sink(self) -> None:
        from daemon.sinks.run import enabled

        if enabled(self.settings):
            from daemon.service.sinkworker import SinkWorker

            self._sink = SinkWorker(self.config)
            self._sink.start()

    def _stop_sink(self) -> None:
        if self._sink is not None:
            self._sink.stop(self.settings.service.shutdown_timeout_s)
            self._sink = None

    # -- watchers ------------------------------------------------------------------

    def _start_watchers(self) -> None:
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        watch = self.settings.watch
        self._observer = PollingObserver(timeout=watch.poll_interval_s) if watch.poll else Observer()
        self._observer.name = "memoryd-observer"
        self._observer.daemon = True
        self._watched = {}
        self._watch_database()
        self._observer.start()

    def _stop_watchers(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)
            self._observer = None

    def _watch_database(self, warn: bool = True) -> None:
        folder = self.paths.opencode_db.parent
        with self._watch_lock:
            if folder.is_dir() and str(folder) not in self._watched:
                handler = DatabaseEvents(self.paths.opencode_db.name, self._on_database_event)
                self._watched[str(folder)] = self._observer.schedule(handler, str(folder), recursive=False)
                return
        if warn and not folder.is_dir():
            self.log.warning(
                "source.waiting", db=str(self.paths.opencode_db), hint="OpenCode has not created its database yet"
            )

    def _sync_root_watches(self) -> None:
        """Watch every memory root that exists now; stop watching ones that are gone."""
        if self._observer is None or self.jobs is None:
            return
        wanted = {str(root.path): root for root in self.jobs.roots() if root.path.is_dir()}
        db_folder = str(self.paths.opencode_db.parent)
        with self._watch_lock:
            for path in list(self._watched):
                if path != db_folder and path not in wanted:
                    self._observer.unschedule(self._watched.pop(path))
            for path in sorted(wanted.keys() - set(self._watched)):
                handler = TreeEvents(wanted[path], self._on_tree_event, self.jobs.own_writes.is_echo)
                self._watched[path] = self._observer.schedule(handler, path, recursive=True)
                self.queue.mark(TREE + path)
                self.log.info("tree.watching", root=path)

    def _on_database_event(self, replaced: bool) -> None:
        debounce = self.settings.watch.debounce_ms / 1000
        if replaced:
            self.jobs.source_replaced()
        self.queue.mark(CAPTURE, debounce, trailing=True, max_delay=MAX_DEBOUNCE_S)

    def _on_tree_event(self, root: Path) -> None:
        # Editors save in bursts of a few milliseconds (temp file, rename), not WAL-style
        # streams: a short window keeps an edit → index.md well under a third of a second.
        window = min(self.settings.watch.debounce_ms, TREE_DEBOUNCE_MS) / 1000
        self.queue.mark(TREE + str(root), window, trailing=True)

    # -- scheduler -------------------------------------------------------------------

    def _start_scheduler(self) -> None:
        from apscheduler.schedulers.background import BackgroundScheduler

        watch, sweep = self.settings.watch, self.settings.sweep
        scheduler = BackgroundScheduler(
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 60}, daemon=True
        )
        # Jobs only mark work as due: the one worker does it, so jobs never overlap.
        scheduler.add_job(self.queue.mark, "interval", args=[SWEEP], minutes=sweep.interval_minutes, id="sweep")
        scheduler.add_job(
            self.queue.mark, "interval", args=[RECONCILE], minutes=watch.reconcile_minutes, id="reconcile"
        )
        if watch.poll or not self.paths.opencode_db.parent.is_dir():
            # Polling mode, or a database folder that does not exist yet: a cheap check
            # (PRAGMA data_version, or the file appearing) every few seconds.
            scheduler.add_job(self._poll, "interval", seconds=watch.poll_interval_s, id="poll")
        scheduler.start()
        self._scheduler = scheduler
        self.queue.mark(SWEEP, 5.0)  # one sweep soon after start, then on schedule

    def _poll(self) -> None:
        if not self.paths.opencode_db.exists():
            return
        if self._observer is not None:
            self._watch_database(warn=False)  # the folder may have appeared since the start
        self.queue.mark(CAPTURE)

    def _stop_scheduler(self) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None


class _WakingEvent(threading.Event):
    """An Event whose set() also wakes the main loop (SIGTERM sets it from a handler)."""

    def __init__(self, wake: threading.Event) -> None:
        super().__init__()
        self._wake_also = wake

    def set(self) -> None:
        super().set()
        self._wake_also.set()


def _default_jobs(config: Config) -> Any:
    from daemon.service.jobs import Jobs

    return Jobs(config)
