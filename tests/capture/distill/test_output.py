"""read_note: a model's raw answer → canonical sections, JUNK, or a DistillError."""

from __future__ import annotations

import pytest

from daemon.capture.distill.base import DistillError
from daemon.capture.distill.output import read_note, strip_reasoning

from .conftest import FAKE_KEY, NOTE

SRC = "http://127.0.0.1:1/v1/chat/completions"


@pytest.mark.parametrize("raw", ["JUNK", "  JUNK\n", "`JUNK`", "**JUNK**", "JUNK.", "<think>a greeting</think>\nJUNK"])
def test_junk_answers(raw):
    assert read_note(raw, SRC).junk


def test_junk_with_words_after_it_is_not_junk():
    with pytest.raises(DistillError, match="no note section heading"):
        read_note("JUNK because the user only said hi", SRC)


def test_a_good_note_keeps_its_sections_in_order():
    note = read_note(NOTE, SRC)
    assert not note.junk
    assert note.body.startswith("## What Was Worked On\n\n- Fixed `scripts/deploy.sh`")
    assert "## Decisions & Rationale\n\n- Always deploy" in note.body
    assert note.summary == "Fixed `scripts/deploy.sh` to use pnpm (ERR_PNPM_NO_LOCKFILE on CI)."


def test_headings_are_normalised_and_preamble_dropped():
    raw = (
        "Here is the note you asked for:\n\n"
        "# Session note\n"
        "### what was worked on\n- Moved config loading into config.py\n\n"
        "**Decisions and Rationale**\n- Kept TOML because the team knows it\n\n"
        "## Follow ups:\n- None\n\n"
        "## Outcome/Current State\n- Tests pass locally\n"
    )
    note = read_note(raw, SRC)
    assert note.body == (
        "## What Was Worked On\n\n- Moved config loading into config.py\n\n"
        "## Outcome / Current State\n\n- Tests pass locally\n\n"
        "## Decisions & Rationale\n\n- Kept TOML because the team knows it\n"
    )
    assert "Here is the note" not in note.body and "Follow-ups" not in note.body


@pytest.mark.parametrize("raw", [f"```markdown\n{NOTE}```", f"Here is the note:\n\n```md\n{NOTE}\n```\n"])
def test_a_fenced_note_is_unwrapped(raw):
    note = read_note(raw, SRC)
    assert note.body.startswith("## What Was Worked On") and "```" not in note.body


def test_code_blocks_inside_the_note_are_kept():
    raw = NOTE + "\n## Files, Systems & Commands\n\n```sh\npnpm install --frozen-lockfile\n```\n"
    assert "```sh\npnpm install --frozen-lockfile\n```" in read_note(raw, SRC).body


def test_think_blocks_are_removed():
    raw = f"<think>\nThe user wants SECRET-THOUGHT-7731.\n</think>\n\n{NOTE}"
    note = read_note(raw, SRC)
    assert "SECRET-THOUGHT" not in note.body and "think" not in note.body


def test_reasoning_opened_by_the_template_leaves_only_a_closing_tag():
    assert strip_reasoning("The user wants X, so...\n</think>\nJUNK") == "JUNK"


def test_unclosed_thinking_is_not_a_note():
    with pytest.raises(DistillError, match="empty note"):
        read_note("<think>Let me consider the deploy script and", SRC)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("", "empty note"),
        ("   \n", "empty note"),
        ("I'm sorry, but I can't help with that.", "refused"),
        ("The session fixed the deploy script.", "no note section heading"),
        ("## What Was Worked On\n- ok\n", "too short"),
        ("## What Was Worked On\n\n## Follow-ups\n- none\n", "too short"),
    ],
)
def test_unusable_answers_fail_with_the_reason(raw, why):
    with pytest.raises(DistillError, match=why) as err:
        read_note(raw, SRC)
    assert err.value.retryable
    assert SRC in str(err.value)


def test_the_model_s_note_is_scrubbed_again():
    raw = NOTE + f"\n## Files, Systems & Commands\n\n- export OPENAI_API_KEY={FAKE_KEY}\n"
    note = read_note(raw, SRC)
    assert FAKE_KEY not in note.body and "[REDACTED:" in note.body


def test_error_excerpts_are_scrubbed():
    with pytest.raises(DistillError) as err:
        read_note(f"the key is {FAKE_KEY}", SRC)
    assert FAKE_KEY not in str(err.value)


def test_summary_is_one_bounded_line():
    long = "x" * 400
    note = read_note(f"## What Was Worked On\n\n- **{long}**\n- second\n", SRC)
    assert "\n" not in note.summary and len(note.summary) == 160 and note.summary.endswith("…")
