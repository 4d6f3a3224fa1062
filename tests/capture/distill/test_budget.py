"""The daily budget: exact call caps, token caps, local days, thread safety, state persistence."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from daemon.capture.distill import make_distiller
from daemon.capture.distill.base import DistillError, StopPass
from daemon.capture.distill.budget import Budget, Limits, Spend
from daemon.state import StateDB

from .conftest import NOTE, Reply, llm_settings, openai_reply

NOON = datetime(2026, 3, 14, 12, 0).timestamp()  # local time
DAY = 24 * 3600


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_no_limits_never_stops(state_db):
    budget = Budget(state_db, clock=Clock(NOON))
    for _ in range(100):
        with budget.reserve(10_000):
            budget.record(1, 10_000)
    assert budget.today() == Spend(100, 1_000_000, Limits(0, 0))


def test_call_budget_n_makes_exactly_n_calls_then_stops(server, state_db, sleeps, work_transcript):
    budget = Budget(state_db, daily_calls=3, clock=Clock(NOON))
    server.default = openai_reply(NOTE, usage={"total_tokens": 100})
    d = make_distiller(llm_settings("openai", server.url + "/v1"), {}, budget, sleep=sleeps)
    try:
        for _ in range(3):
            assert not d.distill(work_transcript).junk
        with pytest.raises(StopPass, match="daily model call budget reached: 3 of 3") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.reason == "budget"
    assert len(server.requests) == 3
    calls, tokens, limits = budget.today()
    assert (calls, tokens, limits) == (3, 300, Limits(3, 0))


def test_retries_of_a_failed_request_are_not_extra_calls(server, state_db, sleeps, work_transcript):
    budget = Budget(state_db, daily_calls=1, clock=Clock(NOON))
    server.then(Reply(500, {"error": "boom"}), openai_reply(NOTE, usage={"total_tokens": 10}))
    d = make_distiller(llm_settings("openai", server.url + "/v1"), {}, budget, sleep=sleeps)
    try:
        d.distill(work_transcript)
    finally:
        d.close()
    assert budget.today().calls == 1 and len(server.requests) == 2


def test_a_failed_call_releases_its_hold(server, state_db, sleeps, work_transcript):
    budget = Budget(state_db, daily_calls=1, clock=Clock(NOON))
    server.then(Reply(400, {"error": "bad"}), openai_reply(NOTE))
    d = make_distiller(llm_settings("openai", server.url + "/v1"), {}, budget, sleep=sleeps)
    try:
        with pytest.raises(DistillError):
            d.distill(work_transcript)
        assert not d.distill(work_transcript).junk  # the 400 was not spent
    finally:
        d.close()


def test_an_answered_call_is_spent_even_when_its_answer_is_useless(server, state_db, sleeps, work_transcript):
    budget = Budget(state_db, daily_calls=5, clock=Clock(NOON))
    server.then(openai_reply("no headings here", usage={"total_tokens": 40}))
    d = make_distiller(llm_settings("openai", server.url + "/v1"), {}, budget, sleep=sleeps)
    try:
        with pytest.raises(DistillError):
            d.distill(work_transcript)
    finally:
        d.close()
    calls, tokens, _ = budget.today()
    assert calls == 1 and tokens == 40


def test_a_malformed_answer_is_not_charged(server, state_db, sleeps, work_transcript):
    """An HTTP 200 that is not JSON (a proxy's error page) is the server failing, not a call."""
    budget = Budget(state_db, daily_calls=5, clock=Clock(NOON))
    server.default = Reply(raw=b"<html>oops</html>")
    d = make_distiller(llm_settings("openai", server.url + "/v1", max_retries=2), {}, budget, sleep=sleeps)
    try:
        with pytest.raises(DistillError, match="malformed JSON"):
            d.distill(work_transcript)
    finally:
        d.close()
    assert len(server.requests) == 3 and budget.today()[0] == 0


def test_token_budget_refuses_a_call_that_would_cross_it(state_db):
    budget = Budget(state_db, daily_tokens=1000, clock=Clock(NOON))
    with budget.reserve(600):
        budget.record(1, 500)
    budget.check(500)  # 500 + 500 fits exactly
    with pytest.raises(StopPass, match="500 of 1000 tokens used today, the next call needs about 501") as err:
        budget.check(501)
    assert err.value.reason == "budget"
    budget.record(1, 500)
    with pytest.raises(StopPass, match="token budget"):
        budget.check(0)


def test_the_token_budget_stops_a_real_pass(server, state_db, sleeps, work_transcript):
    # Two calls spend 1400; a third needs its prompt's estimate (system prompt + transcript, ~1270) + 100 out.
    llm = llm_settings("openai", server.url + "/v1", max_output_tokens=100, daily_token_budget=2200)
    budget = Budget.from_settings(state_db, llm, clock=Clock(NOON))
    server.default = openai_reply(NOTE, usage={"total_tokens": 700})
    d = make_distiller(llm, {}, budget, sleep=sleeps)
    try:
        d.distill(work_transcript)
        d.distill(work_transcript)
        with pytest.raises(StopPass, match="token budget"):
            d.distill(work_transcript)  # 1400 spent: 1400 + the third call's estimate is over 2200
    finally:
        d.close()
    assert len(server.requests) == 2


def test_a_new_local_day_starts_fresh(state_db):
    clock = Clock(NOON)
    budget = Budget(state_db, daily_calls=1, clock=clock)
    with budget.reserve():
        budget.record(1, 10)
    with pytest.raises(StopPass):
        budget.check()
    clock.now += DAY
    budget.check()
    assert budget.today() == Spend(0, 0, Limits(1, 0))
    assert state_db.spend("2026-03-14") == (1, 10)


def test_spend_survives_a_restart(tmp_path):
    db = StateDB(tmp_path / "s.db")
    Budget(db, clock=Clock(NOON)).record(2, 20)
    db.close()
    db = StateDB(tmp_path / "s.db")
    try:
        assert Budget(db, daily_calls=2, clock=Clock(NOON)).today().calls == 2
        with pytest.raises(StopPass):
            Budget(db, daily_calls=2, clock=Clock(NOON)).check()
    finally:
        db.close()


def test_holds_keep_parallel_callers_within_the_cap(state_db):
    budget = Budget(state_db, daily_calls=10, clock=Clock(NOON))
    granted = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def worker():
        start.wait()
        while True:
            try:
                with budget.reserve(5):
                    with lock:
                        granted.append(1)
                    budget.record(1, 5)
            except StopPass:
                return

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 10 and budget.today() == Spend(10, 50, Limits(10, 0))


def test_a_finished_call_is_not_counted_twice_by_another_thread(state_db):
    """Recording through the reservation releases its hold in the same step."""
    budget = Budget(state_db, daily_calls=2)
    with budget.reserve() as reservation:
        reservation.record(1, 10)
        budget.check()  # one spent, none in flight: the second call still fits
    with budget.reserve() as reservation:
        reservation.record(1, 10)
    with pytest.raises(StopPass):
        budget.check()
