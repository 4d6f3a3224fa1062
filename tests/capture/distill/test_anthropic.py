"""The anthropic provider against a real HTTP server."""

from __future__ import annotations

import json

import pytest

from daemon.capture.distill import make_distiller
from daemon.capture.distill.anthropic import AnthropicMessages
from daemon.capture.distill.base import DistillError, StopPass
from daemon.capture.distill.prompt import PROMPT_VERSION

from .conftest import FAKE_KEY, NOTE, anthropic_reply, llm_settings

ANTHROPIC_KEY = "sk-ant-api03-Test0Test1Test2Test3Test4Test5"


@pytest.fixture
def distiller(server, sleeps):
    d = make_distiller(llm_settings("anthropic", server.url), {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}, None, sleep=sleeps)
    yield d
    d.close()


def test_a_note_comes_back(server, distiller, work_transcript):
    server.then(anthropic_reply(NOTE, usage={"input_tokens": 800, "output_tokens": 150}, thinking="hmm SECRET"))
    out = distiller.distill(work_transcript)
    assert not out.junk and out.body.startswith("## What Was Worked On") and "SECRET" not in out.body
    assert (out.distiller, out.prompt_version, out.calls, out.tokens) == (
        "anthropic:claude-haiku-4-5",
        PROMPT_VERSION,
        1,
        950,
    )


def test_the_request_follows_the_messages_api(server, distiller, work_transcript):
    server.then(anthropic_reply(NOTE))
    distiller.distill(work_transcript)
    [seen] = server.requests
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == ANTHROPIC_KEY and seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    body = seen.body
    assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 1200 and body["stream"] is False
    assert f"prompt {PROMPT_VERSION}" in body["system"]
    [user] = body["messages"]
    assert user["role"] == "user" and "ERR_PNPM_NO_LOCKFILE" in user["content"]
    assert FAKE_KEY not in json.dumps(body)


def test_junk_answer(server, distiller, work_transcript):
    server.then(anthropic_reply("JUNK", usage={"input_tokens": 10, "output_tokens": 2}))
    out = distiller.distill(work_transcript)
    assert out.junk and out.tokens == 12


def test_a_refusal_is_a_failed_attempt(server, distiller, work_transcript):
    server.then(anthropic_reply("", stop_reason="refusal"))
    with pytest.raises(DistillError, match="refused"):
        distiller.distill(work_transcript)


def test_no_key_in_the_environment_stops_the_pass_before_any_call(server, sleeps, work_transcript):
    d = make_distiller(llm_settings("anthropic", server.url), {}, None, sleep=sleeps)
    try:
        with pytest.raises(StopPass, match=r"\$ANTHROPIC_API_KEY is not set") as err:
            d.distill(work_transcript)
    finally:
        d.close()
    assert err.value.reason == "auth" and server.requests == []


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        ("", "https://api.anthropic.com/v1/messages"),
        ("https://proxy.example/anthropic/", "https://proxy.example/anthropic/v1/messages"),
        ("https://proxy.example/v1", "https://proxy.example/v1/messages"),
        ("https://proxy.example/v1/messages", "https://proxy.example/v1/messages"),
    ],
)
def test_endpoint(base_url, endpoint):
    assert AnthropicMessages().endpoint(base_url) == endpoint


def test_extra_headers_override_the_defaults_whatever_their_case(server, sleeps, work_transcript):
    llm = llm_settings("anthropic", server.url, extra_headers={"Anthropic-Version": "2099-01-01"})
    d = make_distiller(llm, {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}, None, sleep=sleeps)
    server.then(anthropic_reply(NOTE))
    try:
        d.distill(work_transcript)
    finally:
        d.close()
    sent = [v for k, v in server.requests[0].header_lines if k == "anthropic-version"]
    assert sent == ["2099-01-01"]
