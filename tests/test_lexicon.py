"""The lexicon: word tables read from data files, one matcher, a digest of all the data."""

from __future__ import annotations

import pytest

from daemon import lexicon


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A lexicon folder of our own, the caches cleared before and after."""
    monkeypatch.setattr(lexicon, "FOLDER", tmp_path)
    for cached in (lexicon.rows, lexicon.words, lexicon.digest):
        cached.cache_clear()
    yield tmp_path
    for cached in (lexicon.rows, lexicon.words, lexicon.digest):
        cached.cache_clear()


def _table(folder, lang, name, text):
    (folder / lang).mkdir(exist_ok=True)
    (folder / lang / f"{name}.tsv").write_text(text, encoding="utf-8")


def test_a_table_reads_its_rows_without_comments_blank_lines_or_trailing_empty_cells(folder):
    _table(folder, "en", "glossary", "# a comment\n\nDeploy\tdeploy\t\n  \nｋ８ｓ\tkubernetes\n")
    assert lexicon.rows("en", "glossary") == (("Deploy", "deploy"), ("k8s", "kubernetes"))  # NFKC: full-width is ASCII
    assert lexicon.words("en", "glossary") == {"deploy", "k8s"}
    assert lexicon.rows("fr", "glossary") == ()  # no table of that language: no words
    assert lexicon.languages("glossary") == ("en",)


def test_a_table_that_is_not_utf8_is_named_in_the_error(folder):
    (folder / "de").mkdir()
    (folder / "de" / "weak.tsv").write_bytes(b"Fehler\xff\n")
    with pytest.raises(lexicon.LexiconError, match="weak.tsv"):
        lexicon.rows("de", "weak")
    with pytest.raises(lexicon.LexiconError, match="not a table name"):
        lexicon.rows("../etc", "passwd")


def test_the_digest_changes_with_the_data_not_with_a_touch(folder):
    _table(folder, "en", "weak", "fix\n")
    first = lexicon.digest()
    (folder / "en" / "weak.tsv").touch()
    lexicon.digest.cache_clear()
    assert lexicon.digest() == first
    _table(folder, "en", "weak", "fix\nbug\n")
    lexicon.digest.cache_clear()
    assert lexicon.digest() != first


def test_latin_phrases_match_whole_words_only_and_cjk_ones_anywhere():
    matcher = lexicon.Matcher({"test": "en", "rate limit": "en", "部署": "zh", "デプロイ": "ja", "배포": "ko"})
    assert matcher.values("the latest tests") == []  # inside latest, tests: no word "test"
    assert matcher.values("a Test, then a RATE LIMIT.") == ["en"]
    assert [f.phrase for f in matcher.find("一直部署失败")] == ["部署"]  # no spaces in Chinese
    assert [f.phrase for f in matcher.find("本番にデプロイした")] == ["デプロイ"]
    assert matcher.find("배포가 실패") and not matcher.find("재배포가")  # Hangul is spaced: a word's start
    found = matcher.find("ok: rate limit")
    assert found[0].start == 4 and found[0].end == 14


def test_without_the_boundary_rule_a_phrase_is_found_inside_words():
    assert lexicon.Matcher(["test"], boundary=False).found("latest")
    assert not lexicon.Matcher(["test"]).found("latest")
    assert not lexicon.Matcher([]).found("anything")


def test_the_shipped_tables_are_read_through_the_package():
    assert "send" == dict(lexicon.rows("en", "irregular_verbs"))["sent"]
    heads = {row[1] for _, row in lexicon.every("glossary")}
    assert {"deploy", "migration", "timeout"} <= heads
    assert {"en", "ja", "ko", "zh"} <= set(lexicon.languages("glossary"))
