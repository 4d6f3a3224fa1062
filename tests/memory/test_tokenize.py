"""The token stream: what a query must share with a document to find it."""

from __future__ import annotations

from daemon.memory.tokenize import MAX_QUERY_TOKENS, prefix_match, query_tokens, strict_match, tokens


def test_chinese_runs_become_bigrams_so_two_character_words_match():
    stream = tokens("部署脚本用 pnpm 而不是 npm")
    assert "部署" in stream and "脚本" in stream
    assert "pnpm" in stream and "npm" in stream
    # Latin words glued to CJK text are still words of their own.
    assert tokens("pnpm而不是npm") == ["pnpm", "而不", "不是", "npm"]


def test_one_character_run_is_kept_as_itself():
    assert tokens("猫") == ["猫"]
    assert tokens("a 猫 b") == ["a", "猫", "b"]


def test_japanese_and_korean_use_the_same_bigrams():
    assert {"テス", "スト"} <= set(tokens("テストを実行する"))
    korean = set(tokens("데이터베이스를 마이그레이션"))
    # A particle glued to the word (를) does not stop the word's bigrams from matching.
    assert set(tokens("데이터베이스")) <= korean


def test_identifiers_are_searchable_whole_and_in_parts():
    stream = tokens("Use snake_case, kebab-case, daemon.memory.tree and src/app/main.py.")
    for token in ("snake_case", "snake", "case", "kebab-case", "kebab", "daemon.memory.tree", "memory", "src/app/main.py", "main", "py"):
        assert token in stream
    # The sentence's final dot is not part of the path.
    assert "src/app/main.py." not in stream


def test_camel_case_and_digits_split_but_other_scripts_stay_whole():
    assert tokens("SearchIndex") == ["searchindex", "search", "index"]
    assert tokens("HTTPServer2")[1:] == ["http", "server", "2"]
    assert tokens("café") == ["café"]
    # A plural acronym is one word: PDFs are not PD + Fs.
    assert tokens("PDFs") == ["pdfs"] and tokens("listAPIs") == ["listapis", "list", "apis"]


def test_width_and_case_are_folded():
    assert tokens("ＡＢＣ") == ["abc"]
    assert tokens("ｶﾀｶﾅ") == tokens("カタカナ")


def test_query_tokens_are_distinct_and_bounded():
    assert query_tokens("wal WAL Wal mode") == ["wal", "mode"]
    assert len(query_tokens(" ".join(f"w{i}" for i in range(200)))) == MAX_QUERY_TOKENS


def test_match_expressions_quote_every_term():
    assert strict_match(["a-b", 'x"y']) == '"a-b" "x""y"'
    assert prefix_match(["migrat", "wal"]) == '"migrat"* OR "wal"*'


def test_latin_text_takes_the_quick_path_to_the_same_tokens() -> None:
    """ASCII and Latin-1 text skip NFKC or the CJK scan: the tokens are those the full path gives."""
    from daemon.memory.tokenize import tokens

    latin = "naïve café · HTTPServer2 src/app/main.py ½ PDFs"
    assert tokens(latin) + tokens("部署") == tokens(latin + " 部署")
    assert tokens("ﬁle ＡＢＣ") == ["file", "abc"]  # NFKC still folds what needs it
