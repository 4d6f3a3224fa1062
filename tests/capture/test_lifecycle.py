"""A session's life and the model's hold: every transition and timer, from data alone
(and, where the lifecycle reads or writes the state database, a real one)."""

from __future__ import annotations

from daemon.capture import lifecycle
from daemon.capture.lifecycle import Failure, Hold, Identity, ServerFaults, Status, Verdict
from daemon.capture.plan import PassOptions, needs_distiller
from daemon.opencode.source import SessionInfo
from daemon.state import SessionRecord, StateDB

NOW = 1_800_000_000_000
INFO = SessionInfo("ses_a", "Fix deploy", "/src/app", "prj", None, NOW - 600_000, NOW - 60_000)
MODEL = Identity("openai:m", "v1")


def fail(record, transcript="sha256:x", message="HTTP 502", retryable=True, transient=True, max_failed=3):
    return lifecycle.after_failure(record, INFO, Failure(transcript, message, retryable, transient), NOW, max_failed)


def test_transient_failures_back_off_and_are_never_given_up():
    record = SessionRecord("ses_a")
    delays = []
    for _ in range(8):
        record = fail(record)
        assert record.status == Status.RETRY
        delays.append(record.retry_at - NOW)
    assert delays[:3] == [60_000, 120_000, 240_000] and delays[-1] == lifecycle.RETRY_CAP_MS


def test_a_session_own_failure_is_given_up_after_max_failed_passes_and_retried_when_it_changes():
    record = fail(SessionRecord("ses_a"), message="refused", transient=False, max_failed=2)
    assert record.status == Status.RETRY
    record = fail(record, message="refused", transient=False, max_failed=2)
    assert record.status == Status.FAILED and record.retry_at == 0
    assert not needs_distiller(record, "sha256:x", PassOptions(), MODEL)
    assert needs_distiller(record, "sha256:changed", PassOptions(), MODEL)
    final = fail(SessionRecord("ses_a"), "sha256:y", "HTTP 400", retryable=False, transient=False)
    assert final.status == Status.FAILED  # a request that cannot get better


def test_done_forgets_every_failure_and_keeps_the_verdict():
    failing = fail(fail(SessionRecord("ses_a")))
    note = lifecycle.done(failing, INFO, Verdict("sha256:x", "openai:m", "v1", False), NOW, note_path="/t/s/n.md")
    assert (note.status, note.attempts, note.failed_hash, note.last_error, note.retry_at) == (Status.DISTILLED, 0, "", "", 0)
    assert (note.note_path, note.max_updated, note.time_done, note.needs_upgrade) == ("/t/s/n.md", INFO.time_updated, NOW, 0)
    junk = lifecycle.done(note, INFO, Verdict("sha256:y", "extractive", "e1", True), NOW)
    assert junk.status == Status.JUNK and junk.needs_upgrade == 1 and junk.transcript_hash == "sha256:y"


def test_holds_grow_with_each_stop_in_a_row_and_honour_the_servers_pause():
    first = lifecycle.next_hold("unavailable", "down", NOW, None, tomorrow_ms=NOW + 86_400_000)
    second = lifecycle.next_hold("unavailable", "down", NOW, first, tomorrow_ms=NOW + 86_400_000)
    assert (first.until_ms - NOW, second.until_ms - NOW) == (30_000, 60_000)
    asked = lifecycle.next_hold("rate_limit", "slow down", NOW, second, NOW + 86_400_000, wait_ms=3_600_000)
    assert asked.until_ms == NOW + 3_600_000 and asked.count == 1
    budget = lifecycle.next_hold("budget", "spent", NOW, None, tomorrow_ms=NOW + 5)
    assert budget.until_ms == NOW + 5


def test_a_hold_is_in_force_until_its_time_and_is_stored_whole(tmp_path):
    hold = Hold("unavailable", "server down", NOW + 1, count=2)
    assert hold.in_force(NOW) and not hold.in_force(NOW + 1)
    state = StateDB(tmp_path / "state.db")
    try:
        assert lifecycle.read_hold(state) is None
        lifecycle.write_hold(state, hold)
        assert lifecycle.read_hold(state) == hold
        assert lifecycle.hold_in_force(state, NOW) == hold and lifecycle.hold_in_force(state, NOW + 1) is None
        lifecycle.write_hold(state, None)
        assert lifecycle.read_hold(state) is None
    finally:
        state.close()


def test_what_waits_on_a_time_is_read_back_by_status(tmp_path):
    state = StateDB(tmp_path / "state.db")
    try:
        state.put(SessionRecord("ses_settling", status=Status.SETTLING))
        state.put(SessionRecord("ses_held", status=Status.HELD))
        state.put(SessionRecord("ses_due", status=Status.RETRY, retry_at=NOW))
        state.put(SessionRecord("ses_later", status=Status.RETRY, retry_at=NOW + 5_000))
        state.put(SessionRecord("ses_fallback", status=Status.DISTILLED, needs_upgrade=1))
        assert sorted(lifecycle.ids_to_revisit(state, upgrades=False, held=False, now_ms=NOW)) == ["ses_due", "ses_settling"]
        assert sorted(lifecycle.ids_to_revisit(state, upgrades=True, held=True)) == [
            "ses_due", "ses_fallback", "ses_held", "ses_later", "ses_settling",
        ]
        lifecycle.write_hold(state, Hold("unavailable", "down", NOW + 9_000))
        assert lifecycle.next_due_ms(state, NOW) == (NOW + 5_000, NOW + 9_000)
        assert lifecycle.next_due_ms(state, NOW + 10_000) == (None, None)
        counts = lifecycle.session_counts(state)
        assert counts == {"settling": 1, "held": 1, "retry": 2, "distilled": 1, "junk": 0, "failed": 0}
    finally:
        state.close()


def test_server_faults_stop_the_pass_only_for_failures_across_transcripts():
    faults = ServerFaults(threshold=3)
    # One input the server always fails on never stops it.
    assert not any(faults.failed("a") for _ in range(5))
    assert faults.failed("b")  # now two transcripts fail: the server is the problem
    assert faults.failed("c")  # and it stays so until the server answers
    faults.answered()
    assert not faults.failed("a") and not faults.failed("b") and faults.failed("c")


def test_a_pass_after_a_server_stop_probes_with_one_request():
    faults = ServerFaults(threshold=3)
    faults.begin_pass(Hold("budget", "spent", NOW))  # a spent budget says nothing of the server
    assert not faults.failed("a")
    probe = ServerFaults(threshold=3)
    probe.begin_pass(Hold("unavailable", "down", NOW - 1))  # lapsed, but the last stop was the server's
    assert probe.failed("a")
    probe.answered()
    probe.begin_pass(None)
    assert not probe.failed("a")


def test_requests_without_any_answer_stop_the_pass_sooner():
    faults = ServerFaults(threshold=3, hang_threshold=2)
    assert not faults.failed("a", hung=True)
    assert not faults.failed("a")  # an answerless request, then a 500: the hangs start again
    faults.answered()
    assert not faults.failed("a", hung=True) and faults.failed("a", hung=True)  # one transcript is enough
    assert faults.describe_stop(hung=True) == "failed 2 times in a row"
