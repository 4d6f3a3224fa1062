"""One generation of the daemon: what one configuration started, swapped whole by a reload.

A worker works on its own generation only: one a reload had to leave behind (busy in a
long model call) finishes its item with its own jobs, queue, watches and sink and never
reaches the new generation's. Each generation has one write fence: its jobs (the worker
thread), its sink thread and every connection they open write through it, and closing
it ends all of their writes at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from daemon.config import Config
from daemon.service.queue import WorkQueue
from daemon.state import WriteFence

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch

    from daemon.service.jobs import Jobs
    from daemon.service.sinkworker import SinkWorker


@dataclass(eq=False)
class Health:
    """What the worker is doing, for the watchdog and for a shutdown that has to abandon it."""

    busy_since: float | None = None  # the job's start, or its last step (a session done)
    last_kind: str = ""

    def progressed(self) -> None:
        """The busy worker finished a step: alive, however long its whole job takes (a
        backfill through a slow local model can take hours, each note minutes)."""
        if self.busy_since is not None:
            self.busy_since = time.monotonic()


@dataclass(eq=False)
class Generation:
    """The running parts of one configuration."""

    config: Config
    fence: WriteFence = field(default_factory=WriteFence)
    queue: WorkQueue = field(default_factory=WorkQueue)
    health: Health = field(default_factory=Health)
    jobs_ready: threading.Event = field(default_factory=threading.Event)
    jobs: Jobs | None = None  # made by the worker thread, which owns their connections
    start_error: BaseException | None = None  # why the jobs could not be made
    worker: threading.Thread | None = None
    sink: SinkWorker | None = None  # when a Cognee server is configured
    periods: dict[str, float] = field(default_factory=dict)  # scheduled kind → seconds between runs
    observer: BaseObserver | None = None  # set and cleared under watch_lock
    watched: dict[str, ObservedWatch] = field(default_factory=dict)  # path → watch handle
    agent_watches: set[str] = field(default_factory=set)  # those of them that are agents' session folders
    # The worker adds watches (new trees, a database folder or an agent's folder that
    # appeared) while a stop may be taking the observer away.
    watch_lock: threading.Lock = field(default_factory=threading.Lock)
    _idle: set[str] = field(default_factory=set)  # sessions OpenCode said went idle
    _idle_lock: threading.Lock = field(default_factory=threading.Lock)

    def add_idle(self, session_id: str) -> None:
        with self._idle_lock:
            self._idle.add(session_id)

    def take_idle(self) -> frozenset[str]:
        """The sessions that went idle since the last call (for the next pass)."""
        with self._idle_lock:
            idle, self._idle = frozenset(self._idle), set()
        return idle

    def stop_writes(self) -> None:
        """No write of this generation from here on: its queue, fence and jobs are closed."""
        self.queue.close()
        self.fence.close()
        if self.jobs is not None:
            self.jobs.request_stop()  # cancels requests in flight, too
