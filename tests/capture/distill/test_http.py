"""The shared HTTP client (daemon/capture/distill/http.py) against a real server on 127.0.0.1.

A minimal wire format stands in for OpenAI/Anthropic, so these tests pin down what the
client itself does: headers, retries and their pauses, timeouts, auth, cancellation, the
connection bound and the breaker.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from daemon.capture.distill.base import DistillError, StopPass
from daemon.capture.distill.http import ModelDistiller, make_client

from .conftest import FAKE_KEY, NOTE, Reply, llm_settings

NOW = 1_750_000_000.0


class PlainDialect:
    """The smallest wire format: {"note": ..., "tokens": ...} back for a flat request."""

    provider = "plain"

    def endpoint(self, base_url: str) -> str:
        return base_url + "/chat"

    def key_env(self, base_url: str) -> str:
        return "MODEL_KEY"

    def headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def body(self, llm: Any, system: str, user: str) -> dict[str, Any]:
        return {"model": llm.model, "system": system, "user": user}

    def usage(self, data: Any) -> int | None:
        return data.get("tokens") if isinstance(data, dict) else None

    def text(self, data: Any) -> str:
        if not isinstance(data, dict) or "note" not in data:
            raise ValueError("the answer has no 'note'")
        return data["note"]


def ok(tokens: int = 42) -> Reply:
    return Reply(json={"note": NOTE, "tokens": tokens})


def build(server, sleeps, api_key: str = FAKE_KEY, **overrides) -> ModelDistiller:
    llm = llm_settings("openai", server.url, **overrides)
    return ModelDistiller(
        llm, PlainDialect(), api_key=api_key, key_env="MODEL_KEY", client=make_client(llm), sleep=sleeps,
        clock=lambda: NOW,
    )


@pytest.fixture
def distiller(server, sleeps):
    d = build(server, sleeps)
    yield d
    d.close()


def test_a_call_carries_the_user_agent_the_key_and_configured_headers(server, sleeps, work_transcript):
    d = build(server, sleeps, extra_headers={"Authorization": "Bearer gateway-token", "X-Team": "infra"})
    server.then(ok(tokens=42))
    try:
        result = d.distill(work_transcript)
    finally:
        d.close()
    [seen] = server.requests
    assert seen.path == "/chat"
    assert seen.headers["user-agent"] == "memoryd" and seen.headers["content-type"] == "application/json"
    # A configured header replaces the wire format's own, whatever its case: sent once.
    assert [v for k, v in seen.header_lines if k == "authorization"] == ["Bearer gateway-token"]
    assert seen.headers["x-team"] == "infra"
    assert seen.body["model"] == "qwen3:8b" and "scripts/deploy.sh" in seen.body["user"]
    assert result.body.startswith("## What Was Worked On")
    assert (result.calls, result.tokens, result.distiller) == (1, 42, "plain:qwen3:8b")


def test_5xx_is_retried_with_growing_pauses_then_the_answer_is_used(server, distiller, sleeps, work_transcript):
    server.then(Reply(500, {"error": "boom"}), Reply(502, {"error": {"message": "bad gateway"}}), ok())
    result = distiller.distill(work_transcript)
    assert not result.junk and result.body.startswith("## What Was Worked On")
    assert len(server.requests) == 3
    first, second = sleeps
    assert 1 <= first <= 2 and 2 <= second <= 3  # exponential backoff, up to 1 s of jitter


def test_5xx_past_max_retries_fails_this_session_for_a_later_pass(server, sleeps, work_transcript):
    d = build(server, sleeps, max_retries=1)
    server.default = Reply(500, {"error": "still broken"})
    try:
        with pytest.raises(DistillError, match=r"HTTP 500 \(still broken\); gave up after 2 attempts") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.retryable and not isinstance(err.value, StopPass)
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_429_waits_as_long_as_retry_after_asks(server, distiller, sleeps, work_transcript):
    server.then(Reply(429, {"error": "slow down"}, headers={"Retry-After": "4"}), ok())
    assert not distiller.distill(work_transcript).junk
    assert sleeps == [4.0] and len(server.requests) == 2


def test_429_without_retry_after_backs_off(server, distiller, sleeps, work_transcript):
    server.then(Reply(429, {"error": "slow down"}), ok())
    assert not distiller.distill(work_transcript).junk
    [wait] = sleeps
    assert 1 <= wait <= 2


def test_a_server_that_does_not_answer_in_time_is_retried_once_then_reported(server, sleeps, work_transcript):
    d = build(server, sleeps, timeout_s=0.2, max_retries=3)
    server.default = Reply(hang=True)
    try:
        with pytest.raises(StopPass, match=r"no answer within 0.2 s \(llm.timeout_s\)\); is it hanging") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.retryable and len(server.requests) == 2


def test_401_stops_the_pass_at_once_naming_the_key_variable(server, distiller, sleeps, work_transcript):
    server.then(Reply(401, {"error": {"message": f"invalid key {FAKE_KEY}"}}))
    with pytest.raises(StopPass) as err:
        distiller.distill(work_transcript)
    message = str(err.value)
    assert err.value.reason == "auth"
    assert "rejected the API key from $MODEL_KEY (HTTP 401" in message and "llm.api_key_env" in message
    assert FAKE_KEY not in message  # the server echoed the key: it is scrubbed
    assert len(server.requests) == 1 and sleeps == []  # a wrong key does not get better by retrying


def test_a_missing_key_stops_before_any_request(server, sleeps, work_transcript):
    d = build(server, sleeps, api_key="")
    try:
        with pytest.raises(StopPass, match=r"\$MODEL_KEY is not set") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.reason == "auth" and server.requests == []


def test_after_cancel_no_request_is_made(server, distiller, work_transcript):
    distiller.cancel()
    with pytest.raises(StopPass, match="memoryd is stopping") as err:
        distiller.distill(work_transcript)
    assert err.value.reason == "shutdown" and server.requests == []


def test_calls_in_flight_never_exceed_the_configured_concurrency(server, sleeps, work_transcript):
    d = build(server, sleeps, concurrency=2)
    server.default = Reply(json={"note": NOTE, "tokens": 1}, delay=0.1)
    try:
        with ThreadPoolExecutor(max_workers=5) as pool:
            results = list(pool.map(lambda _: d.distill(work_transcript), range(5)))
    finally:
        d.close()
    assert all(not r.junk for r in results) and len(server.requests) == 5
    assert server.max_active <= 2
