"""The Capturer: it owns the source, the state database and the distiller, and runs passes.

Every decision is `daemon.capture.plan`'s; this module only carries it out. What one
pass needs to remember (the stop in force, the notes awaiting their commit) lives on a
`_Pass` made for that pass and dropped after it, never on the long-lived `Capturer`.
Opening one from the configuration is `daemon.capture.pipeline.open_capturer`.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any

from daemon.capture import failures, lifecycle, plan, workers
from daemon.capture.distill.base import Distilled, DistillError, Distiller, StopPass, Transcript
from daemon.capture.distill.extractive import ExtractiveDistiller
from daemon.capture.distill.junk import obviously_junk
from daemon.capture.lessons import NoteMemories, read_previous
from daemon.capture.notefind import NoteFinder
from daemon.capture.notes import Rendered, note_document, note_path
from daemon.capture.lifecycle import Hold, Identity, ServerFaults, Status
from daemon.capture.plan import Action, PassOptions, PassReport
from daemon.capture.rejudge import stale_junk_ids
from daemon.capture.transcript import Limits, build_transcript
from daemon.capture.transcript_files import TranscriptFiles
from daemon.capture.treewrite import TreeWriter
from daemon.config import Config
from daemon.files import sync_files
from daemon.logs import get_logger
from daemon.memory.index import KeptIndex
from daemon.memory.roots import global_tree
from daemon.source import SessionInfo, SessionSource
from daemon.state import SessionRecord, StateDB

CHUNK = 64  # transcripts built ahead of the distiller: bounds memory on a backfill
# Notes written wait this long at most for their sync and their records: a backfill pays
# one sync, one index and one state transaction per interval, not per batch; a crash redoes
# at most this. Short, so each commit (~0.1 s of this thread in a backfill) is covered by
# what the workers have in hand, and the last one, after they are done, is small.
COMMIT_SECONDS = 0.5
RECORD_CHUNK = 500  # state records fetched at once while a pass walks its sessions
# Slices planned (and handed to the workers) beyond the one walked: they go on while this
# thread commits; with one slice ahead they ran dry in each commit (bench_capture).
PLAN_AHEAD = 4
BULK_PASS = 200  # sessions in a pass above which per-session events are debug-level
CAPTURE_LOG = "memoryd.capture"
Progress = Callable[[int, int, str], None]


class Capturer:
    """Runs capture passes against the agents' sessions (one `SessionSource`) and one state database.

    It owns the reader, the state database and the distiller (closed by `close`), and
    writes every note through one `TreeWriter`; a pass's report names the trees written.
    """

    def __init__(
        self,
        config: Config,
        reader: SessionSource,
        state: StateDB,
        distiller: Distiller,
        identity: Identity = Identity(),
        fallback: Distiller | None = None,
        clock: Callable[[], float] = time.time,
        writer: TreeWriter | None = None,
        faults: ServerFaults | None = None,
    ) -> None:
        self.settings, self.paths = config.settings, config.paths
        self.reader = reader
        self.state = state
        self.distiller = distiller
        self.identity = identity
        self.fallback = fallback  # used when the model's budget is spent (llm.fallback)
        self.clock = clock
        self.log = get_logger(CAPTURE_LOG)
        self.limits = Limits.from_settings(config.settings.capture)
        self.global_root = global_tree(config.paths)
        self.transcripts_dir = config.paths.transcripts_dir
        self.writer = writer or TreeWriter(state.fence)
        self.faults = faults or ServerFaults()  # the model server's failures in a row (the distiller counts them)
        self.should_stop: Callable[[], bool] = lambda: False  # the daemon sets this on shutdown
        self.memories = NoteMemories(config)  # a note's lessons, gotchas, decisions

    def run_pass(self, options: PassOptions = PassOptions(), progress: Progress | None = None) -> PassReport:
        """Run one pass; return what happened, with the trees it wrote in `roots`."""
        return _run_pass(self, options, progress)

    def candidates(
        self, options: PassOptions, held: bool = True, now_ms: int | None = None
    ) -> tuple[list[SessionInfo], bool]:
        """Return root sessions to consider, oldest first, and whether the pass is complete.

        `held`: also revisit sessions a stop left (no stop is in force); `now_ms`: only
        retries due by then (None: all of them).
        """
        scope = plan.plan_scope(options, self.state.watermark)
        if scope.session_id is not None:
            infos = self.reader.sessions([scope.session_id])
            if not infos:
                raise LookupError(f"no session {scope.session_id!r} in {self.reader.path}")
        elif scope.every_session:
            infos = self.reader.sessions()
        else:
            infos = self.reader.sessions(sorted(self._changed_ids(options, held, now_ms)))
        parents = plan.parents_to_load(infos)
        loaded = self.reader.sessions(parents) if parents else []
        return plan.root_sessions(infos, loaded, options), scope.complete

    def _changed_ids(self, options: PassOptions, held: bool, now_ms: int | None) -> set[str]:
        """Sessions whose rows moved since the last complete pass, and those a pass must revisit."""
        ids = self.reader.changed_since(self.state.get_meta("source_cursor"))
        upgrades = self.identity.distiller != "extractive" and held
        ids |= set(lifecycle.ids_to_revisit(self.state, upgrades=upgrades, held=held, now_ms=now_ms))
        ids |= options.idle
        ids |= stale_junk_ids(self.state, self.identity)
        if options.redistill_stale:
            ids |= {r.session_id for r in self.state.records(Status.DISTILLED) if lifecycle.is_stale(r, self.identity)}
        return ids

    def cancel(self) -> None:
        """Cancel model requests in flight (daemon shutdown): close the distiller's HTTP client."""
        cancel = getattr(self.distiller, "cancel", None)  # only model distillers have requests in flight
        if cancel is not None:
            cancel()

    def close(self) -> None:
        """Close the distiller, the reader and the state database."""
        self.distiller.close()
        self.reader.close()
        self.state.close()


@dataclass
class _Job:
    info: SessionInfo
    record: SessionRecord
    transcript: Transcript
    distilled: Distilled | None = None  # a worker's extractive note for this transcript
    rendered: Rendered | None = None  # and the note it made of it


@dataclass
class _Pass:
    """What one pass carries from session to session."""

    capture: Capturer
    options: PassOptions
    progress: Progress | None
    now_ms: int
    hold: Hold | None  # a stop still in force: the model is not called this pass
    report: PassReport = field(default_factory=PassReport)
    stop: StopPass | None = None
    answered: bool = False  # the distiller answered once: calls may run in parallel now
    to_commit: list[SessionRecord] = field(default_factory=list)  # written notes awaiting one sync + commit
    committed_at: float = field(default_factory=time.monotonic)
    done: int = 0
    total: int = 0
    detail: Callable[..., Any] = field(default=lambda *args, **fields: None)  # per-session log level
    # Existing notes by session id, read afresh each pass: a pull may have brought or renamed some.
    notes: NoteFinder = field(default_factory=NoteFinder)
    prefetch: workers.Prefetch | None = None  # a large pass's transcripts, built in worker processes
    transcripts: TranscriptFiles = field(init=False)  # the pass's transcript files
    index: KeptIndex = field(init=False)  # the search index its commits write notes and lessons through

    def __post_init__(self) -> None:
        self.transcripts = TranscriptFiles(self.capture.transcripts_dir, self.capture.state.fence)
        self.index = KeptIndex(self.capture.memories.config)

    def tick(self, title: str) -> None:
        self.done += 1
        if self.progress:
            self.progress(self.done, self.total, title)


def _run_pass(capture: Capturer, options: PassOptions, progress: Progress | None = None) -> PassReport:
    """Run one pass; return what happened. One bad session never stops the others."""
    started = capture.clock()
    now_ms = int(started * 1000)
    state, reader = capture.state, capture.reader
    # A manual pass is the user asking now; the daemon's (patient) passes honour a stop in force.
    hold = lifecycle.hold_in_force(state, now_ms) if options.patient and not options.force else None
    p = _Pass(capture, options, progress, now_ms, hold)
    p.stop = StopPass(p.hold.message, p.hold.reason) if p.hold else None
    capture.faults.begin_pass(lifecycle.read_hold(state))
    cursor = reader.cursor()  # taken first: rows written during the pass are seen next time
    # The watermark comes from the source's own clock where it can: a local clock
    # that ran ahead once must not hide later edits until real time catches up.
    newest_row = reader.newest_update()
    watermark = min(now_ms, newest_row) if newest_row else now_ms
    # A manual pass is the user asking now: every retry, due or not (the daemon waits them out).
    due_by = now_ms if options.patient else None
    sessions, full_scope = capture.candidates(options, held=p.hold is None, now_ms=due_by)
    known_before = state.count_records() if full_scope else 0
    p.total = len(sessions)
    p.transcripts.expect(p.total)
    # A backfill of thousands logs its sessions at debug level, only when that is on (a call
    # that is filtered out costs ~30 us here): the summary says enough.
    if p.total <= BULK_PASS or logging.getLogger(CAPTURE_LOG).isEnabledFor(logging.DEBUG):
        p.detail = capture.log.info if p.total <= BULK_PASS else capture.log.debug
    try:
        known_seen = _walk(p, sessions)
    finally:
        if p.prefetch is not None:
            p.prefetch.close()
        p.index.close()
    report = p.report
    # Sessions the watermark let us skip without a look are unchanged too.
    report.unchanged += max(0, known_before - known_seen) if full_scope else 0
    if full_scope and not options.dry_run and not options.redistill_stale and not report.interrupted:
        # The watermark is the pass's *start*: rows written during it are seen next time.
        state.set_watermark(watermark)
        state.set_meta("source_cursor", cursor)
    if not options.dry_run and p.hold is None:  # a new stop recorded, or an old one lifted
        lifecycle.update_hold(state, report, now_ms, lambda: int(capture.clock() * 1000), capture.log)
    state.mark_pass(now_ms, worked=bool(report.distilled or report.junk or report.failed or report.settling))
    report.roots = capture.writer.take_roots()
    report.written = capture.writer.written
    report.seconds = capture.clock() - started
    # A pass that wrote and decided nothing is a heartbeat: debug, so `memoryd logs` shows work.
    (capture.log.info if report.distilled or report.junk or report.failed or report.stop_reason else capture.log.debug)(
        "pass.done",
        distilled=len(report.distilled), junk=len(report.junk), unchanged=report.unchanged,
        settling=len(report.settling), failed=len(report.failed), pending=len(report.pending),
        calls=report.calls, seconds=round(report.seconds, 3),
        **({"stopped": report.stop_reason} if report.stop_reason else {}),
    )  # fmt: skip
    return report


def _walk(p: _Pass, sessions: list[SessionInfo]) -> int:
    """Plan and act on each session, distilling in batches; return how many had records."""
    capture = p.capture
    settle_ms = int(capture.settings.capture.settle_seconds * 1000)
    records: dict[str, SessionRecord] = {}
    actions: dict[str, Action] = {}
    known_seen = 0
    batch: list[_Job] = []
    ahead: deque[tuple[dict[str, SessionRecord], dict[str, Action]]] = deque()
    planned = 0  # sessions planned so far (slices in `ahead`, and those walked)
    try:
        for position, info in enumerate(sessions):
            if position % RECORD_CHUNK == 0:
                # Records are fetched a slice at a time: a full scan of 10,000 sessions
                # must not hold 10,000 records at once (the daemon's resident memory).
                # PLAN_AHEAD slices are planned beyond this one, so the workers have a few
                # thousand sessions to go on with while this thread commits a batch.
                while planned < len(sessions) and planned <= position + PLAN_AHEAD * RECORD_CHUNK:
                    ahead.append(_plan_slice(p, sessions[planned : planned + RECORD_CHUNK], settle_ms))
                    planned += RECORD_CHUNK
                records, actions = ahead.popleft()
                known_seen += len(records)
            if capture.should_stop():
                # Shutting down: what is done is recorded below; the rest waits for the
                # next start (the watermark does not move past it).
                p.report.interrupted = True
                break
            record = records.get(info.id)
            job = _act(p, info, record, actions[info.id], settle_ms)
            if job is None:
                p.tick(info.title)
                continue
            batch.append(job)
            if len(batch) >= CHUNK:
                _distill_batch(p, batch)
                batch = []
    except BaseException:
        _commit_batch(p)  # the notes written so far are recorded, then the error goes on
        raise
    _distill_batch(p, batch, last=True)
    return known_seen


def _plan_slice(
    p: _Pass, chunk: list[SessionInfo], settle_ms: int
) -> tuple[dict[str, SessionRecord], dict[str, Action]]:
    """A slice's records and planned actions (pure: the same answers as one at a time);
    the workers are handed what it will build."""
    if not chunk:
        return {}, {}
    capture = p.capture
    records = capture.state.get_many(s.id for s in chunk)
    actions = {
        s.id: plan.plan_session(s, records.get(s.id), p.now_ms, settle_ms, p.options, capture.identity, p.hold)
        for s in chunk
    }
    _prefetch(p, [(s, records.get(s.id)) for s in chunk if actions[s.id] is Action.BUILD])
    return records, actions


def _prefetch(p: _Pass, builds: list[tuple[SessionInfo, SessionRecord | None]]) -> None:
    """Hand the sessions a slice will build to worker processes, when there are enough of
    them (once there are, every later one)."""
    capture, options = p.capture, p.options
    if p.prefetch is None:
        count = workers.worker_count(capture.settings.capture.workers)
        extractive = isinstance(capture.distiller, ExtractiveDistiller)
        if len(builds) < workers.POOL_MIN or count < 2 or not extractive:
            return
        extract = capture.settings.notes.extract_memories
        p.prefetch = workers.Prefetch(capture.reader.opener(), capture.limits, count, extract)
    for info, record in builds:
        p.prefetch.add(info, record, options, capture.identity, _keeps_transcript(p, info))


def _keeps_transcript(p: _Pass, info: SessionInfo) -> bool:
    settings = p.capture.settings.capture
    return plan.keeps_transcript(info, p.now_ms, settings.transcript_days, p.options, p.capture.identity)


def _act(p: _Pass, info: SessionInfo, record: SessionRecord | None, action: Action, settle_ms: int) -> _Job | None:
    """Carry out a planned action; return a job when the distiller must run."""
    report = p.report
    if action in (Action.UNCHANGED, Action.WAIT):
        report.unchanged += 1
        return None
    if action is Action.SETTLING:
        report.settling.append(info.id)
        quiet_at = info.time_updated + settle_ms
        report.next_settled_ms = min(report.next_settled_ms or quiet_at, quiet_at)
        if not p.options.dry_run:
            p.capture.state.put(lifecycle.settling(record or SessionRecord(session_id=info.id), info))
        return None
    try:
        return _build(p, info, record)
    except (OSError, ValueError, TypeError, KeyError, sqlite3.DatabaseError) as exc:
        # A row shape no OpenCode release wrote yet, an unwritable folder: this
        # session fails (retried, then given up); the others go on.
        failures.record_error(p.capture, report, info, record or SessionRecord(session_id=info.id), exc, "")
        return None


def _build(p: _Pass, info: SessionInfo, record: SessionRecord | None) -> _Job | None:
    """Read rows and build the transcript; return a job if the distiller must run."""
    capture, report = p.capture, p.report
    built = p.prefetch.take(info.id) if p.prefetch is not None else None
    transcript = built.transcript if built else build_transcript(capture.reader.session_rows(info), capture.limits)
    keep = _keeps_transcript(p, info)  # as the workers were told
    info = transcript.session  # the title scrubbed, once: what is written of the session from here on
    for warning in transcript.warnings:
        capture.log.warning("transcript.row_skipped", session_id=info.id, detail=warning)
        report.warnings.append(warning)
    if not plan.needs_distiller(record, transcript.hash, p.options, capture.identity):
        report.unchanged += 1
        if record is not None and not p.options.dry_run:
            capture.state.put(lifecycle.unchanged_transcript(record, info))
        return None
    if p.options.dry_run:
        report.would_distill.append(info.id)
        return None
    # The model input is persisted (already scrubbed) before any model sees it (a worker's
    # extractive note may come first: nothing of it has left the machine).
    if keep:
        p.transcripts.write(info.id, transcript.text)
    else:
        p.transcripts.drop(info.id)
    base = record or SessionRecord(session_id=info.id)
    record = replace(base, project_dir=info.directory, title=info.title)
    return _Job(info, record, transcript, built.distilled, built.rendered) if built else _Job(info, record, transcript)


def _call(p: _Pass, job: _Job) -> Distilled | DistillError:
    # After a stop, a greeting is still recognised as junk: that costs no call.
    assert isinstance(job.transcript, Transcript)
    if job.distilled is not None:
        return job.distilled  # the extractive note a worker built from the same transcript
    if p.stop is not None and not obviously_junk(job.transcript):
        return p.stop
    try:
        return p.capture.distiller.distill(job.transcript)
    except StopPass as stop:
        p.stop = stop
        return stop
    except DistillError as err:
        return err


def _results(p: _Pass, batch: list[_Job]) -> Iterator[tuple[_Job, Distilled | DistillError]]:
    jobs = list(batch)
    # One call at a time until the distiller has answered once this pass: a bad key or
    # a stopped server then costs one request, not one per thread.
    while jobs and not p.answered:
        job = jobs.pop(0)
        result = _call(p, job)
        p.answered = result.calls > 0 if isinstance(result, Distilled) else not result.transient  # not the server's
        yield job, result
    concurrency = p.capture.distiller.concurrency
    if concurrency <= 1 or len(jobs) <= 1:
        for job in jobs:
            yield job, _call(p, job)
        return
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="distill") as pool:
        futures = {pool.submit(_call, p, job): job for job in jobs}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _distill_batch(p: _Pass, batch: list[_Job], last: bool = False) -> None:
    try:
        for job, result in _results(p, batch):
            _apply(p, job, result)
            p.tick(job.info.title)
    except BaseException:
        _commit_batch(p)  # notes already written are recorded even when something above went wrong
        raise
    if last or time.monotonic() - p.committed_at >= COMMIT_SECONDS:
        _commit_batch(p)


def _apply(p: _Pass, job: _Job, result: Distilled | DistillError) -> None:
    """Record one distiller answer: a note, junk, the fallback's note, or a failure."""
    capture, report = p.capture, p.report
    needs_upgrade = False
    if (
        isinstance(result, StopPass)
        and result.reason == "budget"
        and capture.fallback is not None
        and not failures.note_is_current(job.record, job.transcript.hash)
    ):
        report.stop_reason, report.stop_message = result.reason, str(result)
        result = _fallback(p, job)
        needs_upgrade = True
        if isinstance(result, Distilled) and not result.junk:
            report.fallback.append(job.info.id)
    if not isinstance(result, Distilled):
        failures.record_failure(capture, report, job.info, job.record, job.transcript.hash, result)
        return
    report.calls += result.calls
    report.tokens += result.tokens
    try:
        _store(p, job, result, needs_upgrade)
    except OSError as exc:  # an unwritable tree, a full disk: this session only
        failures.record_error(capture, report, job.info, job.record, exc, job.transcript.hash)


def _fallback(p: _Pass, job: _Job) -> Distilled | DistillError:
    assert p.capture.fallback is not None and isinstance(job.transcript, Transcript)
    try:
        return p.capture.fallback.distill(job.transcript)
    except DistillError as err:
        return err


def _keep_for_review(p: _Pass, job: _Job) -> None:
    """A junk verdict's transcript is written whatever the session's age: `memoryd list
    --junk` reads why from it (a greeting is a few lines), until the retention sweeps it."""
    if job.transcript.text and p.capture.settings.capture.transcript_days > 0 and not _keeps_transcript(p, job.info):
        p.transcripts.write(job.info.id, job.transcript.text)


def _commit_batch(p: _Pass) -> None:
    """Make the batch's notes durable, then record them: one sync, one transaction.

    A crash before the commit only means the same notes are rewritten next pass (to the
    same files: a note is found by its session id, and equal bytes are not rewritten).
    """
    p.committed_at = time.monotonic()
    if not p.to_commit:
        return
    records, p.to_commit = p.to_commit, []
    with p.capture.state.fence.guard():
        # Notes indexed first (a crash leaves rows the next sync checks): their lessons find the tree known.
        p.capture.writer.index_written(p.capture.memories.config, p.index)
        p.capture.memories.flush(p.index)  # the notes' lessons, once per memory, before the records
    sync_files(r.note_path for r in records if r.status == Status.DISTILLED)
    with p.capture.state.transaction():
        p.capture.state.put_many(records)


def _store(p: _Pass, job: _Job, result: Distilled, needs_upgrade: bool) -> None:
    capture, info, record = p.capture, job.info, job.record
    verdict = lifecycle.Verdict(job.transcript.hash, result.distiller, result.prompt_version, needs_upgrade)
    now_ms = int(capture.clock() * 1000)
    if result.junk:
        _keep_for_review(p, job)
        p.to_commit.append(lifecycle.done(record, info, verdict, now_ms))
        p.report.junk.append(info.id)
        p.detail("session.junk", session_id=info.id, title=info.title)
        return
    made = job.rendered if result is job.distilled else None  # a worker's note for this very answer
    filename = made.filename if made else None
    root, path = note_path(record.note_path, info, capture.settings, capture.global_root, p.notes, filename)
    text, document = (made.text, made.document) if made else note_document(info, result, info.time_updated)
    # A fresh note's file, absent from its folder's listing, is not opened to be found absent.
    data, previous = read_previous(path) if p.notes.may_exist(path) else (b"", "")
    capture.writer.write_note(root, path, text, document, made and made.index_text, data)
    p.notes.wrote(path)
    stated = made.stated if made else None
    capture.memories.note_written(info.id, root, path, document.fields["title"], previous, text, document.fields, stated)
    p.to_commit.append(lifecycle.done(record, info, verdict, now_ms, note_path=str(path)))
    p.report.distilled.append(info.id)
    p.report.notes[info.id] = str(path)
    p.detail("session.distilled", session_id=info.id, note=str(path), distiller=result.distiller)
