"""The extractive distiller on longer multi-turn sessions in four languages (real OpenCode-shaped
SQLite): superseded attempts, sessions that end blocked, decisive findings mid-session, long
tool logs. Each note is compared with its golden copy, and the bench's figures must hold.

Regenerate the golden notes after a deliberate change with MEMORYD_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

import frontmatter
import pytest

from bench.bench_notes import Score, score_claims, score_note, score_problems, session_text, sections_of
from tests.capture.corpora import build_corpus, multiturn_corpora
from tests.capture.helpers import distill_once

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CORPORA = multiturn_corpora()
UPDATE = bool(os.environ.get("MEMORYD_UPDATE_GOLDEN"))  # read before the home fixture resets the environment


def _distil(tmp_path: Path, name: str) -> tuple[dict, dict[str, str], Path]:
    corpus = build_corpus(tmp_path / "corpora", name, CORPORA[name])
    sessions = json.loads((corpus / "sessions.json").read_text())
    report = distill_once(corpus / "opencode.db")
    notes = {n: Path(report.notes[s["session"]]).read_text() for n, s in sessions.items()}
    return sessions, notes, corpus / "opencode.db"


def golden_form(note: str) -> str:
    """What a golden note pins: the description and the body, not times or ids."""
    post = frontmatter.loads(note)
    body = post.content[post.content.index("## ") :]
    return f"description: {post['description']}\n\n{body.rstrip()}\n"


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_each_note_matches_its_golden_copy(home, tmp_path, name):
    _, notes, _ = _distil(tmp_path, name)
    for scenario, note in notes.items():
        path = GOLDEN / f"{scenario}.md"
        if UPDATE:
            path.write_text(golden_form(note))
        assert golden_form(note) == path.read_text(), f"{scenario} differs from {path.name}"


def test_the_bench_figures_hold_on_every_multiturn_corpus(home, tmp_path):
    score = Score()
    for name in sorted(CORPORA):
        sessions, notes, db = _distil(tmp_path / name, name)
        for scenario, spec in sessions.items():
            seen = session_text(db, spec["session"])
            note = notes[scenario]
            post = frontmatter.loads(note)
            score_note(note, seen.prompts[0], spec, score, scenario)
            score_claims(post, sections_of(post.content), spec, score, scenario)
            score_problems(sections_of(post.content), seen, score, scenario)
    assert score.facts_kept >= 0.97 * score.facts, score.missing
    assert not score.superseded and not score.raw_lines and not score.plans
    assert not score.prompt_repeated and not score.contentless and not score.repeated
    assert not score.present, score.present
    assert statistics.median(score.sizes) <= 2500
