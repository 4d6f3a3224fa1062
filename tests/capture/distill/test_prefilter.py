"""The literal test in front of the distiller's regexes gives the regexes' own answers."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from daemon.capture.distill import cues, extractive, problems, supersede
from daemon.capture.distill.prefilter import Prefiltered, alternatives, any_word, fold, necessary_words, prefiltered
from daemon.capture.distill.turns import sentences

TESTS = Path(__file__).resolve().parents[2]


def _instances() -> list[tuple[str, Prefiltered]]:
    found = []
    for module in (cues, supersede, problems, extractive):
        for name, value in vars(module).items():
            values = value.items() if isinstance(value, dict) else [(None, value)]
            found += [(f"{module.__name__}.{name}[{k}]", v) for k, v in values if isinstance(v, Prefiltered)]
    return found


INSTANCES = _instances()


def _pool() -> list[str]:
    """Real wording: every sentence and line of the test corpora and golden notes, and variants that fold oddly."""
    pool: set[str] = set()
    for path in [*TESTS.glob("capture/corpus_*.py"), *TESTS.glob("capture/golden/*.md")]:
        text = path.read_text(encoding="utf-8")
        pool.update(text.splitlines())
        pool.update(sentences(text))
    tricky = ["STILL FAILS", "st\u0130ll fails", "\u017ftill fails", "st\u0131ll fails", "it **still** fails", "still\tfails",
              "didn't  help", "E404: nope", "e999", "没有用", "还是失败", "効かなかった", "여전히 실패", "that was not it", ""]
    base = sorted(pool)
    return [*base, *(s.upper() for s in base[::7]), *(s.replace("i", "\u0130").replace("s", "\u017f") for s in base[::5]), *tricky]


POOL = _pool()


def test_the_distillers_regexes_are_prefiltered() -> None:
    assert len(INSTANCES) >= 8  # the cue tables of cues.py are lexicon data now (daemon/lexicon/*/distill_*.tsv)
    assert all(p.words for _, p in INSTANCES), "a pattern without necessary words is never spared"


@pytest.mark.parametrize(("name", "pattern"), INSTANCES, ids=[n for n, _ in INSTANCES])
def test_same_answers_as_the_pattern(name: str, pattern: Prefiltered) -> None:
    raw = pattern.pattern
    for text in POOL:
        expected = raw.search(text)
        assert pattern.found(text) is bool(expected), (name, text)
        got = pattern.search(text)
        assert (got and got.span()) == (expected and expected.span()), (name, text)
        got, expected = pattern.match(text), raw.match(text)
        assert (got and got.span()) == (expected and expected.span()), (name, text)
        assert pattern.sub("#", text) == raw.sub("#", text), (name, text)


def test_fold_keeps_every_character_in_its_place() -> None:
    """One character folds to one: a folded text's lines and positions are the text's."""
    everything = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert len(fold(everything)) == len(everything)
    assert len(fold(everything).splitlines()) == len(everything.splitlines())


def test_fold_matches_what_ignorecase_matches() -> None:
    """Every character IGNORECASE takes for a word's character folds to that character."""
    chars = {c for _, p in INSTANCES for word in p.words for c in word if len(c) == 1} | set("abcdefghijklmnopqrstuvwxyz")
    everything = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    for hit in re.finditer("[" + re.escape("".join(sorted(chars))) + "]", everything, re.IGNORECASE):
        for char in chars:
            if re.fullmatch(re.escape(char), hit.group(), re.IGNORECASE):
                assert fold(hit.group()) == fold(char), (hit.group(), char)


def test_necessary_words() -> None:
    def words(pattern: str) -> list[str]:
        return sorted("".join(w) for w in necessary_words(re.compile(pattern)))

    assert words(r"(?i)\bstill\s+fails|didn't (?:help|work)") == ["didn't", "still"]
    assert words(r"\bE\d{3}\b") == [r"e\d\d\d"]
    assert words(r"abc|(?:x)?") == []  # an alternative that holds nothing
    assert words(r"foo bar") == ["foo"]  # words are cut at spaces


def test_a_pattern_without_words_is_always_run() -> None:
    pattern = prefiltered(r"[0-9]+|abc")
    assert pattern.may_match("zzz") and pattern.found("12") and not pattern.found("zz")
    assert any_word(pattern, prefiltered("x"))("anything")


def test_overlapping_words_each_bring_their_alternatives() -> None:
    pattern = prefiltered(r"(?i)still[0-9]|llama")
    assert pattern.found("STILLAMA") is True and pattern.found("still") is False
    assert prefiltered(r"e\d\d\d|e12x").found("e12x") is True


def test_alternatives_split_only_at_the_top() -> None:
    assert alternatives(r"a|(b|c)|[|]|\||[]|]|x") == ["a", "(b|c)", "[|]", r"\|", "[]|]", "x"]


def test_first_error_line_skips_output_without_error_words() -> None:
    assert problems.first_error_line("all good\nbuilt in 3s") == ""
    assert problems.first_error_line("ok\n│  Error: boom\n") == "Error: boom"
    assert problems.first_error_line("x\u2028could  not open file") == "could not open file"


def test_a_memory_label_is_looked_for_as_before() -> None:
    """The quick look at a note: whitespace and `**` taken out by str methods, as the regex took them out."""
    import random

    squeeze = re.compile(r"\s+|\*\*")
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(["*", "**", " ", "\n", "\u2028", "\x1c", "a", "rule", "# h", "ru le"]) for _ in range(12))
        assert "".join(text.replace("**", "").split()) == squeeze.sub("", text), repr(text)
    for text in POOL:
        expected = cues._MEMORY_LABEL_WORD.found(squeeze.sub("", cues._HEADING.sub("", text)))
        assert cues.may_hold_memory_label(text) is expected, text


def test_a_pruned_substitution_is_the_patterns_own() -> None:
    """`Pruned.sub` leaves out only alternatives whose words a text lacks: the same text comes back."""
    from daemon.capture.distill.describe import _DONE
    from daemon.capture.distill.prefilter import Pruned

    grouped = Pruned(re.compile(r"(?i)\b(?:done|fixed|it)\b|已|修复|[\W_]"))
    for pruned in (_DONE, grouped):
        for text in [*POOL, "fix_it", "İt ſuccess", "已修复了", "修正しました。", "___"]:
            assert pruned.sub(" ", text) == pruned.pattern.sub(" ", text), text
    assert grouped.sub(" ", "plain words") == "plain words"
