"""bench_notes' detectors catch the failures issue #18 describes: a deliberately bad note is
flagged on every count, the same session's good note on none."""

from __future__ import annotations

import frontmatter
import pytest

from bench.bench_notes import Score, SessionText, contentless, score_claims, score_note, score_problems, sections_of

PROMPT = ("The dashboard keeps polling /api/stats after I navigate away from the page. "
          "Can you fix the usePolling hook?")
SEEN = SessionText(
    prompts=[PROMPT, "Picking this back up. It still polls after navigating away."],
    outputs=[" ❯ usePolling (2) 1 failed\n   AssertionError: expected \"spy\" to be called 3 times, but got 5 times\n"
             "   Compiling thiserror v0.7.10\nnpm ERR! code ERESOLVE"],
    sources=["useEffect(() => { const id = setInterval(tick, 5000); }, [tick]);"],
)
SPEC = {"facts": ["AbortController"], "project": "/home/dev/src/dashboard",
        "superseded": ["returns a cleanup that calls clearInterval(id)", "the effect never clears the interval"]}


def _note(description: str, sections: dict[str, list[str]]) -> str:
    body = "\n".join(f"## {name}\n\n" + "\n".join(f"- {line}" for line in lines) + "\n" for name, lines in sections.items())
    return frontmatter.dumps(frontmatter.Post(body, description=description)) + "\n"


BAD = _note(
    "Fixed: usePolling returns a cleanup that calls clearInterval(id).",
    {
        "What Was Worked On": [PROMPT],
        "Outcome / Current State": ["Fixed: usePolling returns a cleanup that calls clearInterval(id), so it stops."],
        "Findings & Learnings": ["The root cause is that the effect never clears the interval.",
                                 "The dashboard keeps polling /api/stats after I navigate away from the page."],
        "Problems & Fixes": ["`bash` output: ❯ usePolling (2) 1 failed",
                             "useEffect(() => { const id = setInterval(tick, 5000); }, [tick]);",
                             "`cargo build` failed: Compiling thiserror v0.7.10",
                             "So I'll fix the hook itself rather than the test."],
    },
)
GOOD = _note(
    "Polling stops on navigation: usePolling aborts the in-flight request with an AbortController on unmount.",
    {
        "What Was Worked On": [PROMPT],
        "Outcome / Current State": ["Polling stops on navigation: usePolling aborts the request with an AbortController."],
        "Problems & Fixes": [
            "`npx vitest run` failed: AssertionError: expected \"spy\" to be called 3 times, but got 5 times",
            "`npm ci` failed: npm ERR! code ERESOLVE",
            "Tried: usePolling returns a cleanup that calls clearInterval(id). — did not work: it still polls",
        ],
    },
)


def _score(note: str) -> Score:
    score = Score()
    post = frontmatter.loads(note)
    sections = sections_of(post.content)
    score_note(note, PROMPT, SPEC, score, "x")
    score_claims(post, sections, SPEC, score, "x")
    score_problems(sections, SEEN, score, "x")
    return score


def test_a_bad_note_is_caught_on_every_count():
    score = _score(BAD)
    where = " | ".join(score.superseded)
    assert "description" in where and "Outcome" in where and "Findings" in where  # result, description and cause
    assert len(score.raw_lines) == 3  # a test tally, a source line, a compile line taken for an error
    assert len(score.plans) == 1
    assert len(score.prompt_repeated) == 1
    assert score.facts_kept == 0


def test_the_good_note_of_the_same_session_passes():
    score = _score(GOOD)
    assert not (score.superseded or score.raw_lines or score.plans or score.prompt_repeated or score.contentless)
    assert score.facts_kept == score.facts == 1


@pytest.mark.parametrize("description", ["Fixed.", "修正しました。", "已修复。", "수정했습니다.", "빌드가 성공했습니다.",
                                         "The build passes now.", "All tests pass.", "No result stated in the session."])
def test_descriptions_that_only_say_done_are_contentless(description):
    assert contentless(description)


@pytest.mark.parametrize("description", ["修正しました。dbmate up が通るよう重複行を DELETE してから索引を作ります。",
                                         "Polling stops: usePolling aborts the request on unmount.",
                                         "还没解决：@acme/charts 3.x 只发布在内部源。"])
def test_descriptions_that_say_what_was_done_have_content(description):
    assert not contentless(description)
