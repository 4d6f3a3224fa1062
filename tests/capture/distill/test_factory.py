"""make_distiller and distiller_identity: which distiller, which key, which name."""

from __future__ import annotations

from datetime import datetime

import httpx
import pytest

from daemon.capture.distill import distiller_identity, make_distiller
from daemon.capture.distill.base import StopPass
from daemon.capture.distill.extractive import EXTRACTIVE_VERSION
from daemon.capture.distill.factory import open_model_distiller
from daemon.capture.distill.openai import OpenAIChat
from daemon.capture.distill.prompt import PROMPT_VERSION
from daemon.config import ConfigError, LLMSettings

from .conftest import NOTE, llm_settings, openai_reply


def test_identity_changes_with_model_and_prompt():
    assert distiller_identity(LLMSettings()) == ("extractive", EXTRACTIVE_VERSION)
    assert distiller_identity(LLMSettings(provider="openai", model="qwen3:8b")) == ("openai:qwen3:8b", PROMPT_VERSION)
    assert distiller_identity(LLMSettings(provider="anthropic", model="claude-haiku-4-5"))[0] == (
        "anthropic:claude-haiku-4-5"
    )


def test_the_distiller_s_name_is_its_identity(server):
    llm = llm_settings("openai", server.url + "/v1")
    d = make_distiller(llm, {}, None)
    try:
        assert (d.name, d.prompt_version) == distiller_identity(llm)
        assert d.concurrency == llm.concurrency
    finally:
        d.close()


def test_extractive_is_the_default():
    extractive = pytest.importorskip("daemon.capture.distill.extractive")
    d = make_distiller(LLMSettings(), {}, None)
    assert isinstance(d, extractive.ExtractiveDistiller)
    d.close()


def test_a_model_provider_needs_a_model():
    with pytest.raises(ConfigError, match="llm.model is empty"):
        make_distiller(LLMSettings(provider="openai", base_url="http://127.0.0.1:11434/v1"), {}, None)


def test_the_key_comes_from_the_given_env_never_os_environ(server, monkeypatch, work_transcript):
    monkeypatch.setenv("MY_KEY", "from-os-environ-0000")
    server.then(openai_reply(NOTE))
    d = make_distiller(llm_settings("openai", server.url + "/v1", api_key_env="MY_KEY"), {"MY_KEY": "given-1234"}, None)
    try:
        d.distill(work_transcript)
    finally:
        d.close()
    assert server.requests[0].headers["authorization"] == "Bearer given-1234"


def test_close_closes_the_shared_client(server):
    client = httpx.Client()
    d = make_distiller(llm_settings("openai", server.url + "/v1"), {}, None, client=client)
    d.close()
    assert client.is_closed


@pytest.mark.parametrize(
    ("base_url", "endpoint", "key_env"),
    [
        ("", "https://api.openai.com/v1/chat/completions", "OPENAI_API_KEY"),
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/chat/completions", ""),
        ("http://gpu:8000/v1/", "http://gpu:8000/v1/chat/completions", ""),
        ("http://gpu:8000/v1/chat/completions", "http://gpu:8000/v1/chat/completions", ""),
    ],
)
def test_openai_endpoint_and_implied_key(base_url, endpoint, key_env):
    assert OpenAIChat().endpoint(base_url) == endpoint
    assert OpenAIChat().key_env(base_url) == key_env


def test_open_model_distiller_budgets_on_its_own_connection(server, state_db, sleeps, work_transcript):
    llm = llm_settings("openai", server.url + "/v1", daily_call_budget=1)
    server.then(openai_reply(NOTE, usage={"total_tokens": 42}))
    d, identity = open_model_distiller(llm, state_db, clock=lambda: 1_750_000_000.0, env={}, sleep=sleeps)
    try:
        assert identity == ("openai:qwen3:8b", PROMPT_VERSION)
        d.distill(work_transcript)
        with pytest.raises(StopPass) as err:
            d.distill(work_transcript)
        assert err.value.reason == "budget"
    finally:
        d.close()
    # Recorded through the budget's own connection, visible through the pipeline's.
    assert state_db.spend(datetime.fromtimestamp(1_750_000_000.0).date().isoformat()) == (1, 42)
