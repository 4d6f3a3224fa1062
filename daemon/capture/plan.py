"""Pure decisions of a capture pass: which sessions it looks at and what it does with each.

The state a session moves to is `daemon.capture.lifecycle`'s.

Nothing here reads a file, a database or a clock: the runner (`daemon.capture.run`)
passes in the rows, the records and the time, and acts on the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.capture.lifecycle import DONE, Hold, Identity, Status, is_stale, junk_is_stale
from daemon.memory.roots import MemoryRoot
from daemon.source import SessionInfo
from daemon.state import SessionRecord

if TYPE_CHECKING:
    from daemon.capture.treewrite import Written

__all__ = ["Action", "Identity", "PassOptions", "PassReport", "Scope", "is_stale", "plan_session"]



class Action(Enum):
    UNCHANGED = "unchanged"  # rows did not move: nothing to read
    SETTLING = "settling"  # still being written: wait
    WAIT = "wait"  # held by a stop in force, or a retry not yet due: leave it as it is
    BUILD = "build"  # read rows and build the transcript, then decide on its hash


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
    written: dict[Path, Written] = field(default_factory=dict)  # per tree: what it wrote there, what it indexed

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


def must_redo(record: SessionRecord, options: PassOptions, identity: Identity, upgrades_allowed: bool) -> bool:
    """Redo whatever the rows say: --force, a junk verdict of another distiller or prompt,
    a stale note under --redistill-stale, or an extractive fallback note awaiting its model
    (a failed upgrade waits, like any failure, until the session changes)."""
    return (
        options.force
        or junk_is_stale(record, identity)
        or (options.redistill_stale and is_stale(record, identity))
        or (upgrades_allowed and bool(record.needs_upgrade) and record.status != Status.FAILED)
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
    if unmoved and record.status in (*DONE, Status.FAILED):
        return Action.UNCHANGED
    if unmoved and options.patient and not options.force:
        if record.status == Status.HELD and hold is not None:
            return Action.WAIT  # rebuilt once the stop lifts, not on every write elsewhere
        if record.status == Status.RETRY and record.retry_at > now_ms:
            return Action.WAIT
    return Action.BUILD


DAY_MS = 86_400_000


def keeps_transcript(info: SessionInfo, now_ms: int, days: int, options: PassOptions, identity: Identity) -> bool:
    """Is this session's transcript (the scrubbed model input) written to the state folder?

    Not with `capture.transcript_days` 0; nor, at a pass over many sessions with the local
    (extractive) distiller, for a session quiet longer than that: nothing of it leaves the
    machine, and a backfill of years must not write thousands of files the retention is
    meant to bound. A pass for one session (`--session`) writes it: someone looks at it.
    A model's input is always written before the model sees it.
    """
    if days <= 0:
        return False
    if options.session_id is not None or identity.distiller != "extractive":
        return True
    return now_ms - info.time_updated <= days * DAY_MS


def needs_distiller(
    record: SessionRecord | None, transcript_hash: str, options: PassOptions, identity: Identity
) -> bool:
    """After building the transcript: is a distiller call really needed?"""
    upgrades = identity.distiller != "extractive"
    if record is None or must_redo(record, options, identity, upgrades):
        return True
    if record.transcript_hash == transcript_hash and (record.note_path or record.status == Status.JUNK):
        return False  # same transcript as the last note: never pay twice
    if record.status == Status.FAILED and record.failed_hash == transcript_hash:
        return False  # given up until the session changes
    return True
