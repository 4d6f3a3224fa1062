"""Model-server outages against real `memoryd distill` processes: a server answering 500,
one that hangs. The pass stops on its own, says why, exits 1, and loses nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from daemon.capture.lifecycle import HOLD_BASE_MS, read_hold
from daemon.config import load_settings
from daemon.state import StateDB
from tests.capture.distill.conftest import ANY_SESSION_NOTE, ModelServer, Reply, openai_reply

PASS_BOUND_S = 30  # the acceptance bound for a pass against a broken server


def run(*args: str, env: dict[str, str], timeout: float = PASS_BOUND_S) -> subprocess.CompletedProcess:
    # `timeout` bounds the pass: subprocess.run raises TimeoutExpired past it.
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def statuses() -> dict[str, str]:
    _, paths = load_settings()
    state = StateDB(paths.state_db)
    try:
        return {r.session_id: r.status for r in state.records()}
    finally:
        state.close()


@pytest.fixture
def server():
    s = ModelServer()
    s.start()
    yield s
    s.stop()


@pytest.fixture
def model_env(home, fixture_db, server) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env.update(
        MEMORYD_LLM__PROVIDER="openai",
        MEMORYD_LLM__BASE_URL=server.url + "/v1",
        MEMORYD_LLM__MODEL="m",
        MEMORYD_LLM__TIMEOUT_S="2",
        MEMORYD_CAPTURE__SETTLE_SECONDS="0",
    )
    return env


@pytest.mark.parametrize(
    "broken",
    [Reply(500, {"error": "internal error"}), Reply(hang=True), Reply(raw=b"<html>200 from a proxy</html>")],
    ids=["500", "hang", "malformed"],
)
def test_a_broken_server_stops_the_pass_holds_the_sessions_and_they_are_written_when_it_returns(
    server, model_env, broken
):
    server.default = broken
    result = run("distill", env=model_env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    # 500s: three in a row over two sessions; no answer at all: two in a row, any sessions.
    times = 2 if broken.hang else 3
    assert f"failed {times} times in a row" in result.stderr and "not reachable" in result.stderr
    # One session's 4 attempts (max_retries 3), then one more request (one at a time until the
    # server has answered): five, as docs/models.md says; not 6 sessions × 4.
    assert len(server.requests) == (2 if broken.hang else 4 + 1)
    waiting = statuses()
    assert "failed" not in waiting.values()
    assert {s for s in waiting.values() if s != "junk"} <= {"held", "retry"}

    shown = run("status", env=model_env)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert "0 failed" in shown.stdout and f"failed {times} times in a row" in shown.stdout
    if broken.raw is not None:
        # A bad answer is the server's fault: pass after pass, no session is given up on.
        for _ in range(3):
            assert run("distill", env=model_env).returncode == 1
        assert "failed" not in statuses().values()
        assert "today 0 calls" in run("status", env=model_env).stdout, "a bad answer is not charged as a call"

    server.released.set()  # the hanging requests end
    server.default = openai_reply(ANY_SESSION_NOTE)
    again = run("distill", env=model_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "6 distilled" in again.stdout
    assert set(statuses().values()) == {"distilled", "junk"}


def test_the_hold_after_a_hanging_server_lasts_from_the_last_failure(server, model_env):
    """Timed from the pass's start, a hold shorter than the pass had expired when it ended."""
    server.default = Reply(hang=True)
    model_env["MEMORYD_LLM__TIMEOUT_S"] = "1"
    result = run("distill", env=model_env)
    done_ms = int(time.time() * 1000)
    assert result.returncode == 1 and len(server.requests) == 2, result.stderr
    _, paths = load_settings()
    state = StateDB(paths.state_db)
    try:
        hold = read_hold(state)
    finally:
        state.close()
    assert hold is not None and hold.reason == "unavailable"
    # The first stop holds for HOLD_BASE_MS from the second timeout, at the pass's end; from
    # its start (two timeouts, a backoff and a process start earlier) it would end 3-4 s sooner.
    assert hold.until_ms >= done_ms + HOLD_BASE_MS - 1500
