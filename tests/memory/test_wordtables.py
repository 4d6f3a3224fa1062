"""Word tables kept for short commands, and CJK patterns compiled only for CJK text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.memory import prompt_terms, script_re, stopwords, tokenize, wordforms, wordtables


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state folder `wordtables` keeps its tables in, as a new process would start."""
    monkeypatch.setattr(wordtables, "_folder", tmp_path)
    monkeypatch.setattr(wordtables, "_tables", None)
    return tmp_path


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordtables, "_tables", None)  # what a new process has read: nothing


def _never() -> list[str]:
    raise AssertionError("built again although the file holds the table")


def test_a_table_is_built_once_and_read_by_the_next_process(kept: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "builder.py"
    source.write_text("# builds the table\n")
    assert wordtables.table("t", [str(source)], lambda: ["a", "b"], wordtables.strings) == ["a", "b"]
    assert oct((kept / wordtables.FILE).stat().st_mode & 0o777) == "0o600"
    _new_process(monkeypatch)
    assert wordtables.table("t", [str(source)], _never, wordtables.strings) == ["a", "b"]

    # The module that builds it changed: built again, and the file holds the new table.
    source.write_text("# builds the table, differently now\n")
    _new_process(monkeypatch)
    assert wordtables.table("t", [str(source)], lambda: ["c"], wordtables.strings) == ["c"]
    _new_process(monkeypatch)
    assert wordtables.table("t", [str(source)], _never, wordtables.strings) == ["c"]


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", '{"t": {"key": "x", "value": 3}}', ""])
def test_a_damaged_file_is_built_again_and_rewritten(kept: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    (kept / wordtables.FILE).write_text(damage)
    assert wordtables.table("t", [], lambda: ["a"], wordtables.strings) == ["a"]
    assert json.loads((kept / wordtables.FILE).read_text())["t"]["value"] == ["a"]


def test_a_value_failing_its_check_is_built_again(kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wordtables.table("t", [], lambda: ["a"], wordtables.strings)
    data = json.loads((kept / wordtables.FILE).read_text())
    data["t"]["value"] = ["a", 7]  # a hand-edited or foreign file
    (kept / wordtables.FILE).write_text(json.dumps(data))
    _new_process(monkeypatch)
    assert wordtables.table("t", [], lambda: ["b"], wordtables.strings) == ["b"]


def test_without_a_folder_or_with_a_missing_one_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordtables, "_folder", None)
    assert wordtables.table("t", [], lambda: ["a"], wordtables.strings) == ["a"]
    missing = tmp_path / "gone"
    monkeypatch.setattr(wordtables, "_folder", missing)
    monkeypatch.setattr(wordtables, "_tables", None)
    assert wordtables.table("t", [], lambda: ["a"], wordtables.strings) == ["a"]
    assert not missing.exists()  # never a state folder of its own making


def test_the_kept_stop_words_and_glossary_are_the_ones_built(kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for cached in (stopwords.stop_tokens, wordforms._concepts):
        cached.cache_clear()
    try:
        built = (stopwords.stop_tokens(), wordforms._concepts())  # built, and written
        _new_process(monkeypatch)
        for cached in (stopwords.stop_tokens, wordforms._concepts):
            cached.cache_clear()
        monkeypatch.setattr(stopwords, "_build_stop_tokens", _never)
        monkeypatch.setattr(wordforms, "_build_concepts", _never)
        assert (stopwords.stop_tokens(), wordforms._concepts()) == built
    finally:
        for cached in (stopwords.stop_tokens, wordforms._concepts):
            cached.cache_clear()
    assert "the" in built[0][0] and "的" in built[0][1]
    assert "部署" in built[1][0]["deploy"].alternatives() and "deployments" in built[1][0]["deploy"].alternatives()


def test_memoryd_context_keeps_the_tables_in_the_state_folder(home, worktree) -> None:
    (worktree / ".memory" / "gotcha").mkdir(parents=True)
    (worktree / ".memory" / "gotcha" / "lockfile.md").write_text("---\ntitle: pnpm lockfile drift breaks deploys\nkind: gotcha\n---\nRun pnpm install --frozen-lockfile in CI.\n")
    args = [sys.executable, "-m", "daemon", "context", "--json", "--dir", str(worktree), "--prompt", "the deploy lockfile drifts"]
    first = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True, env=os.environ)
    kept = home.state_dir / wordtables.FILE
    assert set(json.loads(kept.read_text())) == {"stop tokens", "concepts"}
    written = kept.stat().st_mtime_ns
    again = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True, env=os.environ)
    assert json.loads(again.stdout) == json.loads(first.stdout)
    assert json.loads(first.stdout)["relevant"], "the gotcha about the lockfile is previewed"
    assert kept.stat().st_mtime_ns == written  # read, not built and written again


# The patterns made lazy: each must match no ASCII character, or an ASCII text would be
# answered "no match" wrongly.
LAZY = {
    "tokenize._CJK_RUN": tokenize._CJK_RUN,
    "stopwords.CJK": stopwords.CJK,
    "stopwords._HIRAGANA": stopwords._HIRAGANA,
    "wordforms._SPACED": wordforms._SPACED,
    "wordforms._ANY_CJK": wordforms._ANY_CJK,
    "prompt_terms._WORD_RUN": prompt_terms._WORD_RUN,
}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_a_lazy_pattern_matches_no_ascii_and_answers_as_the_regex_does(name: str) -> None:
    lazy = LAZY[name]
    assert isinstance(lazy, script_re.NonAscii)
    regex = re.compile(lazy.source)
    assert not any(regex.search(chr(c)) for c in range(128))
    for text in ("部署到 staging 失败", "モデルに 모델에 뷰모델", "plain ascii text", "café ñ", "した まで"):
        assert [m.group() for m in lazy.finditer(text)] == [m.group() for m in regex.finditer(text)]
        assert lazy.findall(text) == regex.findall(text)
        assert bool(lazy.search(text)) == bool(regex.search(text))
        assert bool(lazy.match(text)) == bool(regex.match(text))


def test_with_the_tables_kept_an_ascii_prompt_compiles_no_cjk_pattern(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from daemon.memory import prompt_terms, script_re, tokenize, stopwords, wordforms, wordtables\n"
        "wordtables.keep_in(Path(sys.argv[1]))\n"
        "prompt_terms.prompt_forms('why does the deploy lockfile drift', prompt_terms.content_terms('why does the deploy lockfile drift'))\n"
        "tokenize.tokens('snake_case HTTPServer2 src/app/main.py')\n"
        "lazy = [v for m in (prompt_terms, tokenize, stopwords, wordforms) for v in vars(m).values() if isinstance(v, script_re.NonAscii)]\n"
        "print(len(lazy), sum(p._compiled is not None for p in lazy))\n"
    )
    run = [sys.executable, "-c", script, str(tmp_path)]
    subprocess.run(run, capture_output=True, text=True, timeout=60, check=True)  # builds the tables (CJK words in them)
    count, compiled = map(int, subprocess.run(run, capture_output=True, text=True, timeout=60, check=True).stdout.split())
    assert count >= 6 and compiled == 0
