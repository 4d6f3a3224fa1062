"""One capture pass: find changed sessions, build transcripts, distil, write notes.

`plan_session` is the pure decision for one session (what to do, from data alone);
`Capture.run_pass` is the runner that reads, calls the distiller and writes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from daemon.capture.distill.base import Distilled, Distiller, DistillError, StopPass, Transcript
from daemon.capture.distill.junk import obviously_junk
from daemon.capture.notes import choose_note_dir, note_filename, render_note
from daemon.capture.transcript import Limits, build_transcript
from daemon.config import Paths, Settings
from daemon.files import atomic_write_text, sync_files, write_if_changed
from daemon.logs import get_logger
from daemon.opencode.reader import OpenCodeReader, SessionInfo
from daemon.state import SessionRecord, StateDB

DONE = ("distilled", "junk")
CHUNK = 64  # transcripts built ahead of the distiller: bounds memory on a backfill
RECORD_CHUNK = 500  # state records held at once while a pass walks its sessions
BULK_PASS = 200  # sessions in a pass above which per-session events are debug-level


class Action(Enum):
    UNCHANGED = "unchanged"  # rows did not move: nothing to read
    SETTLING = "settling"  # still being written: wait
    BUILD = "build"  # read rows and build the transcript, then decide on its hash


@dataclass(frozen=True)
class Identity:
    """Which distiller, with which prompt, makes notes now."""

    distiller: str = "extractive"
    prompt_version: str = ""


@dataclass
class PassOptions:
    limit: int | None = None
    offset: int = 0
    session_id: str | None = None
    force: bool = False
    dry_run: bool = False
    redistill_stale: bool = False
    # Compare every session's newest row with its record instead of trusting the
    # watermark probes: catches edits to old rows that left the session row alone.
    full_scan: bool = False
    # Sessions OpenCode said went idle (the plugin tells the daemon): done for now, so
    # they are distilled without settling; a later write makes them settle as usual.
    idle: frozenset[str] = frozenset()


@dataclass
class PassReport:
    distilled: list[str] = field(default_factory=list)
    junk: list[str] = field(default_factory=list)
    unchanged: int = 0
    settling: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # session id, error
    pending: list[tuple[str, str]] = field(default_factory=list)  # left for a later pass, and why
    would_distill: list[str] = field(default_factory=list)  # --dry-run
    notes: dict[str, str] = field(default_factory=dict)  # session id → note path written
    fallback: list[str] = field(default_factory=list)  # got an extractive note because the budget is spent
    calls: int = 0
    tokens: int = 0
    stop_reason: str = ""  # why the pass stopped calling the model: StopPass.reason
    stop_message: str = ""
    stopped: int = 0  # sessions the stop left for a later pass (also in `pending`)
    warnings: list[str] = field(default_factory=list)
    next_settled_ms: int | None = None  # when the soonest settling session will have been quiet
    interrupted: bool = False  # stopped early on request (daemon shutdown)
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        # A spent budget is the configured behaviour; any other stop left work undone.
        return 1 if self.failed or self.stop_reason not in ("", "budget") else 0


def is_stale(record: SessionRecord, identity: Identity) -> bool:
    """A note made by another distiller or prompt than the configured model.

    Without a model nothing is stale: the extractive distiller never replaces a model's
    note unless forced.
    """
    return (
        identity.distiller != "extractive"
        and record.status == "distilled"
        and (record.distiller, record.prompt_version) != (identity.distiller, identity.prompt_version)
    )


def must_redo(record: SessionRecord, options: PassOptions, identity: Identity, upgrades_allowed: bool) -> bool:
    """Redo whatever the rows say: --force, a stale note under --redistill-stale, or an
    extractive fallback note awaiting its model (a failed upgrade waits, like any failure,
    until the session changes)."""
    return (
        options.force
        or (options.redistill_stale and is_stale(record, identity))
        or (upgrades_allowed and bool(record.needs_upgrade) and record.status != "failed")
    )


def plan_session(
    info: SessionInfo,
    record: SessionRecord | None,
    now_ms: int,
    settle_ms: int,
    options: PassOptions,
    identity: Identity,
    upgrades_allowed: bool,
) -> Action:
    """Decide, from data alone, what a pass does with one session."""
    if now_ms - info.time_updated < settle_ms and info.id not in options.idle:
        return Action.SETTLING
    if record is None or must_redo(record, options, identity, upgrades_allowed):
        return Action.BUILD
    if record.max_updated == info.time_updated and record.status in (*DONE, "failed"):
        return Action.UNCHANGED
    return Action.BUILD


def needs_distiller(
    record: SessionRecord | None, transcript: Transcript, options: PassOptions, identity: Identity, upgrades_allowed: bool
) -> bool:
    """After building the transcript: is a distiller call really needed?"""
    if record is None or must_redo(record, options, identity, upgrades_allowed):
        return True
    if record.transcript_hash == transcript.hash and (record.note_path or record.status == "junk"):
        return False  # same transcript as the last note: never pay twice
    if record.status == "failed" and record.failed_hash == transcript.hash:
        return False  # circuit open until the session changes
    return True


@dataclass
class _Job:
    info: SessionInfo
    record: SessionRecord
    transcript: Transcript


class Capture:
    """Runs capture passes against one OpenCode database and one state database."""

    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        reader: OpenCodeReader,
        state: StateDB,
        distiller: Distiller,
        identity: Identity = Identity(),
        fallback: Distiller | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.reader = reader
        self.state = state
        self.distiller = distiller
        self.identity = identity
        self.fallback = fallback  # used when the model's budget is spent (llm.fallback)
        self.clock = clock
        self.log = get_logger("memoryd.capture")
        self.limits = Limits.from_settings(settings.capture)
        self._stop: StopPass | None = None
        self._answered = False  # the distiller answered once this pass: calls may run in parallel
        self._pending_records: list[SessionRecord] = []  # written notes awaiting one sync + commit
        self.should_stop: Callable[[], bool] = lambda: False  # the daemon sets this on shutdown
        # Set by the daemon after a stop (budget spent, server down): later passes neither
        # call the model nor rebuild the sessions that stop left pending, until it lifts.
        self.hold: StopPass | None = None
        self._detail = self.log.info
        self.calls = 0  # distiller calls this process made (tests and the benchmark read it)

    # -- choosing sessions ------------------------------------------------------

    def _candidates(self, options: PassOptions) -> tuple[list[SessionInfo], bool]:
        """Return root sessions to consider, oldest first, and whether the pass is complete."""
        full_scope = options.session_id is None and options.limit is None and not options.offset
        watermark = self.state.watermark
        if options.session_id is not None:
            infos = self.reader.sessions([options.session_id])
            if not infos:
                raise LookupError(f"no session {options.session_id!r} in {self.reader.path}")
        elif options.force or options.full_scan or watermark == 0 or not full_scope:
            infos = self.reader.sessions()
        else:
            since = watermark - self.settings.capture.overlap_ms
            ids = self.reader.changed_session_ids(since, self.state.get_meta("last_message_id"))
            upgrades = self.identity.distiller != "extractive" and self.hold is None
            ids |= set(self.state.ids_to_revisit(upgrades=upgrades, stopped=self.hold is None))
            ids |= options.idle
            if options.redistill_stale:
                ids |= {r.session_id for r in self.state.records("distilled") if is_stale(r, self.identity)}
            infos = self.reader.sessions(sorted(ids))
        # Subagent sessions are part of their parent's note: a moved child moves its parent.
        roots = {i.id: i for i in infos if not i.parent_id}
        parents = sorted({i.parent_id for i in infos if i.parent_id and i.parent_id not in roots})
        for parent in self.reader.sessions(parents) if parents else []:
            if not parent.parent_id:
                roots[parent.id] = parent
        ordered = sorted(roots.values(), key=lambda s: (s.time_created, s.id))
        if options.offset:
            ordered = ordered[options.offset :]
        if options.limit is not None:
            ordered = ordered[: options.limit]
        return ordered, full_scope

    # -- the pass -----------------------------------------------------------------

    def run_pass(
        self,
        options: PassOptions = PassOptions(),
        progress: Callable[[int, int, str], None] | None = None,
    ) -> PassReport:
        """Run one pass; return what happened. One bad session never stops the others."""
        started = self.clock()
        now_ms = int(started * 1000)
        report = PassReport()
        self._stop = self.hold  # a stop still in force: no distiller call at all this pass
        self._answered = False
        newest_message = self.reader.newest_message_id()
        # The watermark comes from the source's own clock where it can: a local clock
        # that ran ahead once must not hide later edits until real time catches up.
        newest_row = self.reader.newest_update()
        watermark = min(now_ms, newest_row) if newest_row else now_ms
        sessions, full_scope = self._candidates(options)
        known_before = self.state.count_records() if full_scope else 0
        known_seen = 0
        records: dict[str, SessionRecord] = {}
        settle_ms = int(self.settings.capture.settle_seconds * 1000)
        upgrades = self.identity.distiller != "extractive"
        total = len(sessions)
        done = 0
        # A backfill of thousands logs its sessions at debug level: the summary says enough.
        self._detail = self.log.info if total <= BULK_PASS else self.log.debug

        batch: list[_Job] = []
        for position, info in enumerate(sessions):
            if position % RECORD_CHUNK == 0:
                # Records are fetched a slice at a time: a full scan of 10,000 sessions
                # must not hold 10,000 records at once (the daemon's resident memory).
                records = self.state.get_many(s.id for s in sessions[position : position + RECORD_CHUNK])
                known_seen += len(records)
            if self.should_stop():
                # Shutting down: what is done is recorded below; the rest waits for the
                # next start (the watermark does not move past it).
                report.interrupted = True
                break
            record = records.get(info.id)
            action = plan_session(info, record, now_ms, settle_ms, options, self.identity, upgrades)
            if self.hold is not None and action is Action.BUILD and _held(record, info):
                action = Action.UNCHANGED  # left pending by the stop still in force: not rebuilt
            job = None
            if action is Action.UNCHANGED:
                report.unchanged += 1
            elif action is Action.SETTLING:
                report.settling.append(info.id)
                quiet_at = info.time_updated + settle_ms
                report.next_settled_ms = min(report.next_settled_ms or quiet_at, quiet_at)
                if not options.dry_run:
                    self._mark_settling(info, record)
            else:
                try:
                    job = self._build(info, record, options, report, upgrades)
                except (OSError, ValueError, TypeError, KeyError, sqlite3.DatabaseError) as exc:
                    # A row shape no OpenCode release wrote yet, an unwritable folder: this
                    # session fails (retried, then given up); the others go on.
                    self._record_error(info, record or SessionRecord(session_id=info.id), exc, "", report)
            if job is None:
                done += 1
                if progress:
                    progress(done, total, info.title)
                continue
            batch.append(job)
            if len(batch) >= CHUNK:
                done = self._distill_batch(batch, report, progress, done, total)
                batch = []
        self._distill_batch(batch, report, progress, done, total)
        # Sessions the watermark let us skip without a look are unchanged too.
        report.unchanged += max(0, known_before - known_seen) if full_scope else 0

        if full_scope and not options.dry_run and not options.redistill_stale and not report.interrupted:
            # The watermark is the pass's *start*: rows written during it are seen next time.
            self.state.set_watermark(watermark)
            self.state.set_meta("last_message_id", newest_message)
        self.state.set_meta("last_pass", str(now_ms))
        report.seconds = self.clock() - started
        self.log.info(
            "pass.done",
            distilled=len(report.distilled),
            junk=len(report.junk),
            unchanged=report.unchanged,
            settling=len(report.settling),
            failed=len(report.failed),
            pending=len(report.pending),
            calls=report.calls,
            seconds=round(report.seconds, 3),
        )
        return report

    def _mark_settling(self, info: SessionInfo, record: SessionRecord | None) -> None:
        record = record or SessionRecord(session_id=info.id)
        # Still being written: whatever failed or stopped before is moot for the new rows.
        self.state.put(replace(record, status="pending", project_dir=info.directory, title=info.title, last_error=""))

    def _build(
        self, info: SessionInfo, record: SessionRecord | None, options: PassOptions, report: PassReport, upgrades: bool
    ) -> _Job | None:
        """Read rows and build the transcript; return a job if the distiller must run."""
        transcript = build_transcript(self.reader.session_rows(info), self.limits)
        for warning in transcript.warnings:
            self.log.warning("transcript.row_skipped", session_id=info.id, detail=warning)
            report.warnings.append(warning)
        if not needs_distiller(record, transcript, options, self.identity, upgrades):
            report.unchanged += 1
            if record is not None and not options.dry_run:
                status = record.status if record.status == "failed" else ("distilled" if record.note_path else "junk")
                self.state.put(replace(record, max_updated=info.time_updated, status=status))
            return None
        if options.dry_run:
            report.would_distill.append(info.id)
            return None
        # The model input is persisted (already scrubbed) before any distiller sees it.
        # Derived data: no fsync of its own (the batch is synced before it is recorded).
        write_if_changed(self.paths.transcripts_dir / f"{info.id}.md", transcript.text, durable=False)
        base = record or SessionRecord(session_id=info.id)
        return _Job(info, replace(base, project_dir=info.directory, title=info.title), transcript)

    def _call(self, job: _Job) -> Distilled | DistillError:
        # After a stop, a greeting is still recognised as junk: that costs no call.
        if self._stop is not None and not obviously_junk(job.transcript):
            return self._stop
        try:
            return self.distiller.distill(job.transcript)
        except StopPass as stop:
            self._stop = stop
            return stop
        except DistillError as err:
            return err

    def _results(self, batch: list[_Job]) -> Iterator[tuple[_Job, Distilled | DistillError]]:
        jobs = list(batch)
        # One call at a time until the distiller has answered once this pass: a bad key or
        # a stopped server then costs one request, not one per thread.
        while jobs and not self._answered:
            job = jobs.pop(0)
            result = self._call(job)
            self._answered = not (isinstance(result, Distilled) and result.calls == 0)  # junk cost no call
            yield job, result
        if self.distiller.concurrency <= 1 or len(jobs) <= 1:
            for job in jobs:
                yield job, self._call(job)
            return
        with ThreadPoolExecutor(max_workers=self.distiller.concurrency, thread_name_prefix="distill") as pool:
            futures = {pool.submit(self._call, job): job for job in jobs}
            for future in as_completed(futures):
                yield futures[future], future.result()

    def _distill_batch(
        self,
        batch: list[_Job],
        report: PassReport,
        progress: Callable[[int, int, str], None] | None,
        done: int,
        total: int,
    ) -> int:
        try:
            for job, result in self._results(batch):
                needs_upgrade = 0
                if (
                    isinstance(result, StopPass)
                    and result.reason == "budget"
                    and self.fallback is not None
                    and not _note_is_current(job)
                ):
                    report.stop_reason, report.stop_message = result.reason, str(result)
                    result = self._fallback(job)
                    needs_upgrade = 1
                    if isinstance(result, Distilled) and not result.junk:
                        report.fallback.append(job.info.id)
                if isinstance(result, Distilled):
                    self.calls += 1
                    report.calls += result.calls
                    report.tokens += result.tokens
                    try:
                        self._store(job, result, report, needs_upgrade)
                    except OSError as exc:  # an unwritable tree, a full disk: this session only
                        self._record_error(job.info, job.record, exc, job.transcript.hash, report)
                else:
                    self._record_failure(job, result, report)
                done += 1
                if progress:
                    progress(done, total, job.info.title)
        finally:
            # Notes already written are recorded even when something above went wrong.
            self._commit_batch()
        return done

    def _commit_batch(self) -> None:
        """Make the batch's notes durable, then record them: one sync, one transaction.

        A crash before the commit only means the same notes are rewritten next pass.
        """
        if not self._pending_records:
            return
        sync_files(r.note_path for r in self._pending_records if r.status == "distilled")
        with self.state.transaction():
            for record in self._pending_records:
                self.state.put(record)
        self._pending_records = []

    def _fallback(self, job: _Job) -> Distilled | DistillError:
        assert self.fallback is not None
        try:
            return self.fallback.distill(job.transcript)
        except DistillError as err:
            return err

    def _store(self, job: _Job, result: Distilled, report: PassReport, needs_upgrade: int) -> None:
        info, record = job.info, job.record
        now_ms = int(self.clock() * 1000)
        common = dict(
            max_updated=info.time_updated,
            transcript_hash=job.transcript.hash,
            attempts=0,
            failed_hash="",
            last_error="",
            distiller=result.distiller,
            prompt_version=result.prompt_version,
            needs_upgrade=needs_upgrade,
            time_done=now_ms,
        )
        if result.junk:
            self._pending_records.append(replace(record, status="junk", **common))
            report.junk.append(info.id)
            self._detail("session.junk", session_id=info.id, title=info.title)
            return
        path = self._note_path(info, record)
        atomic_write_text(path, render_note(info, result, info.time_updated), durable=False)
        self._pending_records.append(replace(record, status="distilled", note_path=str(path), **common))
        report.distilled.append(info.id)
        report.notes[info.id] = str(path)
        self._detail("session.distilled", session_id=info.id, note=str(path), distiller=result.distiller)

    def _note_path(self, info: SessionInfo, record: SessionRecord) -> Path:
        """The recorded note path if it is still there, else a fresh, deterministic one."""
        if record.note_path and Path(record.note_path).exists():
            return Path(record.note_path)
        notes = self.settings.notes
        folder = choose_note_dir(info, notes.target, notes.category, self.paths.global_root)
        return folder / note_filename(info)

    def _record_error(
        self, info: SessionInfo, record: SessionRecord, exc: Exception, transcript_hash: str, report: PassReport
    ) -> None:
        """An unexpected error for one session: log it with its type, count it as a failed pass."""
        where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
        error = DistillError(f"{type(exc).__name__}: {where}{getattr(exc, 'strerror', None) or exc}")
        self.log.warning("session.error", session_id=info.id, error=str(error))
        self._record_failure(_Job(info, record, _NoTranscript(transcript_hash)), error, report)

    def _record_failure(self, job: _Job, error: DistillError, report: PassReport) -> None:
        info, record = job.info, job.record
        message = str(error)
        if isinstance(error, StopPass):
            # Not the session's fault: it waits, untouched, for a later pass.
            report.pending.append((info.id, message))
            report.stop_reason, report.stop_message = error.reason, message
            report.stopped += 1
            if not _note_is_current(job):  # a note still current (a stale or fallback one) is kept as is
                self.state.put(replace(record, status="pending", last_error=message, max_updated=info.time_updated))
            return
        same = record.failed_hash == job.transcript.hash
        attempts = record.attempts + 1 if same else 1
        give_up = not error.retryable or attempts >= self.settings.capture.max_failed_passes
        status = "failed" if give_up else "pending"
        self.state.put(
            replace(
                record,
                status=status,
                attempts=attempts,
                max_updated=info.time_updated,  # unchanged rows are not even rebuilt next pass
                failed_hash=job.transcript.hash,
                last_error=message,
                time_done=int(self.clock() * 1000),
            )
        )
        self.state.log_error(message, info.id)
        if give_up:
            report.failed.append((info.id, message))
            self.log.error("session.failed", session_id=info.id, error=message, attempts=attempts)
        else:
            report.pending.append((info.id, message))
            self.log.warning("session.retry_later", session_id=info.id, error=message, attempts=attempts)


def _held(record: SessionRecord | None, info: SessionInfo) -> bool:
    """A session a stop left pending, whose rows have not moved since."""
    return (
        record is not None
        and record.status == "pending"
        and bool(record.last_error)
        and record.max_updated == info.time_updated
    )


@dataclass(frozen=True)
class _NoTranscript:
    """Stands in for a transcript that could not be built: only its hash is needed."""

    hash: str


def _note_is_current(job: _Job) -> bool:
    """The session already has a note (or junk verdict) for exactly this transcript."""
    return job.record.status in DONE and job.record.transcript_hash == job.transcript.hash


def open_capture(settings: Settings, paths: Paths, clock: Callable[[], float] = time.time) -> Capture:
    """Open the source, the state database and the configured distiller."""
    from daemon.capture.distill.extractive import ExtractiveDistiller

    reader = OpenCodeReader(paths.opencode_db, settings.source.busy_timeout_ms)
    state = StateDB(paths.state_db)
    if settings.llm.provider == "extractive":
        return Capture(settings, paths, reader, state, ExtractiveDistiller(), clock=clock)
    from daemon.capture.distill import factory

    try:
        distiller, identity = factory.open_model_distiller(settings.llm, state, clock)
    except BaseException:  # ConfigError (no model name): close what was opened
        reader.close()
        state.close()
        raise
    fallback = ExtractiveDistiller() if settings.llm.fallback == "extractive" else None
    return Capture(settings, paths, reader, state, distiller, Identity(*identity), fallback, clock)


def close_capture(capture: Capture) -> None:
    capture.distiller.close()
    capture.reader.close()
    capture.state.close()
