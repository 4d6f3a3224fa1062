"""Pure decisions of a capture pass: what to do with a session, and the state it moves to.

Nothing here reads a file, a database or a clock: the runner (`daemon.capture.run`)
passes in the rows, the records and the time, and acts on the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum

from daemon.capture.distill.extractive import EXTRACTIVE_VERSION
from daemon.capture.rejudge import junk_is_stale
from daemon.memory.roots import MemoryRoot
from daemon.opencode.source import SessionInfo
from daemon.state import Hold, SessionRecord

DONE = ("distilled", "junk")
RETRY_BASE_MS = 60_000  # a session's first retry waits a minute, then twice as long each time
RETRY_CAP_MS = 3_600_000
HOLD_BASE_MS = 30_000  # a stopped server is tried again after 30 s, then 60 s, … up to 5 minutes
HOLD_CAP_MS = 300_000


class Action(Enum):
    UNCHANGED = "unchanged"  # rows did not move: nothing to read
    SETTLING = "settling"  # still being written: wait
    WAIT = "wait"  # held by a stop in force, or a retry not yet due: leave it as it is
    BUILD = "build"  # read rows and build the transcript, then decide on its hash


@dataclass(frozen=True)
class Identity:
    """Which distiller, with which prompt, makes notes now."""

    distiller: str = "extractive"
    prompt_version: str = EXTRACTIVE_VERSION


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
    # The daemon waits out holds and retry backoff; a manual pass is the user asking now.
    patient: bool = False
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
    pending: list[tuple[str, str]] = field(default_factory=list)  # held or retry, and why
    would_distill: list[str] = field(default_factory=list)  # --dry-run
    notes: dict[str, str] = field(default_factory=dict)  # session id → note path written
    fallback: list[str] = field(default_factory=list)  # got an extractive note because the budget is spent
    calls: int = 0
    tokens: int = 0
    stop_reason: str = ""  # why the pass stopped calling the model: StopPass.reason
    stop_message: str = ""
    stop_wait_ms: int = 0  # the pause the server asked for when it stopped the pass
    server_failures: int = 0  # sessions left to retry because the server failed (5xx, timeouts)
    server_error: str = ""  # the last such failure
    stopped: int = 0  # sessions the stop left for a later pass (also in `pending`)
    warnings: list[str] = field(default_factory=list)
    next_settled_ms: int | None = None  # when the soonest settling session will have been quiet
    interrupted: bool = False  # stopped early on request (daemon shutdown)
    seconds: float = 0.0
    roots: list[MemoryRoot] = field(default_factory=list)  # the trees the pass wrote into: refresh these

    @property
    def exit_code(self) -> int:
        # A spent budget is the configured behaviour; any other stop left work undone.
        return 1 if self.failed or self.server_failures or self.stop_reason not in ("", "budget") else 0


@dataclass(frozen=True)
class Scope:
    """What a pass asks the source for: one session, every session, or the changed ones."""

    session_id: str | None  # only this session
    every_session: bool  # all sessions: no watermark probe
    complete: bool  # the pass covers every session: the watermark may move after it


def plan_scope(options: PassOptions, watermark: int) -> Scope:
    """Which sessions a pass looks at, from its options and the watermark alone."""
    complete = options.session_id is None and options.limit is None and not options.offset
    every = options.session_id is None and (
        options.force or options.full_scan or watermark == 0 or not complete
    )
    return Scope(options.session_id, every, complete)


def parents_to_load(infos: list[SessionInfo]) -> list[str]:
    """Parents of the subagent sessions found that were not found themselves."""
    found = {i.id for i in infos if not i.parent_id}
    return sorted({i.parent_id for i in infos if i.parent_id and i.parent_id not in found})


def root_sessions(infos: list[SessionInfo], parents: list[SessionInfo], options: PassOptions) -> list[SessionInfo]:
    """The root sessions to consider, oldest first, cut to the pass's offset and limit.

    Subagent sessions are part of their parent's note: a moved child moves its parent.
    """
    roots = {i.id: i for i in (*infos, *parents) if not i.parent_id}
    ordered = sorted(roots.values(), key=lambda s: (s.time_created, s.id))
    if options.offset:
        ordered = ordered[options.offset :]
    return ordered if options.limit is None else ordered[: options.limit]


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
    """Redo whatever the rows say: --force, a junk verdict of another distiller or prompt,
    a stale note under --redistill-stale, or an extractive fallback note awaiting its model
    (a failed upgrade waits, like any failure, until the session changes)."""
    return (
        options.force
        or junk_is_stale(record, (identity.distiller, identity.prompt_version))
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
    hold: Hold | None,
) -> Action:
    """Decide, from data alone, what a pass does with one session.

    `hold` is the stop in force for this pass (None when the model may be called).
    """
    # A turn the source says ended (OpenCode 2's idle row) is quiet now, as is one the
    # plugin said went idle.
    if now_ms - info.time_updated < settle_ms and info.id not in options.idle and not info.ended:
        return Action.SETTLING
    upgrades = identity.distiller != "extractive"
    if record is None or must_redo(record, options, identity, upgrades):
        return Action.BUILD
    unmoved = record.max_updated == info.time_updated
    if unmoved and record.status in (*DONE, "failed"):
        return Action.UNCHANGED
    if unmoved and options.patient and not options.force:
        if record.status == "held" and hold is not None:
            return Action.WAIT  # rebuilt once the stop lifts, not on every write elsewhere
        if record.status == "retry" and record.retry_at > now_ms:
            return Action.WAIT
    return Action.BUILD


def needs_distiller(
    record: SessionRecord | None, transcript_hash: str, options: PassOptions, identity: Identity
) -> bool:
    """After building the transcript: is a distiller call really needed?"""
    upgrades = identity.distiller != "extractive"
    if record is None or must_redo(record, options, identity, upgrades):
        return True
    if record.transcript_hash == transcript_hash and (record.note_path or record.status == "junk"):
        return False  # same transcript as the last note: never pay twice
    if record.status == "failed" and record.failed_hash == transcript_hash:
        return False  # given up until the session changes
    return True


# -- state transitions ---------------------------------------------------------------


def settling(record: SessionRecord, info: SessionInfo) -> SessionRecord:
    """Still being written: whatever failed or stopped before is moot for the new rows."""
    return replace(record, status="settling", project_dir=info.directory, title=info.title, last_error="", retry_at=0)


def unchanged_transcript(record: SessionRecord, info: SessionInfo) -> SessionRecord:
    """Rows moved but the transcript did not: the record's verdict stands for the new rows."""
    if record.status == "failed":
        status = "failed"
    else:
        status = "distilled" if record.note_path else "junk"
    return replace(record, max_updated=info.time_updated, status=status, last_error="", retry_at=0)


def held(record: SessionRecord, info: SessionInfo, message: str) -> SessionRecord:
    """Left by a stop of the whole pass: no attempt is charged to the session."""
    return replace(record, status="held", last_error=message, max_updated=info.time_updated, retry_at=0)


def after_failure(
    record: SessionRecord,
    info: SessionInfo,
    transcript_hash: str,
    message: str,
    retryable: bool,
    transient: bool,
    now_ms: int,
    max_failed_passes: int,
) -> SessionRecord:
    """The session's own distillation failed: retry later with backoff, or give up.

    A transient failure (the server's 5xx or timeout, not this transcript's fault) is
    never given up on: it retries with a growing pause however often it happens.
    """
    same = record.failed_hash == transcript_hash
    attempts = record.attempts + 1 if same else 1
    give_up = not transient and (not retryable or attempts >= max_failed_passes)
    delay = min(RETRY_BASE_MS * 2 ** min(attempts - 1, 16), RETRY_CAP_MS)
    return replace(
        record,
        status="failed" if give_up else "retry",
        attempts=attempts,
        max_updated=info.time_updated,  # unchanged rows are not even rebuilt next pass
        failed_hash=transcript_hash,
        last_error=message,
        time_done=now_ms,
        retry_at=0 if give_up else now_ms + delay,
    )


def next_hold(
    reason: str, message: str, now_ms: int, previous: Hold | None, tomorrow_ms: int, wait_ms: int = 0
) -> Hold:
    """How long a stop keeps the model alone: till tomorrow for a spent budget, else a
    pause that doubles with each stop in a row (a server coming back, a key fixed), or
    the pause the server asked for when that is longer."""
    if reason == "budget":
        return Hold(reason, message, tomorrow_ms)
    count = previous.count + 1 if previous is not None and previous.reason == reason else 1
    delay = min(HOLD_BASE_MS * 2 ** min(count - 1, 16), HOLD_CAP_MS)
    return Hold(reason, message, now_ms + max(delay, wait_ms), count)


def local_midnight_after_ms(now_ms: int) -> int:
    """Epoch ms of the next local midnight (when the daily budget renews)."""
    tomorrow = datetime.fromtimestamp(now_ms / 1000).date() + timedelta(days=1)
    return int(datetime.combine(tomorrow, datetime.min.time()).timestamp() * 1000)
