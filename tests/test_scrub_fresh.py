"""Regression sets: fresh held-out batches (written by another engineer, measured once by
bench_scrub before anyone here read them) kept once read: every planted secret stays
redacted, every false-positive text stays as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.scrub import find_spans, redact

FOLDER = Path(__file__).parent / "fixtures" / "secrets-fresh"
PLANTED = [(path.stem, i, case) for path in sorted(FOLDER.glob("batch-*.json")) if not path.stem.endswith("-fp") for i, case in enumerate(json.loads(path.read_text(encoding="utf-8"))["cases"])]
CLEAN = [(path.stem, i, item) for path in sorted(FOLDER.glob("batch-*-fp.json")) for i, item in enumerate(json.loads(path.read_text(encoding="utf-8"))["texts"])]


@pytest.mark.parametrize("batch,i,case", PLANTED, ids=[f"{b}-{i}-{c['family']}-{c['place']}-{c['lang']}" for b, i, c in PLANTED])
def test_a_planted_secret_of_a_read_batch_stays_redacted(batch: str, i: int, case: dict) -> None:
    assert case["secret"] in case["text"]
    assert case["secret"] not in redact(case["text"])


@pytest.mark.parametrize("batch,i,item", CLEAN, ids=[f"{b}-{i}-{t['kind']}" for b, i, t in CLEAN])
def test_a_clean_text_of_a_read_batch_comes_out_unchanged(batch: str, i: int, item: dict) -> None:
    text = item["text"]
    assert [text[max(0, s - 30) : e + 10] for s, e, _ in find_spans(text)] == []
