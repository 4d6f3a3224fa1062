"""The pass's pure decisions: no database, no clock, no files."""

from __future__ import annotations

from daemon.capture import plan
from daemon.capture.plan import Action, Identity, PassOptions
from daemon.opencode.reader import SessionInfo
from daemon.state import Hold, SessionRecord

NOW = 1_800_000_000_000
INFO = SessionInfo("ses_a", "Fix deploy", "/src/app", "prj", None, NOW - 600_000, NOW - 60_000)
MODEL = Identity("openai:m", "v1")
DAEMON = PassOptions(patient=True)
HOLD = Hold("unavailable", "server down", NOW + 30_000)


def decide(record, options=DAEMON, hold=None, settle_ms=30_000):
    return plan.plan_session(INFO, record, NOW, settle_ms, options, MODEL, hold)


def test_held_sessions_wait_while_the_hold_lasts_and_a_manual_pass_tries_them():
    held = SessionRecord("ses_a", status="held", max_updated=INFO.time_updated, last_error="server down")
    assert decide(held, hold=HOLD) is Action.WAIT
    assert decide(held, hold=None) is Action.BUILD
    assert decide(held, options=PassOptions(), hold=HOLD) is Action.BUILD  # `memoryd distill`: now
    moved = SessionRecord("ses_a", status="held", max_updated=INFO.time_updated - 1)
    assert decide(moved, hold=HOLD) is Action.BUILD  # new rows: rebuilt (then held again)


def test_a_retry_waits_until_it_is_due():
    retry = SessionRecord("ses_a", status="retry", max_updated=INFO.time_updated, retry_at=NOW + 1)
    assert decide(retry) is Action.WAIT
    assert decide(SessionRecord("ses_a", status="retry", max_updated=INFO.time_updated, retry_at=NOW)) is Action.BUILD
    assert decide(retry, settle_ms=120_000) is Action.SETTLING


def test_transient_failures_back_off_and_are_never_given_up():
    record = SessionRecord("ses_a")
    delays = []
    for _ in range(8):
        record = plan.after_failure(record, INFO, "sha256:x", "HTTP 502", True, True, NOW, max_failed_passes=3)
        assert record.status == "retry"
        delays.append(record.retry_at - NOW)
    assert delays[:3] == [60_000, 120_000, 240_000] and delays[-1] == plan.RETRY_CAP_MS


def test_a_session_own_failure_is_given_up_after_max_failed_passes_and_retried_when_it_changes():
    record = SessionRecord("ses_a")
    record = plan.after_failure(record, INFO, "sha256:x", "refused", True, False, NOW, max_failed_passes=2)
    assert record.status == "retry"
    record = plan.after_failure(record, INFO, "sha256:x", "refused", True, False, NOW, max_failed_passes=2)
    assert record.status == "failed" and record.retry_at == 0
    assert not plan.needs_distiller(record, "sha256:x", PassOptions(), MODEL)
    assert plan.needs_distiller(record, "sha256:changed", PassOptions(), MODEL)
    final = plan.after_failure(SessionRecord("ses_a"), INFO, "sha256:y", "HTTP 400", False, False, NOW, 3)
    assert final.status == "failed"  # a request that cannot get better


def test_holds_grow_with_each_stop_in_a_row_and_honour_the_servers_pause():
    first = plan.next_hold("unavailable", "down", NOW, None, tomorrow_ms=NOW + 86_400_000)
    second = plan.next_hold("unavailable", "down", NOW, first, tomorrow_ms=NOW + 86_400_000)
    assert (first.until_ms - NOW, second.until_ms - NOW) == (30_000, 60_000)
    asked = plan.next_hold("rate_limit", "slow down", NOW, second, NOW + 86_400_000, wait_ms=3_600_000)
    assert asked.until_ms == NOW + 3_600_000 and asked.count == 1
    budget = plan.next_hold("budget", "spent", NOW, None, tomorrow_ms=NOW + 5)
    assert budget.until_ms == NOW + 5


def test_a_turn_the_source_says_ended_is_quiet_at_once():
    """OpenCode 2's idle row: no settle wait, with or without the plugin's notice."""
    from dataclasses import replace

    recent = replace(INFO, time_updated=NOW - 1_000)
    assert plan.plan_session(recent, None, NOW, 30_000, DAEMON, Identity(), None) is Action.SETTLING
    ended = replace(recent, ended=True)
    assert plan.plan_session(ended, None, NOW, 30_000, DAEMON, Identity(), None) is Action.BUILD
