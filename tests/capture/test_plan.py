"""The pass's pure decisions: no database, no clock, no files."""

from __future__ import annotations

from daemon.capture import plan
from daemon.capture.lifecycle import Hold, Identity
from daemon.capture.plan import Action, PassOptions
from daemon.opencode.source import SessionInfo
from daemon.state import SessionRecord

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


def test_a_turn_the_source_says_ended_is_quiet_at_once():
    """OpenCode 2's idle row: no settle wait, with or without the plugin's notice."""
    from dataclasses import replace

    recent = replace(INFO, time_updated=NOW - 1_000)
    assert plan.plan_session(recent, None, NOW, 30_000, DAEMON, Identity(), None) is Action.SETTLING
    ended = replace(recent, ended=True)
    assert plan.plan_session(ended, None, NOW, 30_000, DAEMON, Identity(), None) is Action.BUILD
