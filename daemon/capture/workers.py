"""A large pass's transcripts and extractive notes, built in worker processes.

Reading a session's rows, building its transcript (the scrubber's pass over every part),
the extractive distiller and rendering its note (text, file name, statements, the search
index's token row: `notes.render`) are pure and CPU-bound: most of a backfill. A pass with
many sessions to build hands them to a pool of processes, in order and ahead of need,
while this process writes, indexes and records. Each worker opens the source read-only
itself (with the source's `opener()`, whatever agent it reads) and gives back exactly
what `build_transcript`, the distiller and `render` would give here (the same functions
run); a worker's error is raised here, where the session is handled.

Workers are spawned, not forked: the daemon has threads and open databases, and a
spawned worker imports only the pure modules it runs (a quarter of a second).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from collections.abc import Callable

from daemon.capture import plan
from daemon.capture.distill.base import Distilled, DistillError, Transcript
from daemon.capture.distill.extractive import ExtractiveDistiller
from daemon.capture.lifecycle import Identity
from daemon.capture.notes import Rendered, render
from daemon.capture.transcript import Limits, build_transcript
from daemon.source import SessionInfo, SessionSource
from daemon.state import SessionRecord

POOL_MIN = 100  # sessions to build among the next RECORD_CHUNK below which the start-up (~0.3 s a worker) is not worth it
MAX_WORKERS = 4
AHEAD = 2048  # sessions handed out ahead of the one being recorded (bounds what waits in memory): the workers go on while the pass commits
BATCH = 16  # sessions per task: one round trip to a worker carries several
PARENT_CHECK_S = 1.0


def worker_count(setting: int) -> int:
    """Workers for a large pass: `capture.workers`, or with 0 one per core (at most MAX_WORKERS)."""
    if setting:
        return setting
    return min(MAX_WORKERS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@dataclass(frozen=True)
class Built:
    """A worker's answer for one session: its transcript and, when it needs one, its note.

    With a note, the transcript comes without its entries (the pass has no use for them),
    and without its text when the pass keeps no transcript file for it (a junk verdict's it keeps)."""

    transcript: Transcript
    distilled: Distilled | None  # None: not needed (same transcript), or the distiller failed (the pass runs it again)
    rendered: Rendered | None = None  # the note's text, file name, statements and index row (not for junk)


@dataclass(frozen=True)
class _Job:
    info: SessionInfo
    record: SessionRecord | None
    options: plan.PassOptions
    identity: Identity
    keep_text: bool  # the pass writes the transcript's text to a file


@dataclass(frozen=True)
class _Worker:
    reader: SessionSource
    limits: Limits
    distiller: ExtractiveDistiller
    extract_memories: bool  # notes.extract_memories: read each note's statements


_worker: _Worker | None = None


def _start(opener: Callable[[], SessionSource], limits: Limits, parent: int, extract_memories: bool) -> None:
    global _worker
    # Ctrl-C is the pass's to handle (it stops the pool); a pass killed outright leaves no
    # worker behind: each goes once its parent is gone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(parent,), name="parent-watch", daemon=True).start()
    _worker = _Worker(opener(), limits, ExtractiveDistiller(), extract_memories)


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def _build(job: _Job) -> Built | None:
    worker = _worker
    assert worker is not None, "worker not started"
    try:
        transcript = build_transcript(worker.reader.session_rows(job.info), worker.limits)
    except Exception:  # noqa: BLE001 - not lost: the pass builds this session itself and meets the error there
        return None
    if job.options.dry_run or not plan.needs_distiller(job.record, transcript.hash, job.options, job.identity):
        return Built(transcript, None)
    try:
        distilled = worker.distiller.distill(transcript)
    except DistillError:
        return Built(transcript, None)  # the pass's distiller runs it again and records the failure
    rendered = None if distilled.junk else render(transcript.session, distilled, worker.extract_memories)
    # Sent back to the pass: what it uses of the transcript, no more (a junk verdict's
    # text is kept for `memoryd list --junk` to explain).
    slim = replace(transcript, entries=(), text=transcript.text if job.keep_text or distilled.junk else "")
    return Built(slim, distilled, rendered)


def _build_many(jobs: list[_Job]) -> list[Built | None]:
    return [_build(job) for job in jobs]


class Prefetch:
    """Sessions handed to the workers, BATCH at a time, in the order the pass will ask for them."""

    def __init__(
        self, opener: Callable[[], SessionSource], limits: Limits, workers: int, extract_memories: bool = True
    ) -> None:
        self._pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start,
            initargs=(opener, limits, os.getpid(), extract_memories),
        )  # fmt: skip
        self._order: deque[str] = deque()  # every queued session id, in the pass's order
        self._queued: set[str] = set()  # the same, to look up
        self._waiting: deque[_Job] = deque()  # those not handed to a worker yet
        self._handed: dict[str, tuple[Future[list[Built | None]], int]] = {}  # id → its batch, its place in it
        self._broken = False  # given up: the pass builds every session itself

    def add(
        self, info: SessionInfo, record: SessionRecord | None, options: plan.PassOptions, identity: Identity, keep_text: bool
    ) -> None:
        """Queue a session the pass will build (in the order it will ask); `keep_text`: the
        pass writes its transcript to a file (the text comes back)."""
        if self._broken:
            return
        self._order.append(info.id)
        self._queued.add(info.id)
        self._waiting.append(_Job(info, record, options, identity, keep_text))
        self._fill(BATCH)

    def _fill(self, least: int) -> None:
        """Hand out batches while fewer than AHEAD sessions are out and `least` are waiting."""
        while len(self._waiting) >= least and len(self._handed) < AHEAD:
            jobs = [self._waiting.popleft() for _ in range(min(BATCH, len(self._waiting)))]
            try:
                future = self._pool.submit(_build_many, jobs)
            except (BrokenProcessPool, RuntimeError) as exc:  # a worker could not start, or died
                self._give_up(exc)
                return
            for place, job in enumerate(jobs):
                self._handed[job.info.id] = (future, place)

    def take(self, session_id: str) -> Built | None:
        """The session's transcript (and note) from its worker, waited for; None when the pass
        is to build it itself (not queued, or the worker met an error, which the pass meets again).

        Sessions queued before it and not asked for are dropped."""
        if session_id not in self._queued:
            return None  # not queued, or the pool was given up: the pass builds it

        while self._order[0] != session_id:
            skipped = self._order.popleft()
            self._queued.discard(skipped)
            if self._handed.pop(skipped, None) is None:
                self._waiting = deque(j for j in self._waiting if j.info.id != skipped)
        self._queued.discard(self._order.popleft())
        if session_id not in self._handed:
            self._fill(1)  # it waits at the head of the queue: hand it out now
        future, place = self._handed.pop(session_id, (None, 0))
        self._fill(BATCH if len(self._waiting) >= BATCH or self._handed else 1)
        if future is None:
            return None
        try:
            return future.result()[place]
        except BrokenProcessPool as exc:  # a worker died (killed, out of memory): this process builds it
            self._give_up(exc)
            return None

    def _give_up(self, exc: BaseException) -> None:
        """No more work for the pool: the pass builds every session itself from here on."""
        self._broken = True
        if self._queued:
            from daemon.logs import get_logger  # here: a worker imports this module, and needs no logging

            get_logger("memoryd.capture").warning("workers.stopped", error=str(exc), sessions_left=len(self._queued))
        self._order.clear()
        self._queued.clear()
        self._waiting.clear()
        self._handed.clear()

    def close(self) -> None:
        """Stop the workers; what was queued and not taken is dropped."""
        self._order.clear()
        self._queued.clear()
        self._waiting.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._handed.clear()
