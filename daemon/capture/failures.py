"""What a pass records when a session's distillation does not end in a note or a verdict:
a stop of the whole pass (the session waits), a failure (retried, then given up), or an
unexpected error (counted as a failure, with its type and file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from daemon.capture import lifecycle
from daemon.capture.distill.base import DistillError, StopPass
from daemon.capture.lifecycle import Status
from daemon.capture.plan import PassReport
from daemon.source import SessionInfo
from daemon.state import SessionRecord, StateDB


class _Capture(Protocol):
    """What of the `Capturer` (daemon.capture.run) a failure is recorded with."""

    state: StateDB
    settings: Any  # daemon.config.Settings
    log: Any
    clock: Callable[[], float]


def error_of(exc: Exception) -> DistillError:
    """An unexpected error for one session, as a failure that names its type (and file)."""
    where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
    return DistillError(f"{type(exc).__name__}: {where}{getattr(exc, 'strerror', None) or exc}")


def record_error(
    capture: _Capture, report: PassReport, info: SessionInfo, record: SessionRecord, exc: Exception, transcript_hash: str
) -> None:
    """An unexpected error for one session: log it with its type, count it as a failed pass."""
    error = error_of(exc)
    capture.log.warning("session.error", session_id=info.id, error=str(error))
    record_failure(capture, report, info, record, transcript_hash, error)


def note_is_current(record: SessionRecord, transcript_hash: str) -> bool:
    """The session already has a note (or junk verdict) for exactly this transcript."""
    return record.status in lifecycle.DONE and record.transcript_hash == transcript_hash


def record_failure(
    capture: _Capture, report: PassReport, info: SessionInfo, record: SessionRecord, transcript_hash: str, error: DistillError
) -> None:
    """Record a session the distiller did not answer for: held by a stop, or failed."""
    message = str(error)
    if isinstance(error, StopPass):
        # Not the session's fault: it waits, untouched, for a later pass.
        report.pending.append((info.id, message))
        report.stop_reason, report.stop_message = error.reason, message
        report.stop_wait_ms = max(report.stop_wait_ms, int(error.wait_s * 1000))
        report.stopped += 1
        if not note_is_current(record, transcript_hash):  # a note still current (a stale or fallback one) is kept as is
            capture.state.put(lifecycle.held(record, info, message))
        return
    now_ms = int(capture.clock() * 1000)
    failure = lifecycle.Failure(transcript_hash, message, error.retryable, error.transient)
    record = lifecycle.after_failure(record, info, failure, now_ms, capture.settings.capture.max_failed_passes)
    capture.state.put(record)
    capture.state.log_error(message, info.id)
    if error.transient:
        report.server_failures += 1
        report.server_error = message
    if record.status == Status.FAILED:
        report.failed.append((info.id, message))
        capture.log.error("session.failed", session_id=info.id, error=message, attempts=record.attempts)
    else:
        report.pending.append((info.id, message))
        capture.log.warning(
            "session.retry_later", session_id=info.id, error=message, attempts=record.attempts, retry_at=record.retry_at
        )
