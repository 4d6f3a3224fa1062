"""The extractive distiller on synthetic corpora in real OpenCode-shaped SQLite databases.

What a reader of the note cares about: every turn's result in Outcome, each statement
once, cause / decision / lesson sentences found in every language, a description that
answers rather than repeats the question, Files that are the session's own work.
"""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from bench.bench_notes import equals_prompt, first_prompt, sections_of
from daemon.capture.distill import cues
from tests.capture.corpora import build_corpus
from tests.capture.corpus_scenarios import CORPORA
from tests.capture.helpers import distill_once

OUTCOME, DECISIONS, FINDINGS, PROBLEMS, FILES, FOLLOWUPS = (
    "Outcome / Current State",
    "Decisions & Rationale",
    "Findings & Learnings",
    "Problems & Fixes",
    "Files, Systems & Commands",
    "Follow-ups",
)


def distil_corpus(home, tmp_path: Path, name: str) -> tuple[dict, dict[str, str], Path]:
    """Build one synthetic corpus, distil it once; return sessions.json, notes by scenario, the db."""
    import json

    corpus = build_corpus(tmp_path / "corpora", name, CORPORA[name])
    sessions = json.loads((corpus / "sessions.json").read_text())
    report = distill_once(corpus / "opencode.db")
    notes = {n: Path(report.notes[s["session"]]).read_text() for n, s in sessions.items() if s["session"] in report.notes}
    return sessions, notes, corpus / "opencode.db"


def section(note: str, name: str) -> list[str]:
    return sections_of(frontmatter.loads(note).content).get(name, [])


# --- golden cue tables: a sentence and the kind each language's wording gives it --------

GOLDEN = [
    # English
    ("Root cause: the cache key hashed package-lock.json.", cues.FINDING),
    ("Decision: always deploy with pnpm, never npm.", cues.DECISION),
    ("Lesson: alembic autogenerate ignores Python-side defaults.", cues.LESSON),
    ("Gotcha: the key must include the amount.", cues.GOTCHA),
    ("It turns out the worker reads WORKER_DEADLINE_S at import time.", cues.FINDING),
    ("Fixed the rsync target in scripts/deploy.sh.", cues.FIX),
    # Chinese
    ("原因：REDIS_URL 指向了旧主机。", cues.FINDING),
    ("决定：所有连接串一律从环境变量读取。", cues.DECISION),
    ("已修复 config/settings.py 的超时问题。", cues.FIX),
    ("改为从环境变量读取 REDIS_URL。", cues.FIX),
    ("教训：上线前先在预发环境跑一遍迁移。", cues.LESSON),
    # Japanese
    ("原因はトークンの有効期限がローカル時刻だったことです。", cues.FINDING),
    ("時刻は常に UTC で扱う方針に決定しました。", cues.DECISION),
    ("auth/token.py を修正しました。", cues.FIX),
    ("対策として再試行を追加しました。", cues.FIX),
    ("教訓: マイグレーションは必ず --sql で確認する。", cues.LESSON),
    # Korean
    ("원인: 캐시 키가 package-lock.json을 해시했습니다.", cues.FINDING),
    ("로그를 보니 원인은 ./data 폴더의 권한 문제입니다.", cues.FINDING),
    ("named volume을 쓰기로 결정했습니다.", cues.DECISION),
    ("문제를 해결했습니다.", cues.FIX),
    ("ci.yml의 키를 hashFiles로 고쳤습니다.", cues.FIX),
    ("볼륨을 pgdata로 바꿨습니다.", cues.FIX),
    ("교훈: 볼륨 권한은 먼저 확인한다.", cues.LESSON),
]


@pytest.mark.parametrize(("sentence", "kind"), GOLDEN, ids=[g[0][:24] for g in GOLDEN])
def test_each_languages_cues_give_the_sentence_its_kind(sentence, kind):
    assert cues.kind_of(sentence) == kind


def test_a_plain_sentence_has_no_kind():
    assert cues.kind_of("The build takes about four minutes on the runner.") is None
    assert cues.kind_of("빌드는 러너에서 4분 정도 걸립니다.") is None


# --- whole notes, per corpus ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_notes_keep_the_facts_and_say_each_thing_once(home, tmp_path, name):
    sessions, notes, db = distil_corpus(home, tmp_path, name)
    for scenario, spec in sessions.items():
        if spec["junk"]:
            continue
        note = notes[scenario]
        missing = [fact for fact in spec["facts"] if fact not in note]
        assert not missing, f"{scenario} lost {missing}:\n{note}"
        present = [s for s in spec["absent"] if s in note]
        assert not present, f"{scenario} still says {present}:\n{note}"
        seen: dict[str, str] = {}
        for heading, lines in sections_of(frontmatter.loads(note).content).items():
            for line in lines:
                assert seen.setdefault(line, heading) == heading, f"{scenario}: {line!r} in two sections"
        description = frontmatter.loads(note)["description"]
        assert description and not equals_prompt(description, first_prompt(db, spec["session"]))
        assert len(description) <= 200
        for line in section(note, FILES):
            assert ".memory" not in line and f"`{spec['project']}`" not in line


def test_korean_cause_fix_and_decision_land_in_their_sections(home, tmp_path):
    _, notes, _ = distil_corpus(home, tmp_path, "synthetic-ko")
    ci = notes["ko-ci-cache"]
    assert any("원인" in line for line in section(ci, FINDINGS))
    assert "hashFiles('**/pnpm-lock.yaml')" in frontmatter.loads(ci)["description"]
    compose = notes["ko-compose"]
    assert any("결정" in line for line in section(compose, DECISIONS))
    assert any("원인은" in line for line in section(compose, FINDINGS))
    assert any("could not change permissions" in line for line in section(compose, PROBLEMS))


def test_japanese_and_chinese_causes_and_decisions(home, tmp_path):
    _, ja, _ = distil_corpus(home, tmp_path, "synthetic-ja")
    assert any("原因は" in line for line in section(ja["ja-login-test"], FINDINGS))
    assert any("決定" in line for line in section(ja["ja-login-test"], DECISIONS))
    assert any(line.startswith("教訓") for line in section(ja["ja-migration"], FINDINGS))
    _, zh, _ = distil_corpus(home, tmp_path / "zh", "synthetic-zh")
    assert any(line.startswith("决定") for line in section(zh["zh-redis-timeout"], DECISIONS))
    assert any("发现" in line for line in section(zh["zh-redis-timeout"], FINDINGS))


def test_a_continued_session_keeps_the_earlier_result_and_drops_the_done_follow_up(home, tmp_path):
    _, notes, _ = distil_corpus(home, tmp_path, "synthetic-en")
    note = notes["continued-deploy"]
    outcome = section(note, OUTCOME)
    assert any("prod:/srv/shopfront" in line for line in outcome), outcome
    assert any("healthz" in line for line in outcome), outcome
    assert not section(note, FOLLOWUPS)
    # The Chinese session's follow-up was done by its second request, too.
    _, zh, _ = distil_corpus(home, tmp_path / "zh", "synthetic-zh")
    assert not section(zh["zh-lint"], FOLLOWUPS)


def test_files_say_what_happened_and_fold_read_only_commands(home, tmp_path):
    _, notes, _ = distil_corpus(home, tmp_path, "synthetic-en")
    files = section(notes["long-refactor"], FILES)
    assert "`payments/gateway.py` (read, edited): `old29` → `new29`" in files  # a one-line edit is the change itself
    assert "`payments/retry.py` (created)" in files
    assert not [line for line in files if "sed -n" in line or ".memory" in line]
    assert "`/home/dev/src/payments` (read)" not in files and "`.` (read)" not in files
    assert len(notes["long-refactor"]) <= 2500


def test_an_open_follow_up_stays(home, tmp_path, fixture_db, fixture_sessions):
    report = distill_once()
    note = Path(report.notes[fixture_sessions["missing-file"]["session"]]).read_text()
    assert any("create config.py" in line for line in section(note, FOLLOWUPS))
    secrets = Path(report.notes[fixture_sessions["secrets"]["session"]]).read_text()
    # "X; never hard-code the key." is one statement: no clause cut off on its own.
    assert not [line for line in frontmatter.loads(secrets).content.splitlines() if line.startswith("- never")]


def test_a_short_one_line_edit_shows_the_change_and_a_longer_later_edit_hides_it():
    from daemon.capture.distill.base import Entry
    from daemon.capture.distill.touched import Touched

    def edit(path: str, old: str, new: str) -> Entry:
        return Entry("assistant", "tool", tool="edit", input={"filePath": path, "oldString": old, "newString": new},
                     status="completed")

    touched = Touched("/w")
    touched.add_tool(edit("/w/requirements.txt", "pydantic==1.10.13", "pydantic==2.6.4"))
    touched.add_tool(edit("/w/a.py", "x = 1", "x = 2"))
    touched.add_tool(edit("/w/a.py", "def f():\n    pass", "def f():\n    return 1"))
    touched.add_tool(edit("/w/.pgpass", "[REDACTED:pgpass_password]", "[REDACTED:pgpass_password]"))
    assert touched.lines() == ["`requirements.txt` (edited): `pydantic==1.10.13` → `pydantic==2.6.4`", "`a.py` (edited)",
                               "`.pgpass` (edited)"]


def test_read_only_commands_fold_into_their_files_and_patches_and_redirects_name_theirs():
    from daemon.capture.distill.base import Entry
    from daemon.capture.distill.touched import Touched

    touched = Touched("/home/dev/src/pay")
    for command in (
        "sed -n '1,40p' payments/gateway.py",
        "nl -ba payments/gateway.py | sed -n '41,80p'",
        "head -n 20 /home/dev/src/pay/.memory/ROOT.md",
        "pytest -q",
        "cat notes.txt > copy.txt",
    ):
        touched.add_tool(Entry("assistant", "tool", tool="bash", input={"command": command}))
    patch = "*** Begin Patch\n*** Add File: payments/retry.py\n+x\n*** Update File: payments/gateway.py\n*** End Patch"
    touched.add_tool(Entry("assistant", "tool", tool="apply_patch", input={"patchText": patch}))
    touched.add_tool(Entry("assistant", "tool", tool="list", input={"path": "/home/dev/src/pay"}))
    assert touched.lines() == [
        "`payments/gateway.py` (read, edited)",
        "`copy.txt` (written)",
        "`payments/retry.py` (created)",
        "`pytest -q`",
        "`cat notes.txt > copy.txt`",
    ]
