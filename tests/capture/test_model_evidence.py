"""The model distiller gets the tools' evidence (issue 38): in its prompt, and its note checked against it.
A scripted model on 127.0.0.1 answers the sessions of the labelled training set (a real OpenCode 1.18
database); one answer claims a fix the tools saw fail."""

from __future__ import annotations

import json
from pathlib import Path

import frontmatter

from daemon.capture.distill.prompt import PROMPT_VERSION
from tests.capture.corpora import build_corpus
from tests.capture.distill.conftest import openai_reply
from tests.capture.helpers import distill_once
from tests.capture.notes_set import load_set
from tests.capture.test_model_pipeline import RoutedServer, use_model, user_turn

TRAINING = Path(__file__).resolve().parents[1] / "data" / "notes" / "training" / "training-a.json"
CLAIMS_FIXED = """## What Was Worked On

- Fixed the data race in the cache pool.

## Outcome / Current State

Fixed: a sync.Mutex in Cache.Put removes the DATA RACE in TestPoolConcurrent.

## Problems & Fixes

- `go test -race ./...` reported WARNING: DATA RACE.
"""
HONEST = "## Outcome / Current State\n\nThe check passes now: `pytest -q tests/test_import.py` → 13 passed.\n"


def test_the_prompt_carries_the_evidence_and_a_fixed_claim_the_tools_contradict_is_flagged(home, tmp_path, monkeypatch):
    name, scenarios = load_set(TRAINING)
    corpus = build_corpus(tmp_path / "corpora", name, [s for s in scenarios if s.name in ("en-go-race", "en-sqlite-locked")])
    sessions = json.loads((corpus / "sessions.json").read_text())
    model = RoutedServer()
    model.route = lambda body: openai_reply(CLAIMS_FIXED if "cache pool" in user_turn(body) else HONEST,
                                            usage={"total_tokens": 100})
    model.start()
    try:
        use_model(monkeypatch, model.url + "/v1")
        report = distill_once(corpus / "opencode.db")
    finally:
        model.stop()
    prompts = {("race" if "cache pool" in user_turn(r.body) else "locked"): user_turn(r.body) for r in model.requests}
    run = "`go test -race ./...` → exit 1: FAIL: TestPoolConcurrent (0.02s)"
    assert "<tool_evidence>" in prompts["race"] and f"{run} [failed]" in prompts["race"]
    assert f"{run} [failed: the change before it did not help]" in prompts["race"]
    assert f"ended: unresolved, shown by {run}" in prompts["race"]
    assert "ended: fixed, shown by `pytest -q tests/test_import.py` → 13 passed" in prompts["locked"]
    assert f"(prompt {PROMPT_VERSION})" in model.requests[0].body["messages"][0]["content"]

    race = frontmatter.loads(Path(report.notes[sessions["en-go-race"]["session"]]).read_text())
    outcome = race.content.split("## Outcome / Current State\n\n", 1)[1].splitlines()
    assert outcome[0] == f"{run} (the last run, after the last change)"  # the tools win
    assert "Fixed: a sync.Mutex" in race.content  # the model's words stay, under the check that contradicts them
    assert race["description"].startswith("`go test -race ./...` → exit 1")
    locked = Path(report.notes[sessions["en-sqlite-locked"]["session"]]).read_text()
    assert "the last run, after the last change" not in locked  # a fixed session is left as the model wrote it
