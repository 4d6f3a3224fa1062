"""The openai provider against a real HTTP server: request shape, answers, scrubbing."""

from __future__ import annotations

import json

import pytest

from daemon.capture.distill import make_distiller
from daemon.capture.distill.base import DistillError
from daemon.capture.distill.prompt import PROMPT_VERSION

from .conftest import FAKE_KEY, NOTE, llm_settings, openai_reply

ENV = {"TEST_MODEL_KEY": "local-key-0123456789"}


@pytest.fixture
def distiller(server, sleeps):
    d = make_distiller(
        llm_settings("openai", server.url + "/v1", api_key_env="TEST_MODEL_KEY", extra_headers={"X-Team": "mem"}),
        ENV,
        None,
        sleep=sleeps,
    )
    yield d
    d.close()


def test_a_note_comes_back_with_its_provenance(server, distiller, work_transcript):
    server.then(openai_reply(NOTE, usage={"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020}))
    out = distiller.distill(work_transcript)
    assert not out.junk
    assert out.body.startswith("## What Was Worked On")
    assert out.summary.startswith("Fixed `scripts/deploy.sh`")
    assert (out.distiller, out.prompt_version, out.calls, out.tokens) == ("openai:qwen3:8b", PROMPT_VERSION, 1, 1020)


def test_the_request_carries_model_prompt_and_scrubbed_transcript(server, distiller, work_transcript):
    server.then(openai_reply(NOTE))
    distiller.distill(work_transcript)
    [seen] = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer local-key-0123456789"
    assert seen.headers["x-team"] == "mem"
    body = seen.body
    assert body["model"] == "qwen3:8b"
    assert body["stream"] is False and body["max_tokens"] == 1200 and body["temperature"] == 0.2
    assert "chat_template_kwargs" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and f"prompt {PROMPT_VERSION}" in system["content"]
    assert user["role"] == "user" and "ERR_PNPM_NO_LOCKFILE" in user["content"]
    assert "<transcript>" in user["content"]
    # The transcript held a live-looking key: it was scrubbed before it left the machine.
    assert FAKE_KEY not in json.dumps(body) and "[REDACTED:" in user["content"]


def test_disable_thinking_asks_the_chat_template(server, sleeps, work_transcript):
    d = make_distiller(llm_settings("openai", server.url + "/v1", disable_thinking=True), {}, None, sleep=sleeps)
    server.then(openai_reply(NOTE))
    try:
        d.distill(work_transcript)
    finally:
        d.close()
    assert server.requests[0].body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "authorization" not in server.requests[0].headers  # a local server without a key


def test_junk_answer(server, distiller, work_transcript):
    server.then(openai_reply("JUNK", usage={"total_tokens": 50}))
    out = distiller.distill(work_transcript)
    assert out.junk and out.calls == 1 and out.tokens == 50 and out.distiller == "openai:qwen3:8b"


def test_obvious_junk_costs_no_call(server, distiller, hello_transcript):
    out = distiller.distill(hello_transcript)
    assert out.junk and out.calls == 0
    assert server.requests == []


def test_think_blocks_never_reach_the_note(server, distiller, work_transcript):
    server.then(openai_reply(f"<think>\nprivate chain of thought SECRET-THOUGHT-7731\n</think>\n\n{NOTE}"))
    out = distiller.distill(work_transcript)
    assert "SECRET-THOUGHT" not in out.body and out.body.startswith("## What Was Worked On")


def test_missing_usage_is_estimated(server, distiller, work_transcript):
    server.then(openai_reply(NOTE))
    out = distiller.distill(work_transcript)
    sent = json.dumps(server.requests[0].body)
    assert len(sent) // 8 < out.tokens < len(sent)  # about chars / 4


def test_reasoning_without_content_says_what_to_change(server, distiller, work_transcript):
    server.then(openai_reply(None, reasoning_content="Let me think about the deploy script..."))
    with pytest.raises(DistillError, match="max_output_tokens") as err:
        distiller.distill(work_transcript)
    assert err.value.retryable


def test_a_note_without_sections_is_a_failed_attempt(server, distiller, work_transcript):
    server.then(openai_reply("The user fixed a deploy script."))
    with pytest.raises(DistillError, match="no note section heading") as err:
        distiller.distill(work_transcript)
    assert err.value.retryable and server.url in str(err.value)


def test_a_refusal_is_a_failed_attempt(server, distiller, work_transcript):
    server.then(openai_reply("I'm sorry, but I can't help with that request."))
    with pytest.raises(DistillError, match="refused"):
        distiller.distill(work_transcript)


def test_a_key_the_model_repeats_is_scrubbed_from_the_note(server, distiller, work_transcript):
    server.then(openai_reply(NOTE + f"\n## Files, Systems & Commands\n\n- `.env` holds {FAKE_KEY}\n"))
    out = distiller.distill(work_transcript)
    assert FAKE_KEY not in out.body and "[REDACTED:openai_key]" in out.body
