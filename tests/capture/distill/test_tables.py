"""The distiller's regex tables (tables.py, lexicon data) give the whole table's answers while trying only
the rows whose words a text holds; and the rows' words are right: every match of a row holds one."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon import lexicon
from daemon.capture.distill import describe, extractive, problems, supersede
from daemon.capture.distill.tables import RegexTable, fold
from daemon.capture.distill.turns import sentences

TESTS = Path(__file__).resolve().parents[2]
TABLES = [(f"{m.__name__.rsplit('.', 1)[-1]}.{n}", v) for m in (supersede, problems, extractive, describe)
          for n, v in vars(m).items() if isinstance(v, RegexTable)]


def _pool() -> list[str]:
    """Real wording: every sentence and line of the test corpora, labelled sets and golden notes, and
    variants that fold oddly."""
    pool: set[str] = set()
    paths = [*TESTS.glob("capture/corpus_*.py"), *TESTS.glob("capture/golden/*.md"), *TESTS.glob("data/notes/training/*.json")]
    for path in paths:
        text = path.read_text(encoding="utf-8")
        pool.update(text.splitlines())
        pool.update(sentences(text))
    tricky = ["STILL FAILS", "st\u0130ll fails", "\u017ftill fails", "st\u0131ll fails", "it **still** fails", "still\tfails",
              "didn't  help", "E404: nope", "e999", "没有用", "还是失败", "効かなかった", "여전히 실패", "that was not it", "",
              "fix_it", "İt ſuccess", "已修复了", "修正しました。", "___", "--- FAIL: TestX (0.01s)"]
    base = sorted(pool)
    return [*base, *(s.upper() for s in base[::7]), *(s.replace("i", "\u0130").replace("s", "\u017f") for s in base[::5]), *tricky]


POOL = _pool()


def test_every_table_of_the_distiller_is_read() -> None:
    assert len(TABLES) >= 10 and {t.table for _, t in TABLES} >= {"distill_persists", "distill_wrong", "distill_done"}


@pytest.mark.parametrize(("name", "table"), TABLES, ids=[n for n, _ in TABLES])
def test_same_answers_as_the_whole_table(name: str, table: RegexTable) -> None:
    whole = table.whole()
    for text in POOL:
        expected = whole.search(text)
        assert table.found(text) is bool(expected), (name, text)
        got = table.search(text)
        assert (got and got.span()) == (expected and expected.span()), (name, text)
        got, expected = table.match(text), whole.match(text)
        assert (got and got.span()) == (expected and expected.span()), (name, text)
        assert table.sub("#", text) == whole.sub("#", text), (name, text)


@pytest.mark.parametrize(("name", "table"), TABLES, ids=[n for n, _ in TABLES])
def test_a_rows_match_holds_one_of_its_words(name: str, table: RegexTable) -> None:
    """The words column is data beside the rows: a row edited without its words would be skipped where it matches."""
    import re

    for n, row in enumerate(lexicon.rows("all", table.table)):
        if len(row) < 3 or row[2] == "*":
            continue
        words, regex = row[2].split(), re.compile(table.flags + row[0])
        for text in POOL:
            found = regex.search(text)
            if found:
                assert any(w in fold(text) for w in words), (name, n, row[0], text)


def test_a_text_without_any_word_tries_nothing() -> None:
    table = RegexTable("distill_persists", "(?i)")
    assert table.rows_for("plain words about a report") == () and not table.found("plain words about a report")
    assert table.found("it still fails after the change")
