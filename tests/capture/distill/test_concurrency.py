"""Two threads share one distiller, one client, one budget: the cap stays exact."""

from __future__ import annotations

import threading

from daemon.capture.distill import make_distiller
from daemon.capture.distill.base import StopPass
from daemon.capture.distill.budget import Budget

from .conftest import NOTE, llm_settings, openai_reply


def run_then_close(threads: list[threading.Thread], distiller) -> None:
    """Run the threads to the end, then close the distiller whatever happened."""
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        distiller.close()


def test_two_threads_share_the_client_and_the_budget(server, state_db, sleeps, work_transcript):
    budget = Budget(state_db, daily_calls=5, clock=lambda: 1_750_000_000.0)
    reply = openai_reply(NOTE, usage={"total_tokens": 100})
    reply.delay = 0.15  # long enough for the two threads' calls to overlap
    server.default = reply
    d = make_distiller(llm_settings("openai", server.url + "/v1", concurrency=2), {}, budget, sleep=sleeps)
    results: list[str] = []
    lock = threading.Lock()

    def worker():
        for _ in range(5):
            try:
                out = d.distill(work_transcript)
                outcome = "note" if not out.junk else "junk"
            except StopPass as exc:
                outcome = exc.reason
            with lock:
                results.append(outcome)

    threads = [threading.Thread(target=worker, name=f"distill-{i}") for i in range(2)]
    run_then_close(threads, d)
    assert sorted(results) == ["budget"] * 5 + ["note"] * 5
    assert len(server.requests) == 5
    assert server.max_active == 2  # the calls really ran in parallel
    assert budget.today().calls == 5 and budget.today().tokens == 500


def test_concurrency_bounds_parallel_calls(server, sleeps, work_transcript):
    reply = openai_reply(NOTE)
    reply.delay = 0.1
    server.default = reply
    d = make_distiller(llm_settings("openai", server.url + "/v1", concurrency=1), {}, None, sleep=sleeps)
    threads = [threading.Thread(target=d.distill, args=(work_transcript,)) for _ in range(3)]
    run_then_close(threads, d)
    assert len(server.requests) == 3 and server.max_active == 1
