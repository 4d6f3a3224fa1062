"""Failures against a real server: Retry-After, backoff, timeouts, bad JSON, auth; no key ever leaks."""

from __future__ import annotations

import socket
from email.utils import formatdate

import pytest
from structlog.testing import capture_logs

from daemon.capture.distill import make_distiller
from daemon.capture.distill.base import DistillError, StopPass
from daemon.capture.distill.http import parse_retry_after

from .conftest import FAKE_KEY, NOTE, Reply, anthropic_reply, llm_settings, openai_reply

NOW = 1_750_000_000.0


def build(server, sleeps, provider="openai", **overrides):
    base = server.url + "/v1" if provider == "openai" else server.url
    llm = llm_settings(provider, base, api_key_env="MODEL_KEY", **overrides)
    return make_distiller(llm, {"MODEL_KEY": FAKE_KEY}, None, sleep=sleeps, clock=lambda: NOW)


@pytest.fixture(params=["openai", "anthropic"])
def provider(request):
    return request.param


@pytest.fixture
def distiller(server, sleeps, provider):
    d = build(server, sleeps, provider)
    yield d
    d.close()


def ok(provider):
    return openai_reply(NOTE) if provider == "openai" else anthropic_reply(NOTE)


def test_429_honours_retry_after_seconds(server, distiller, sleeps, provider, work_transcript):
    server.then(Reply(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "7"}), ok(provider))
    assert not distiller.distill(work_transcript).junk
    assert sleeps == [7.0] and len(server.requests) == 2


def test_503_honours_retry_after_as_http_date(server, distiller, sleeps, provider, work_transcript):
    when = formatdate(NOW + 5, usegmt=True)
    server.then(Reply(503, {"error": "loading model"}, headers={"Retry-After": when}), ok(provider))
    assert not distiller.distill(work_transcript).junk
    assert sleeps == [5.0]


def test_a_retry_after_beyond_the_cap_waits_for_the_next_pass(server, distiller, sleeps, work_transcript):
    server.then(Reply(429, {"error": "quota"}, headers={"Retry-After": "3600"}))
    with pytest.raises(StopPass, match="asks to wait 3600 s.*next pass") as err:
        distiller.distill(work_transcript)
    # The server's rate limit is no session's fault: the pass stops, sessions stay pending.
    assert err.value.retryable and err.value.reason == "rate_limit"
    assert sleeps == [] and len(server.requests) == 1


def test_500_then_success_backs_off_with_jitter(server, distiller, sleeps, provider, work_transcript):
    server.then(Reply(500, {"error": "boom"}), ok(provider))
    assert distiller.distill(work_transcript).body.startswith("## What Was Worked On")
    assert len(server.requests) == 2
    [wait] = sleeps
    assert 1 <= wait <= 2  # first backoff: 1 s plus up to 1 s of jitter


def test_5xx_gives_up_after_max_retries(server, distiller, sleeps, work_transcript):
    server.default = Reply(502, {"error": "bad gateway"})
    with pytest.raises(DistillError, match="HTTP 502.*gave up after 3 attempts") as err:
        distiller.distill(work_transcript)
    assert err.value.retryable and not isinstance(err.value, StopPass)
    assert len(server.requests) == 3  # max_retries = 2
    assert 1 <= sleeps[0] <= 2 and 2 <= sleeps[1] <= 3  # exponential


def test_a_hanging_server_stops_the_pass_after_two_timeouts(server, sleeps, work_transcript):
    # However many retries are allowed: each unanswered request already cost a whole timeout.
    d = build(server, sleeps, timeout_s=0.2, max_retries=5)
    server.default = Reply(hang=True)
    try:
        with pytest.raises(StopPass, match=r"failed 2 times in a row \(last: no answer within 0.2 s.*hanging") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.reason == "unavailable"
    # No backoff on top of a timeout: the pass gives up after two timeouts, not two plus a pause.
    assert len(server.requests) == 2 and sleeps == [0.0]


def test_a_server_that_trickles_its_answer_is_a_hanging_one(server, sleeps, work_transcript):
    # A byte every 0.1 s: each read is well within the timeout, the whole answer is not.
    d = build(server, sleeps, timeout_s=0.5, max_retries=5)
    server.default = Reply(raw=b'{"choices": [' + b" " * 200 + b"]}", trickle=0.1)
    try:
        with pytest.raises(StopPass, match=r"failed 2 times in a row \(last: no answer within 0.5 s.*hanging") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.reason == "unavailable"
    assert len(server.requests) == 2 and sleeps == [0.0]


def test_an_endless_answer_is_cut_off_and_is_the_servers_fault(server, sleeps, work_transcript, monkeypatch):
    import daemon.capture.distill.http as http

    monkeypatch.setattr(http, "MAX_ANSWER_BYTES", 64 * 1024)
    server.default = Reply(raw=b'{"choices": "' + b"x" * (1024 * 1024) + b'"}')  # garbage, a MiB of it
    d = build(server, sleeps, max_retries=1)
    try:
        with pytest.raises(DistillError, match="answer over 64 KiB") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.transient and len(server.requests) == 2


def test_a_gzip_answer_is_decoded_once(server, sleeps, work_transcript):
    import gzip
    import json

    reply = openai_reply(NOTE)
    server.then(Reply(raw=gzip.compress(json.dumps(reply.json).encode()), headers={"Content-Encoding": "gzip"}))
    d = build(server, sleeps)
    try:
        assert d.distill(work_transcript).body.startswith("## What Was Worked On")
    finally:
        d.close()


def test_an_unreachable_server_stops_the_pass_after_bounded_retries(sleeps, work_transcript):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = llm_settings("openai", f"http://127.0.0.1:{port}/v1", max_retries=1)
    d = make_distiller(llm, {}, None, sleep=sleeps)
    try:
        with pytest.raises(StopPass, match="cannot connect.*gave up after 2 attempts.*is it running") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.retryable and err.value.reason == "unavailable"
    assert f"127.0.0.1:{port}" in str(err.value) and len(sleeps) == 1


def test_malformed_json_is_the_servers_fault_retried_never_the_sessions(server, distiller, sleeps, work_transcript):
    server.default = Reply(raw=b"<html>502 Bad Gateway</html>")  # an HTTP 200 that is no JSON
    with pytest.raises(DistillError, match="HTTP 200 with malformed JSON") as err:
        distiller.distill(work_transcript)
    assert server.url in str(err.value) and err.value.retryable
    assert err.value.transient, "a bad answer is the server's state: the session is never failed for it"
    retries = distiller.llm.max_retries  # "at most max_retries times", as docs/models.md says
    assert len(server.requests) == retries + 1 and len(sleeps) == retries


def test_a_malformed_answer_then_a_good_one_gives_the_note(server, distiller, sleeps, provider, work_transcript):
    server.then(Reply(raw=b"not json"), ok(provider))
    assert "pnpm" in distiller.distill(work_transcript).body
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("provider", "body", "what"),
    [("openai", {"id": "x", "object": "list"}, r"no choices\[0\]"), ("anthropic", {"id": "x"}, "no content list")],
)
def test_an_unexpected_shape_says_what_is_missing(server, sleeps, provider, body, what, work_transcript):
    # Valid JSON, but no answer of this API: the server's fault (a proxy), as malformed JSON is.
    d = build(server, sleeps, provider)
    server.default = Reply(json=body)
    try:
        with pytest.raises(DistillError, match=what) as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert server.url in str(err.value) and err.value.transient
    assert len(server.requests) == d.llm.max_retries + 1


@pytest.mark.parametrize("body", [[], None, "text", {"choices": []}, {"choices": [{"message": {"content": {"x": 1}}}]}])
def test_json_that_is_no_completion_then_a_good_answer_gives_the_note(server, sleeps, body, work_transcript):
    d = build(server, sleeps)
    server.then(Reply(json=body), ok("openai"))
    try:
        assert "pnpm" in d.distill(work_transcript).body
    finally:
        d.close()
    assert len(server.requests) == 2


def test_401_stops_the_pass_with_one_clear_message_and_no_key(server, distiller, sleeps, work_transcript):
    # Servers like to echo the key they reject.
    server.then(Reply(401, {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}"}}))
    with pytest.raises(StopPass) as err:
        distiller.distill(work_transcript)
    assert err.value.reason == "auth"
    assert "rejected the API key from $MODEL_KEY" in str(err.value)
    assert FAKE_KEY not in str(err.value) and FAKE_KEY[8:20] not in str(err.value)
    assert len(server.requests) == 1 and sleeps == []


def test_403_without_a_key_configured_says_how_to_configure_one(server, sleeps, work_transcript):
    d = make_distiller(llm_settings("openai", server.url + "/v1"), {}, None, sleep=sleeps)
    server.then(Reply(403, {"error": "forbidden"}))
    try:
        with pytest.raises(StopPass, match="set llm.api_key_env") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.reason == "auth"


def test_404_stops_the_pass_pointing_at_base_url_and_model(server, distiller, work_transcript):
    server.then(Reply(404, {"error": "model 'qwen3:8b' not found"}))
    with pytest.raises(StopPass, match="llm.base_url") as err:
        distiller.distill(work_transcript)
    assert err.value.reason == "config"


def test_400_fails_only_this_session_for_good(server, distiller, sleeps, work_transcript):
    server.then(Reply(400, {"error": {"message": "context length exceeded"}}))
    with pytest.raises(DistillError, match="HTTP 400 .context length exceeded") as err:
        distiller.distill(work_transcript)
    assert not err.value.retryable and sleeps == []


def test_no_key_in_log_lines_or_errors_through_retries(server, distiller, work_transcript):
    server.default = Reply(500, {"error": {"message": f"upstream rejected {FAKE_KEY}"}})
    with capture_logs() as logs, pytest.raises(DistillError) as err:
        distiller.distill(work_transcript)
    assert len(logs) == 2 and all(e["event"] == "model call failed, retrying" for e in logs)
    assert FAKE_KEY not in repr(logs) and FAKE_KEY not in str(err.value)
    assert "[REDACTED" in str(err.value)


def test_an_odd_shaped_key_is_still_kept_out_of_errors(server, sleeps, work_transcript):
    key = "local-token-ZQX81"  # no known key format: only the distiller knows it is secret
    d = make_distiller(llm_settings("openai", server.url + "/v1", api_key_env="K"), {"K": key}, None, sleep=sleeps)
    server.then(Reply(401, {"error": f"bad token {key}"}))
    try:
        with pytest.raises(StopPass) as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert key not in str(err.value)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("12", 12.0),
        ("0", 0.0),
        ("1.5", 1.5),
        (formatdate(NOW + 30, usegmt=True), 30.0),
        (formatdate(NOW - 30, usegmt=True), 0.0),
        ("soon", None),
        (None, None),
    ],
)
def test_parse_retry_after(value, seconds):
    assert parse_retry_after(value, NOW) == seconds


# -- the breaker: a server failing for everyone stops the pass -----------------------------------


def test_a_server_failing_for_every_transcript_opens_the_breaker(server, distiller, sleeps, work_transcript):
    from dataclasses import replace

    other = replace(work_transcript, hash="sha256:other")
    server.default = Reply(502, {"error": "bad gateway"})
    with pytest.raises(DistillError) as first:
        distiller.distill(work_transcript)  # one transcript's retries alone do not open it
    assert not isinstance(first.value, StopPass) and first.value.transient
    with pytest.raises(StopPass, match="failed 3 times in a row.*HTTP 502") as second:
        distiller.distill(other)
    assert second.value.reason == "unavailable" and len(server.requests) == 4  # 3 attempts + 1
    # Still open at the next pass: one request shows the server is still down.
    with pytest.raises(StopPass):
        distiller.distill(work_transcript)
    assert len(server.requests) == 5


def test_an_answer_closes_the_breaker(server, distiller, sleeps, provider, work_transcript):
    from dataclasses import replace

    server.then(Reply(500, {"error": "boom"}), Reply(500, {"error": "boom"}), ok(provider))
    assert not distiller.distill(work_transcript).junk  # two failures, then an answer
    server.then(Reply(500, {"error": "boom"}), ok(provider))
    assert not distiller.distill(replace(work_transcript, hash="sha256:other")).junk  # the count began again
    assert len(server.requests) == 5


def test_one_input_the_server_always_fails_never_opens_the_breaker(server, distiller, sleeps, provider, work_transcript):
    server.default = Reply(500, {"error": "CUDA out of memory"})
    for _ in range(3):  # the same transcript, pass after pass
        with pytest.raises(DistillError) as err:
            distiller.distill(work_transcript)
        assert not isinstance(err.value, StopPass) and err.value.transient
