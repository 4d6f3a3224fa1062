"""Notes grounded in what happened (issue 38): the tools' evidence and the final answer's own structure
decide, on the labelled training set (tests/data/notes/training), built into a real OpenCode 1.18 database."""

from __future__ import annotations

import json
from pathlib import Path

import frontmatter
import pytest

from bench.bench_notes import sections_of
from bench.note_checks import is_failed_attempt
from daemon.capture.distill.structure import CAUSE, FAILED, FIX, NEXT, OUTCOME, read_blocks, structured
from tests.capture.corpora import build_corpus
from tests.capture.helpers import distill_once
from tests.capture.notes_set import load_set

TRAINING = Path(__file__).resolve().parents[2] / "data" / "notes" / "training" / "training-a.json"


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    """scenario → (its labels, its note's frontmatter post), distilled by one capture pass in a throwaway home."""
    import os

    home = tmp_path_factory.mktemp("home")
    saved = dict(os.environ)
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"),
                      XDG_DATA_HOME=str(home / "data"))
    try:
        name, scenarios = load_set(TRAINING)
        corpus = build_corpus(home / "corpora", name, scenarios)
        sessions = json.loads((corpus / "sessions.json").read_text())
        report = distill_once(corpus / "opencode.db")
        yield {n: (s, frontmatter.loads(Path(report.notes[s["session"]]).read_text())) for n, s in sessions.items()}
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_not_the_cause_paragraph_never_turns_the_final_fix_into_a_failed_attempt(notes):
    spec, post = notes["en-sqlite-locked"]
    sections = sections_of(post.content)
    attempts = [line for lines in sections.values() for line in lines if is_failed_attempt(line)]
    assert attempts and not any("BEGIN IMMEDIATE" in line for line in attempts)
    assert "not the cause" not in post["description"] and "no longer fails" in post["description"]
    outcome = sections["Outcome / Current State"]
    assert [line.split(":", 1)[0] for line in outcome[1:3]] == ["Root cause", "Fix"]  # outcome, cause, fix
    assert "BEGIN IMMEDIATE" in outcome[2]
    # The WAL attempt is stated once, as the attempt the tools saw fail; the "not the cause" block names it.
    assert [line for line in attempts if "WAL" in line] == attempts[:1]
    assert not any("What was not the cause" in line for line in sections["Problems & Fixes"])


def test_the_cause_and_the_fix_of_a_cjk_answer_stand_under_its_outcome(notes):
    for name, cause, fix in (("zh-cargo-retain", "不可变借用", "retain("), ("ko-pip-pydantic", "pydantic>=2", "2.6.4"),
                             ("ja-jest-date", "UTC", "Intl.DateTimeFormat")):
        _, post = notes[name]
        outcome = sections_of(post.content)["Outcome / Current State"]
        assert cause in outcome[1] and fix in outcome[2], name
        attempts = [line for lines in sections_of(post.content).values() for line in lines if is_failed_attempt(line)]
        assert not any(fix in line for line in attempts), name


def test_a_requirement_the_user_changed_is_no_longer_stated_as_done(notes):
    _, post = notes["en-export-jsonl"]
    body = post.content.split("## Outcome", 1)[1]
    assert "writes a CSV file" not in body and "JSON Lines" in body


def test_problems_hold_real_failures_only(notes):
    problems = {n: sections_of(post.content).get("Problems & Fixes", []) for n, (_, post) in notes.items()}
    assert not any("grep -rn ERROR" in line for line in problems["en-sqlite-locked"])  # it found lines: exit 0
    assert not any("--format csv" in line for line in problems["en-export-jsonl"])  # meant to fail, and did
    assert any("KeyError: 'customer_id'" in line for line in problems["en-invoice-keyerror"])  # not the frame's docstring
    assert not any("Raises an error" in line for line in problems["en-invoice-keyerror"])


def test_an_unresolved_session_keeps_its_next_steps_and_marks_its_withdrawn_fix(notes):
    _, post = notes["en-go-race"]
    sections = sections_of(post.content)
    assert post["description"].startswith("Not fixed yet")
    assert any("channel" in line for line in sections["Follow-ups"]) and any("-count=20" in line for line in sections["Follow-ups"])
    assert any(is_failed_attempt(line) and "sync.Mutex" in line for line in sections["Problems & Fixes"])
    assert not any("fixes the race" in line for line in sections["Outcome / Current State"])


def test_a_label_covers_its_own_paragraph_and_a_label_alone_the_list_under_it():
    answer = ("## Summary\n\nThe import works again.\n\n**Root cause:** a deferred transaction.\n\n"
              "**What was not the cause:** the journal mode.\n\nThe logs show the same error.\n\n"
              "**Next steps:**\n- add a retry\n- watch the nightly run\n\nThanks.")
    roles = [(b.role, b.content) for b in read_blocks(answer)]
    assert roles == [(OUTCOME, "The import works again."), (CAUSE, "a deferred transaction."),
                     (FAILED, "the journal mode."), (OUTCOME, "The logs show the same error."),
                     (NEXT, "add a retry"), (NEXT, "watch the nightly run"), (OUTCOME, "Thanks.")]
    assert structured(answer)
    assert [b.role for b in read_blocks("修复：改用 retain。\n\n原因：循环借用了 self.items。")] == [FIX, CAUSE]
    assert not structured("Root cause: one sentence that happens to open with a label.")  # one label is a sentence


def test_a_label_is_found_by_its_longest_phrase_and_a_bold_line_covers_the_paragraph_under_it():
    answer = ("### 根本原因\nAllow() 在锁外写 l.hits。\n\n### 不是原因的\n原因不是 buckets map。\n\n"
              "**원인**\n커밋 a41c9e2 에서 응답 형식이 바뀌었습니다.\n\n已修复：测试通过。")
    assert [b.role for b in read_blocks(answer)] == [CAUSE, FAILED, CAUSE, OUTCOME]


def test_a_withdrawal_takes_back_the_claim_it_names_not_the_one_before_it():
    from daemon.capture.distill.base import Entry
    from daemon.capture.distill.supersede import find_superseded
    from daemon.capture.distill.turns import split_turns

    said = ["fastkml-schema が pydantic<2 を固定しています。geoharvest 側の下限を緩めて pydantic を <2 に下げれば解決するはずです。",
            "さっきの推測は間違いでした。pydantic を <2 に下げる案は撤回します。"]
    turns = split_turns([Entry("user", "text", text="pip install が失敗します"),
                         *[Entry("assistant", "text", text=t) for t in said]])
    found = find_superseded(turns, "ja")
    withdrawn = [c for a in found.attempts for c in a.claims]
    assert any("下げれば" in c for c in withdrawn) and not any(c.startswith("fastkml-schema が") for c in withdrawn)


def test_the_same_sessions_written_by_opencode_2_give_the_same_notes(notes, tmp_path, monkeypatch):
    """OpenCode 2 stores the prompt as a JSON literal and the exit status in the tool's metadata: both reach the
    distiller, so each note reads as its 1.18 twin (ids and times aside)."""
    from tests.capture.notes_set_v2 import write_v2_corpus

    for key, value in (("HOME", tmp_path), ("XDG_CONFIG_HOME", tmp_path / "config"),
                       ("XDG_STATE_HOME", tmp_path / "state"), ("XDG_DATA_HOME", tmp_path / "data")):
        monkeypatch.setenv(key, str(value))
    name, scenarios = load_set(TRAINING)
    corpus = write_v2_corpus(tmp_path / "corpora", name, scenarios)
    sessions = json.loads((corpus / "sessions.json").read_text())
    report = distill_once(corpus / "opencode.db")
    for scenario, (_, post) in notes.items():
        twin = frontmatter.loads(Path(report.notes[sessions[scenario]["session"]]).read_text())
        assert twin["description"] == post["description"], scenario
        assert twin.content.split("## ", 1)[1] == post.content.split("## ", 1)[1], scenario


def test_a_later_turn_that_rewrites_what_an_earlier_one_wrote_supersedes_its_result():
    from daemon.capture.distill.base import Entry
    from daemon.capture.distill.followups import replaced_later
    from daemon.capture.distill.turns import split_turns

    def edit(old: str, new: str) -> Entry:
        return Entry("assistant", "tool", tool="edit", input={"filePath": "/w/main.tf", "oldString": old, "newString": new},
                     status="completed")

    first, second = split_turns([
        Entry("user", "text", text="Add a lifecycle rule that deletes objects after 30 days."),
        edit("status = \"Enabled\"", "status = \"Enabled\"\n    expiration { days = 30 }"),
        Entry("assistant", "text", text="Added the rule: objects expire after 30 days."),
        Entry("user", "text", text="Compliance came back: objects must be kept 400 days; expire them at 400 days."),
        edit("    expiration { days = 30 }", "    expiration { days = var.retention_days }"),
        Entry("assistant", "text", text="Objects now expire after retention_days (400)."),
    ])
    assert replaced_later("Added the rule: objects expire after 30 days.", first, [second])
    # A later turn that only adds to the file leaves the earlier result standing.
    _, added = split_turns([
        Entry("user", "text", text="Add a lifecycle rule that deletes objects after 30 days."),
        edit("status = \"Enabled\"", "status = \"Enabled\"\n    expiration { days = 30 }"),
        Entry("assistant", "text", text="Added the rule: objects expire after 30 days."),
        Entry("user", "text", text="Also tag the objects so the expiry rule shows in the console."),
        edit("bucket = var.name", "bucket = var.name\n  tags = { expiry = \"30d\" }"),
        Entry("assistant", "text", text="Tagged the bucket."),
    ])
    assert not replaced_later("Added the rule: objects expire after 30 days.", first, [added])
