"""The daemon loop: watchers → debounced work queue → one worker; scheduled jobs; signals.

The loop only decides *when* work happens. The work itself (a capture pass, compiling
a tree, a sweep) is done by `daemon.service.jobs.Jobs`, the same code the CLI runs.
File-system events never do work on the observer thread: they mark a kind of work
as due, and the worker does it once the burst is over.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.config import Config, ConfigError, load_settings
from daemon.diskfull import DiskFull
from daemon.logs import get_logger
from daemon.service.events import AgentFileEvents, DatabaseEvents, TreeEvents
from daemon.service.generation import Generation
from daemon.service.queue import WorkQueue
from daemon.state import StateFenced, WriteFence

if TYPE_CHECKING:
    from daemon.service.context_server import ContextServer
    from daemon.service.jobs import Jobs
    from daemon.service.notify import Notifier

# Kinds of work. A tree's work is keyed by its root path.
CAPTURE = "capture"
SETTLED = "settled"  # a capture pass when a settling session (or a retry, a hold) is due
RECONCILE = "reconcile"
SWEEP = "sweep"
ROOTS = "roots"  # re-discover memory roots (a new project tree may exist)
POLL = "poll"  # a cheap look at the database (polling mode, or a folder not there yet)
TREE = "tree:"  # + root path
TREE_DEBOUNCE_MS = 50
# A debounce window that OpenCode's steady writes keep open still closes this long after
# the burst began: a busy session never keeps another's note waiting.
MAX_DEBOUNCE_S = 1.0
EXIT_START_FAILED = 1
# The watchdog's patience with one step of the worker (a session's model calls, a tree
# refresh, a sweep), at least: past it without a step done, the worker is hung.
STEP_FLOOR_S = 600.0


class WorkerStartError(Exception):
    """The worker could not open what it works with: the daemon does not half-start."""


class Daemon:
    """`memoryd run`: everything that keeps memory up to date while the user works."""

    def __init__(
        self,
        config: Config,
        config_path: Path | None = None,
        notifier: Notifier | None = None,
        jobs_factory: Callable[[Config, WriteFence], Jobs] | None = None,
    ) -> None:
        from daemon.service.notify import Notifier

        self.gen = Generation(config)  # what the configuration started; a reload swaps it whole
        self.config_path = config_path
        self.notifier = notifier or Notifier()
        self.log = get_logger("memoryd.daemon")
        self._wake = threading.Event()  # the main thread's alarm clock: stop, reload, ping
        self.stop = _WakingEvent(self._wake)
        self.ready = threading.Event()  # READY=1 sent: watchers, socket and worker are up
        self.first_pass = threading.Event()  # the first reconcile (a full pass) is done
        self._jobs_factory = jobs_factory or _default_jobs
        self._reload = threading.Event()
        self._socket: ContextServer | None = None  # outlives reloads (unless its path moves)
        # The worker outlived the stop timeout (a model call that would not end): the
        # process must end now, and the lock is kept until it does.
        self.abandoned = False

    @property
    def config(self) -> Config:
        return self.gen.config

    @property
    def jobs(self) -> Jobs | None:
        return self.gen.jobs

    @property
    def queue(self) -> WorkQueue:
        return self.gen.queue

    # -- lifecycle ---------------------------------------------------------------

    def run(self) -> int:
        """Run until SIGTERM/SIGINT; return the exit code. Call from the main thread."""
        from daemon.service.lock import AlreadyRunning, InstanceLock
        from daemon.service.signals import SignalHandlers

        try:
            lock = InstanceLock(self.config.paths.lock_file)
            lock.acquire()
        except AlreadyRunning as exc:
            self.log.error("daemon.already_running", pid=exc.pid, lock=str(self.config.paths.lock_file))
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
        from daemon.service.context_server import SWITCH_INTERVAL_S

        self.log.info("daemon.starting", pid=os.getpid(), db=str(self.config.paths.opencode_db))
        sys.setswitchinterval(SWITCH_INTERVAL_S)  # a session's context answer beside a busy worker
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
        _freeze_heap()
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
        """Start the current generation: its worker, watchers, schedule and sink."""
        gen = self.gen
        gen.worker = threading.Thread(target=self._work, args=(gen,), name="memoryd-worker", daemon=True)
        gen.worker.start()
        # The worker owns the jobs (and their SQLite connections); watchers start once
        # they exist, so no event arrives before there is anything to handle it.
        gen.jobs_ready.wait()
        if gen.start_error is not None:
            exc = gen.start_error
            raise WorkerStartError(f"cannot start the worker: {type(exc).__name__}: {exc}") from exc
        try:
            self._start_watchers(gen)
            self._start_schedule(gen)
        except OSError as exc:  # e.g. the inotify watch limit: no half-started daemon
            raise WorkerStartError(f"cannot watch for changes: {exc}") from exc
        self._start_sink(gen)
        # The first reconcile: a full pass, right after READY=1.
        gen.queue.mark(RECONCILE)

    def _shutdown(self) -> None:
        if self._socket is not None:
            self._socket.close()
        if not self._stop_generation(self.gen):
            # A model call that would not end: its writes are fenced off, the note is
            # never half-written (atomic writes), and the session is redone next start.
            self.abandoned = True
            self.log.warning("daemon.worker_abandoned", kind=self.gen.health.last_kind)

    def _stop_generation(self, gen: Generation) -> bool:
        """End every write of `gen` at once (its one fence), then its threads; return
        False when its worker is still busy after service.shutdown_timeout_s."""
        gen.stop_writes()
        timeout = gen.config.settings.service.shutdown_timeout_s
        if gen.sink is not None:
            gen.sink.stop(timeout)  # a sink thread left in a request writes nothing more
        self._stop_watchers(gen)
        if gen.worker is not None:
            gen.worker.join(timeout)
            return not gen.worker.is_alive()
        return True

    def _request_reload(self) -> None:
        self._reload.set()
        self._wake.set()

    def _healthy(self) -> bool:
        """The worker is idle, or busy on its current step (one session's model calls, with
        their retries) for less than the longest such a step could take."""
        worker, busy = self.gen.worker, self.gen.health.busy_since
        limit = max(STEP_FLOOR_S, self.config.settings.llm.timeout_s * (self.config.settings.llm.max_retries + 2))
        return worker is not None and worker.is_alive() and (busy is None or time.monotonic() - busy < limit)

    def _do_reload(self) -> None:
        self.notifier.reloading()
        try:
            settings, paths = load_settings(self.config_path)
        except ConfigError as exc:
            self.log.error("daemon.reload_failed", error=str(exc), hint="keeping the previous configuration")
            self.notifier.ready()
            return
        self.log.info("daemon.reloading")
        old = self.gen
        if not self._stop_generation(old):
            self.log.warning("daemon.reload_overlap", kind=old.health.last_kind,
                             hint="the busy worker finishes its item with its own parts, then ends")
        moved = paths.socket_file != old.config.paths.socket_file
        self.gen = Generation(Config(settings, paths))
        self._start()
        if moved and self._socket is not None:
            self._socket.close()
            self._start_socket()
        self.notifier.ready()
        self.log.info("daemon.reloaded")

    # -- the plugin's socket ---------------------------------------------------------

    def _start_socket(self) -> None:
        from daemon.service.context_server import ContextServer

        self._socket = ContextServer(lambda: self.config, self.session_idle)
        self._socket.start(self.config.paths.socket_file)

    def session_idle(self, session_id: str) -> None:
        """OpenCode says a session went idle: write its note now, not after settle_seconds."""
        gen = self.gen
        gen.add_idle(session_id)
        self.log.info("session.idle", session_id=session_id)
        gen.queue.mark(CAPTURE)

    # -- the worker ---------------------------------------------------------------

    def _work(self, gen: Generation) -> None:
        # Each worker owns its generation's jobs and works on its queue. After a reload
        # that had to leave a busy worker behind, the old one finishes its item with its
        # own parts (its writes fenced off), closes its jobs and ends.
        try:
            jobs = self._jobs_factory(gen.config, gen.fence)
        except BaseException as exc:  # noqa: BLE001 - handed to _start, which stops the daemon
            gen.start_error = exc
            gen.jobs_ready.set()
            return
        jobs.on_progress = gen.health.progressed
        gen.jobs = jobs
        gen.jobs_ready.set()
        try:
            while True:
                kind = gen.queue.take()
                if kind is None:
                    return
                self._run_one(kind, gen, jobs)
        finally:
            jobs.close()

    def _run_one(self, kind: str, gen: Generation, jobs: Jobs) -> None:
        if kind in gen.periods:  # a scheduled kind: due again one period from now, whatever this run does
            gen.queue.mark(kind, gen.periods[kind])
        gen.health.busy_since = time.monotonic()
        gen.health.last_kind = kind
        try:
            self._do(kind, gen, jobs)
        except StateFenced:
            return  # stopping: the job was cut short, nothing more is written
        except DiskFull as exc:  # named, without a traceback; the next pass tries again
            self.log.error("daemon.disk_full", kind=kind, path=str(exc.path), error=str(exc))
        except Exception as exc:  # noqa: BLE001 - the loop must outlive any one job
            self.log.exception("daemon.job_failed", kind=kind, error=str(exc))
        finally:
            gen.health.busy_since = None
        if gen.sink is not None:
            gen.sink.wake()  # notes or trees may have changed: the sink looks (on its own thread)
        if kind == RECONCILE and not self.first_pass.is_set():
            _freeze_heap()  # what the first pass imported and kept stays, too
            self.first_pass.set()
            self.log.info("daemon.first_pass_done", status=jobs.status_line())

    def _do(self, kind: str, gen: Generation, jobs: Jobs) -> None:
        queue = gen.queue
        if kind in (CAPTURE, SETTLED, RECONCILE):
            result = jobs.capture(full=kind == RECONCILE, idle=gen.take_idle())
            if result is not None:
                if result.recheck_in is not None:
                    # A session is settling: look again when it should have gone quiet,
                    # even if OpenCode writes nothing more. A kind of its own, that no
                    # database event can push back.
                    queue.mark(SETTLED, result.recheck_in)
                if result.new_roots:
                    queue.mark(ROOTS)
            if kind == RECONCILE:
                from daemon.service.events import PENDING

                self._sync_root_watches(gen)
                self._watch_agents(gen)  # an agent installed since
                for root in jobs.roots():
                    PENDING.note(root.path, None)  # every file looked at, whatever events named
                    queue.mark(TREE + str(root.path))
            self.notifier.status(jobs.status_line())
        elif kind == ROOTS:
            self._sync_root_watches(gen)
        elif kind.startswith(TREE):
            jobs.refresh_tree(Path(kind[len(TREE) :]))
            if self._socket is not None:
                self._socket.warm()  # the next session start finds its block ready
        elif kind == SWEEP:
            jobs.sweep()
            self.notifier.status(jobs.status_line())
        elif kind == POLL:
            self._poll(gen)

    # -- sink ------------------------------------------------------------------------

    def _start_sink(self, gen: Generation) -> None:
        from daemon.sinks.run import enabled

        if enabled(gen.config.settings):
            from daemon.service.sinkworker import SinkWorker

            gen.sink = SinkWorker(gen.config, gen.fence)
            gen.sink.start()

    # -- watchers ------------------------------------------------------------------

    def _start_watchers(self, gen: Generation) -> None:
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        watch = gen.config.settings.watch
        observer = PollingObserver(timeout=watch.poll_interval_s) if watch.poll else Observer()
        observer.name = "memoryd-observer"
        observer.daemon = True
        with gen.watch_lock:
            gen.observer, gen.watched, gen.agent_watches = observer, {}, set()
        self._watch_database(gen)
        self._watch_agents(gen)
        observer.start()

    def _stop_watchers(self, gen: Generation) -> None:
        # Taken away under the lock: a poll or a new tree on another thread finds no
        # observer rather than scheduling on one being stopped.
        with gen.watch_lock:
            observer, gen.observer, gen.watched, gen.agent_watches = gen.observer, None, {}, set()
        if observer is not None:
            observer.stop()
            observer.join(5)

    def _watch_database(self, gen: Generation, warn: bool = True) -> None:
        db = gen.config.paths.opencode_db
        folder = db.parent
        with gen.watch_lock:
            if gen.observer is None:  # stopped meanwhile
                return
            if folder.is_dir() and str(folder) not in gen.watched:
                handler = DatabaseEvents(db.name, lambda replaced: self._on_database_event(gen, replaced))
                gen.watched[str(folder)] = gen.observer.schedule(handler, str(folder), recursive=False)
                return
        if warn and not folder.is_dir():
            self.log.warning("source.waiting", db=str(db), hint="OpenCode has not created its database yet")

    def _watch_agents(self, gen: Generation) -> None:
        """Watch the other agents' session folders that exist now (Claude Code, Codex)."""
        from daemon.capture.sources import watch_folders

        with gen.watch_lock:
            if gen.observer is None:  # stopped meanwhile
                return
            for folder in watch_folders(gen.config):
                if folder.is_dir() and str(folder) not in gen.watched:
                    handler = AgentFileEvents(lambda replaced: self._on_database_event(gen, replaced))
                    gen.watched[str(folder)] = gen.observer.schedule(handler, str(folder), recursive=True)
                    gen.agent_watches.add(str(folder))
                    self.log.info("source.watching", folder=str(folder))

    def _sync_root_watches(self, gen: Generation) -> None:
        """Watch every memory root that exists now; stop watching ones that are gone."""
        jobs = gen.jobs
        if jobs is None:
            return
        wanted = {str(root.path): root for root in jobs.roots() if root.path.is_dir()}
        db_folder = str(gen.config.paths.opencode_db.parent)
        with gen.watch_lock:
            if gen.observer is None:  # stopped meanwhile
                return
            for path in list(gen.watched):
                if path != db_folder and path not in wanted and path not in gen.agent_watches:
                    gen.observer.unschedule(gen.watched.pop(path))
            for path in sorted(wanted.keys() - set(gen.watched)):
                handler = TreeEvents(wanted[path], lambda root: self._on_tree_event(gen, root), jobs.own_writes.is_echo)
                gen.watched[path] = gen.observer.schedule(handler, path, recursive=True)
                gen.queue.mark(TREE + path)
                self.log.info("tree.watching", root=path)

    def _on_database_event(self, gen: Generation, replaced: bool) -> None:
        debounce = gen.config.settings.watch.debounce_ms / 1000
        if replaced and gen.jobs is not None:
            gen.jobs.source_replaced()
        gen.queue.mark(CAPTURE, debounce, trailing=True, max_delay=MAX_DEBOUNCE_S)

    def _on_tree_event(self, gen: Generation, root: Path) -> None:
        # Editors save in bursts of a few milliseconds (temp file, rename), not WAL-style
        # streams: a short window keeps an edit → index.md well under a third of a second.
        window = min(gen.config.settings.watch.debounce_ms, TREE_DEBOUNCE_MS) / 1000
        gen.queue.mark(TREE + str(root), window, trailing=True)

    # -- schedule --------------------------------------------------------------------

    def _start_schedule(self, gen: Generation) -> None:
        """Sweep, reconcile (and poll) every period, on the queue's monotonic clock: the
        wall clock going back a day (or forward) moves no run (a wall-clock scheduler
        slept a whole day after a jump back)."""
        watch, sweep = gen.config.settings.watch, gen.config.settings.sweep
        # Scheduled kinds only mark work as due: the generation's one worker does it,
        # behind the generation's fence, so runs never overlap; a late one is one run.
        gen.periods = {SWEEP: sweep.interval_minutes * 60, RECONCILE: watch.reconcile_minutes * 60}
        if watch.poll or not gen.config.paths.opencode_db.parent.is_dir():
            # Polling mode, or a database folder that does not exist yet: a cheap check
            # (PRAGMA data_version, or the file appearing) every few seconds.
            gen.periods[POLL] = watch.poll_interval_s
            gen.queue.mark(POLL, watch.poll_interval_s)
        gen.queue.mark(SWEEP, 5.0)  # one sweep soon after start (the first reconcile: at once), then every period

    def _poll(self, gen: Generation) -> None:
        if not gen.config.paths.opencode_db.exists():
            return
        self._watch_database(gen, warn=False)  # the folder may have appeared since the start
        self._watch_agents(gen)
        gen.queue.mark(CAPTURE)


class _WakingEvent(threading.Event):
    """An Event whose set() also wakes the main loop (SIGTERM sets it, from the signal thread)."""

    def __init__(self, wake: threading.Event) -> None:
        super().__init__()
        self._wake_also = wake

    def set(self) -> None:
        super().set()
        self._wake_also.set()


def _default_jobs(config: Config, fence: WriteFence) -> Jobs:
    from daemon.service.jobs import Jobs

    return Jobs(config, fence)


def _freeze_heap() -> None:
    """Leave what start-up made (modules, config, caches: most of the heap) out of the
    garbage collector's full passes, which otherwise walk all of it now and then in the
    middle of a session's context answer."""
    gc.collect()
    gc.freeze()
