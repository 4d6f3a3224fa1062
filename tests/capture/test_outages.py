"""Model-server outages against real `memoryd distill` processes: a server answering 500,
one that hangs. The pass stops on its own, says why, exits 1, and loses nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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


@pytest.mark.parametrize("broken", [Reply(500, {"error": "internal error"}), Reply(hang=True)], ids=["500", "hang"])
def test_a_broken_server_stops_the_pass_holds_the_sessions_and_they_are_written_when_it_returns(
    server, model_env, broken
):
    server.default = broken
    result = run("distill", env=model_env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "failed 3 times in a row" in result.stderr and "not reachable" in result.stderr
    # One session's 4 attempts, then the next two (llm.concurrency) in flight: not 6 sessions × 4.
    assert len(server.requests) <= 4 + 2
    waiting = statuses()
    assert "failed" not in waiting.values()
    assert {s for s in waiting.values() if s != "junk"} <= {"held", "retry"}

    shown = run("status", env=model_env)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert "0 failed" in shown.stdout and "failed 3 times in a row" in shown.stdout

    server.released.set()  # the hanging requests end
    server.default = openai_reply(ANY_SESSION_NOTE)
    again = run("distill", env=model_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "6 distilled" in again.stdout
    assert set(statuses().values()) == {"distilled", "junk"}
