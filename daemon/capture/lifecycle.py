"""A session's life in memoryd, and the model's: every status, every transition, every timer.

One session record moves `settling` → (`distilled` | `junk`), or to `retry` (its own
distillation failed: tried again at `retry_at`, with a growing pause) and in the end
`failed` (given up until the session changes), or to `held` (a stop of the whole pass:
budget spent, bad key, server down; no attempt charged). The model itself is held by a
`Hold` (stored in the state database's meta) until it lapses; server failures in a row
(`ServerFaults`) are what turn into such a hold.

Transitions are pure (record in, record out); the few functions that read or write
the state database say so. `daemon.state` only stores what this module decides.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from daemon.capture.distill.extractive import EXTRACTIVE_VERSION
from daemon.source import SessionInfo
from daemon.scrub import redact
from daemon.state import SessionRecord, StateDB


class Status(StrEnum):
    SETTLING = "settling"  # new or changed, waiting until its rows are quiet
    HELD = "held"  # left by a stop of the whole pass, until the hold lifts
    RETRY = "retry"  # its own distillation failed; tried again at retry_at
    DISTILLED = "distilled"  # a note for this transcript
    JUNK = "junk"  # no real work in it: no note
    FAILED = "failed"  # given up until the session changes


DONE = (Status.DISTILLED, Status.JUNK)
WAITING = (Status.SETTLING, Status.HELD, Status.RETRY)

RETRY_BASE_MS = 60_000  # a session's first retry waits a minute, then twice as long each time
RETRY_CAP_MS = 3_600_000
HOLD_BASE_MS = 30_000  # a stopped server is tried again after 30 s, then 60 s, … up to 5 minutes
HOLD_CAP_MS = 300_000
SERVER_FAULTS_TO_STOP = 3  # server failures in a row (any session, any thread) that stop the pass
# Requests in a row that got no answer within llm.timeout_s (any session): a hanging
# server costs about this many timeouts per pass, not every session's retries.
HANGS_TO_STOP = 2
_HOLD_KEY = "hold"  # meta key of the stored hold


@dataclass(frozen=True)
class Identity:
    """Which distiller, with which prompt, makes notes now."""

    distiller: str = "extractive"
    prompt_version: str = EXTRACTIVE_VERSION


# -- the model's hold ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hold:
    """A stop of the whole pass: no model call until `until_ms`."""

    reason: str  # StopPass.reason: budget | auth | unavailable | rate_limit | config | …
    message: str
    until_ms: int
    count: int = 1  # consecutive stops: the next one waits longer

    def in_force(self, now_ms: float) -> bool:
        """True while the hold still keeps the model alone."""
        return self.until_ms > now_ms

    @property
    def server_down(self) -> bool:
        """The hold a run of server failures left (the next pass probes with one request)."""
        return self.reason == "unavailable"


def read_hold(state: StateDB) -> Hold | None:
    """The hold in force, or last in force, or None."""
    raw = state.get_meta(_HOLD_KEY)
    if not raw:
        return None
    data = json.loads(raw)
    return Hold(data["reason"], data["message"], int(data["until_ms"]), int(data.get("count", 1)))


def hold_in_force(state: StateDB, now_ms: float) -> Hold | None:
    """The hold that keeps the model alone at `now_ms`, or None."""
    hold = read_hold(state)
    return hold if hold is not None and hold.in_force(now_ms) else None


def write_hold(state: StateDB, hold: Hold | None) -> None:
    """Store the hold (None: lift it); its message is scrubbed, as every row state.db keeps."""
    state.set_meta(_HOLD_KEY, json.dumps({**asdict(hold), "message": redact(hold.message)}) if hold else "")


def next_hold(reason: str, message: str, now_ms: int, previous: Hold | None, tomorrow_ms: int, wait_ms: int = 0) -> Hold:
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


def update_hold(state: StateDB, report: Any, now_ms: int, stopped_ms: Callable[[], int], log: Any) -> None:
    """After a pass: record a new stop (how long the model is left alone), or lift an old one.

    `report` is the pass's `PassReport`; `stopped_ms` gives the time of the last failure.
    """
    previous = read_hold(state)
    if report.stop_reason:
        hold = next_hold(
            report.stop_reason, report.stop_message, stopped_ms(), previous, local_midnight_after_ms(now_ms),
            report.stop_wait_ms,
        )  # fmt: skip
        write_hold(state, hold)
        log.warning("model.held", reason=hold.reason, until_ms=hold.until_ms, error=hold.message)
    elif previous is not None and report.calls:
        write_hold(state, None)
        log.info("model.resumed", reason=previous.reason)


class ServerFaults:
    """Model-server failures in a row (5xx, timeouts, no connection, malformed answers), across threads.

    `threshold` in a row, for at least two different transcripts, and the failure that
    makes it stops the pass: a dead server costs one session's retries and one more
    request, not every session's retries. One transcript the server always fails on (a
    500 for that input) never stops it: the others go on. Requests that got no answer
    at all stop it sooner: `hang_threshold` in a row, for any transcripts, since each
    one already cost a whole llm.timeout_s. Any answer ends the run. A pass that starts
    after such a stop (its hold stored, lapsed or not) is a probe: its first failure
    stops it at once, so a server still down costs one request.
    """

    def __init__(self, threshold: int = SERVER_FAULTS_TO_STOP, hang_threshold: int = HANGS_TO_STOP) -> None:
        self.threshold = threshold
        self.hang_threshold = hang_threshold
        self._failures = 0
        self._hangs = 0
        self._keys: set[str] = set()
        self._probing = False
        self._lock = threading.Lock()

    def begin_pass(self, last_hold: Hold | None) -> None:
        """A pass starts: after a server stop (the stored hold says so), it only probes."""
        with self._lock:
            self._probing = self._probing or (last_hold is not None and last_hold.server_down)

    def answered(self) -> None:
        with self._lock:
            self._failures, self._hangs, self._keys, self._probing = 0, 0, set(), False

    def failed(self, key: str, hung: bool = False) -> bool:
        """Count one failure for transcript `key` (`hung`: no answer at all); return True
        when it stops the pass."""
        with self._lock:
            self._failures += 1
            self._hangs = self._hangs + 1 if hung else 0
            self._keys.add(key)
            stop = self._hangs >= self.hang_threshold or (self._failures >= self.threshold and len(self._keys) >= 2)
            self._probing = self._probing or stop  # stays so until the server answers
            return self._probing

    def describe_stop(self, hung: bool) -> str:
        """What the run of failures that stopped the pass was, for its message."""
        if self._failures < min(self.threshold, self.hang_threshold if hung else self.threshold):
            return "failed again after its last stop"
        return f"failed {self.hang_threshold if hung else self.threshold} times in a row"


# -- a session's transitions (pure) ------------------------------------------------------


def settling(record: SessionRecord, info: SessionInfo) -> SessionRecord:
    """Still being written: whatever failed or stopped before is moot for the new rows."""
    return replace(
        record, status=Status.SETTLING, project_dir=info.directory, title=info.title, last_error="", retry_at=0
    )


def unchanged_transcript(record: SessionRecord, info: SessionInfo) -> SessionRecord:
    """Rows moved but the transcript did not: the record's verdict stands for the new rows."""
    if record.status == Status.FAILED:
        status = Status.FAILED
    else:
        status = Status.DISTILLED if record.note_path else Status.JUNK
    return replace(record, max_updated=info.time_updated, status=status, last_error="", retry_at=0)


def held(record: SessionRecord, info: SessionInfo, message: str) -> SessionRecord:
    """Left by a stop of the whole pass: no attempt is charged to the session."""
    return replace(record, status=Status.HELD, last_error=message, max_updated=info.time_updated, retry_at=0)


@dataclass(frozen=True)
class Verdict:
    """What a distiller said about one transcript, as the record keeps it."""

    transcript_hash: str
    distiller: str
    prompt_version: str
    needs_upgrade: bool  # the extractive fallback's note, awaiting the model


def done(record: SessionRecord, info: SessionInfo, verdict: Verdict, now_ms: int, note_path: str = "") -> SessionRecord:
    """A note (`note_path`) or a junk verdict (no path) for this transcript: every failure is forgotten."""
    return replace(
        record,
        status=Status.DISTILLED if note_path else Status.JUNK,
        note_path=note_path or record.note_path,
        max_updated=info.time_updated,
        transcript_hash=verdict.transcript_hash,
        attempts=0,
        failed_hash="",
        last_error="",
        retry_at=0,
        distiller=verdict.distiller,
        prompt_version=verdict.prompt_version,
        needs_upgrade=int(verdict.needs_upgrade),
        time_done=now_ms,
    )


@dataclass(frozen=True)
class Failure:
    """A session's own distillation failed: why, and whether a later pass may do better."""

    transcript_hash: str
    message: str
    retryable: bool
    transient: bool  # the server's state (5xx, a timeout), not this transcript's


def after_failure(record: SessionRecord, info: SessionInfo, failure: Failure, now_ms: int, max_failed_passes: int) -> SessionRecord:
    """Retry later with backoff, or give up.

    A transient failure is never given up on: it retries with a growing pause however
    often it happens.
    """
    same = record.failed_hash == failure.transcript_hash
    attempts = record.attempts + 1 if same else 1
    give_up = not failure.transient and (not failure.retryable or attempts >= max_failed_passes)
    return replace(
        record,
        status=Status.FAILED if give_up else Status.RETRY,
        attempts=attempts,
        max_updated=info.time_updated,  # unchanged rows are not even rebuilt next pass
        failed_hash=failure.transcript_hash,
        last_error=failure.message,
        time_done=now_ms,
        retry_at=0 if give_up else now_ms + retry_delay_ms(attempts),
    )


def retry_delay_ms(attempts: int) -> int:
    """The pause before a session's next try after `attempts` failed ones."""
    return min(RETRY_BASE_MS * 2 ** min(attempts - 1, 16), RETRY_CAP_MS)


# -- staleness ------------------------------------------------------------------------------


def is_stale(record: SessionRecord, identity: Identity) -> bool:
    """A note made by another distiller or prompt than the configured model.

    Without a model nothing is stale: the extractive distiller never replaces a model's
    note unless forced.
    """
    return (
        identity.distiller != "extractive"
        and record.status == Status.DISTILLED
        and (record.distiller, record.prompt_version) != (identity.distiller, identity.prompt_version)
    )


def junk_is_stale(record: SessionRecord, identity: Identity) -> bool:
    """A junk verdict given by another distiller or prompt version than `identity`."""
    return record.status == Status.JUNK and (record.distiller, record.prompt_version) != (
        identity.distiller,
        identity.prompt_version,
    )


# -- what waits on a time (reads the state database) -----------------------------------------


def ids_to_revisit(state: StateDB, upgrades: bool, held: bool = True, now_ms: int | None = None) -> list[str]:
    """Sessions a pass must look at even if their rows did not move.

    Settling ones; with `held`, those a stop left; retries that are due (all of them
    when `now_ms` is None); and, when a model is configured (`upgrades`), extractive
    fallback notes waiting for their upgrade.
    """
    statuses = [Status.SETTLING, Status.HELD] if held else [Status.SETTLING]
    return state.session_ids(statuses, retry=Status.RETRY, retry_due_by=now_ms, needs_upgrade=upgrades)


def next_due_ms(state: StateDB, now_ms: int) -> tuple[int | None, int | None]:
    """(soonest retry still to come, end of the hold in force): when a pass has work again."""
    hold = hold_in_force(state, now_ms)
    return state.soonest_retry_at(Status.RETRY, after_ms=now_ms), hold.until_ms if hold else None


def session_counts(state: StateDB) -> dict[str, int]:
    """Sessions per status, every status named (0 when none)."""
    stored: Mapping[str, int] = state.counts()
    return {status.value: stored.get(status, 0) for status in Status}


# -- settling by memoryd's own clock ------------------------------------------------------


class SettleWatch:
    """When memoryd itself last saw each settling session change, on the monotonic clock.

    Rows carry the writer's wall-clock times: written while the clock was a month ahead,
    they look a month from quiet once it is set right. A session memoryd has seen
    unchanged for `settle_s` by its own clock is quiet, whatever its rows say.
    """

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, float]] = {}  # session id → (its time_updated, when first seen so)

    def saw(self, sessions: Iterable[tuple[str, int]], now: float) -> None:
        """The settling sessions a pass left, with their rows' newest time: only these are kept."""
        self._seen = {sid: self._seen[sid] if self._seen.get(sid, (None,))[0] == updated else (updated, now)
                      for sid, updated in sessions}

    def quiet(self, settle_s: float, now: float) -> frozenset[str]:
        """The sessions seen unchanged for `settle_s` (the next pass distills them)."""
        return frozenset(sid for sid, (_, since) in self._seen.items() if now - since >= settle_s)
