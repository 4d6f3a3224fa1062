"""A session's "Lesson:" / "Gotcha:" / "Decision:" lines become memories that follow the note."""

from __future__ import annotations

from pathlib import Path

import frontmatter
from click.testing import CliRunner

from daemon.capture.distill.base import Distilled
from daemon.capture.distill.extractive import ExtractiveDistiller
from daemon.capture.lessons import statements
from daemon.capture.pipeline import Capturer, PassOptions
from daemon.cli.main import cli
from daemon.config import Config, load_settings
from daemon.opencode.reader import OpenCodeReader
from daemon.state import StateDB
from tests.capture.corpora import T0, build_corpus, text
from tests.capture.corpus_scenarios import SUBAGENTS
from tests.capture.helpers import add_message, max_time

LESSON = "alembic autogenerate ignores Python-side defaults; set server_default on the column."


def capture_for(db: Path, distiller=None, **notes) -> Capturer:
    settings, paths = load_settings()
    for key, value in notes.items():
        setattr(settings.notes, key, value)
    clock = (max_time(db) + 60_000) / 1000
    return Capturer(Config(settings, paths), OpenCodeReader(db), StateDB(paths.state_db), distiller or ExtractiveDistiller(),
                   clock=lambda: clock)


def close(capture: Capturer) -> None:
    capture.reader.close()
    capture.state.close()


def memories(root: Path, kind: str) -> list[Path]:
    folder = root / kind
    return sorted(p for p in folder.glob("*.md") if p.name != "index.md") if folder.is_dir() else []


def lesson_corpus(tmp_path: Path) -> tuple[Path, str]:
    corpus = build_corpus(tmp_path, "synthetic-lesson", [s for s in SUBAGENTS if s.name == "lesson-alembic"])
    return corpus / "opencode.db", "ses_lesson000synthetic"


def test_a_lesson_line_is_one_lesson_memory_through_redistills_and_a_continuation(home, tmp_path):
    db, sid = lesson_corpus(tmp_path)
    for _ in range(4):  # the first distill, then three forced re-distills
        capture = capture_for(db)
        capture.run_pass(PassOptions(force=True))
        close(capture)
    (lesson,) = memories(home.global_root, "lesson")
    post = frontmatter.load(lesson)
    assert post["kind"] == "lesson" and post.content.startswith(LESSON)
    note = next((home.global_root / "sessions").glob("*.md"))
    assert f"](../sessions/{note.name})" in post.content and f"session `{sid}`" in post.content

    at = max_time(db) + 1000
    add_message(db, sid, "msg_more_u", "user", [("prt_more_u", text("Also backfill existing rows with EUR"))], at)
    add_message(db, sid, "msg_more_a", "assistant",
                [("prt_more_a", text("Backfilled 1,204 rows: UPDATE entries SET currency = 'EUR' WHERE currency IS NULL."))],
                at + 10)
    capture = capture_for(db)
    assert capture.run_pass().distilled == [sid]
    close(capture)
    assert memories(home.global_root, "lesson") == [lesson]
    assert "Backfilled 1,204 rows" in note.read_text()

    # The inventory (inspect) is scoped to one project; the listing serves every tree.
    result = CliRunner().invoke(cli, ["list", "--kind", "lesson"])
    assert result.exit_code == 0, result.output
    assert "alembic autogenerate ignores Python-side defaults" in result.output, result.output
    assert result.output.count("alembic autogenerate") == 1, result.output


class Scripted:
    """A model at the unit's edge: answers each call with the next scripted note body."""

    name = "openai:scripted"
    concurrency = 1

    def __init__(self, bodies: list[str]) -> None:
        self.bodies = bodies

    def distill(self, transcript):
        return Distilled(junk=False, body=self.bodies.pop(0), summary="Scripted note.", distiller=self.name)

    def close(self) -> None:
        pass


def test_a_memory_follows_its_note_and_goes_when_the_note_drops_it(home, tmp_path):
    db, _ = lesson_corpus(tmp_path)
    first = "## Findings & Learnings\n\n- **Gotcha:** `alembic check` passes even when server defaults differ.\n"
    second = "## Decisions & Rationale\n\n- Decision: every new column gets a server_default.\n"
    capture = capture_for(db, Scripted([first, second]))
    capture.run_pass()
    assert len(memories(home.global_root, "gotcha")) == 1
    capture.run_pass(PassOptions(force=True))
    close(capture)
    assert memories(home.global_root, "gotcha") == []
    (decision,) = memories(home.global_root, "decision")
    assert frontmatter.load(decision)["title"] == "every new column gets a server_default"


def test_two_sessions_share_a_memory_until_both_drop_it(home, tmp_path):
    db, sid = lesson_corpus(tmp_path)
    other = "ses_other000synthetic"
    from tests.capture.corpora import add_session

    add_session(db, other, "Second look at defaults", "/home/dev/src/ledger", T0 + 10_000_000)
    add_message(db, other, "msg_o_u", "user", [("prt_o_u", text("Check the other table for the same default bug"))],
                T0 + 10_001_000)
    add_message(db, other, "msg_o_a", "assistant", [("prt_o_a", text(f"Same cause in invoices.\nLesson: {LESSON}"))],
                T0 + 10_002_000)
    capture = capture_for(db)
    capture.run_pass()
    close(capture)
    (lesson,) = memories(home.global_root, "lesson")
    assert f"`{sid}`" in lesson.read_text() and f"`{other}`" in lesson.read_text()


def test_the_setting_turns_it_off(home, tmp_path):
    db, _ = lesson_corpus(tmp_path)
    capture = capture_for(db, extract_memories=False)
    capture.run_pass()
    close(capture)
    assert memories(home.global_root, "lesson") == []


def test_statements_are_read_in_every_language_and_once():
    note = (
        "## Findings & Learnings\n\n- 教训：上线前先在预发环境跑一遍迁移。\n- 교훈: 볼륨 권한은 먼저 확인한다.\n"
        "- Lesson: keep the lockfile.\n- Lesson: keep the lockfile.\n\n## Outcome / Current State\n\nLesson learned nothing here\n"
    )
    found = [(s.kind, s.title) for s in statements(note)]
    assert found == [
        ("lesson", "上线前先在预发环境跑一遍迁移"),
        ("lesson", "볼륨 권한은 먼저 확인한다"),
        ("lesson", "keep the lockfile"),
    ]


def test_an_extracted_memory_carries_its_project_a_context_line_and_a_whole_description(home, tmp_path):
    db, sid = lesson_corpus(tmp_path)
    capture = capture_for(db)
    capture.run_pass()
    close(capture)
    (lesson,) = memories(home.global_root, "lesson")
    post = frontmatter.load(lesson)
    note = frontmatter.load(next((home.global_root / "sessions").glob("*.md")))
    assert post["project"] == note["project"] and post["project"]  # scoped like its note
    assert Path(note["project"]).name in post["tags"]
    assert f"Context: {note['title']} (project {Path(note['project']).name})." in post.content
    assert post["description"] == LESSON  # the whole statement, not a cut
    # Re-reading keeps the statement apart from its context line: a redistill writes nothing.
    before = lesson.read_bytes()
    capture = capture_for(db)
    capture.run_pass(PassOptions(force=True))
    close(capture)
    assert lesson.read_bytes() == before


def test_a_title_that_leans_on_what_came_before_gets_its_subject():
    note = (
        '---\ntitle: "CI secrets for the deploy workflow"\nproject: /home/dev/src/shop\n---\n\n'
        "## Decisions & Rationale\n\n- Decision: load them with `gh secret set -f .env.ci` so none is typed by hand.\n"
        "- Decision: pnpm is the only package manager of the repo.\n- 决定：它只在预发环境运行。\n"
    )
    titles = [s.title for s in statements(note)]
    assert titles[0] == "CI secrets for the deploy workflow: load them with `gh secret set -f .env.ci` so none is typed by hand"
    assert titles[1] == "pnpm is the only package manager of the repo"
    assert titles[2] == "CI secrets for the deploy workflow: 它只在预发环境运行"


def test_long_statements_are_cut_at_a_word_never_inside_one():
    from daemon.capture.statements import _title
    from daemon.memory.checks import DESCRIPTION_CHARS, derive_description

    words = "Keep maxsize=100 for the LRU cache because the comparison of the two settings showed memory growth " * 3
    title = _title(words)
    assert title.endswith("…") and title[:-1] in words and words[len(title) - 1] == " "
    description = derive_description(words)
    assert len(description) <= DESCRIPTION_CHARS and description.endswith("…")
    assert words.startswith(description[:-1]) and words[len(description) - 1] == " "


def test_the_quick_look_for_labels_never_hides_a_labelled_statement(monkeypatch):
    """`statements` skips the parse of a note with no label word: over mixed fragments (labels
    in several languages, bold, wrapped lines, headings, odd line separators), whatever the
    parse finds, the quick look lets through."""
    import random

    from daemon.capture import lessons
    from daemon.capture.distill import cues

    pieces = ["Lesson", "Les**son**", "lessons\nlearned", "**Gotcha:**", "Decision", "decided", "Rule", "教训", "注意\n事项",
              "배운 점", "## Heading", "## Decisions & Rationale", ": ", "：", "- ", "1. ", "> ", "\n", "\n\n", "\u2028", "\x1c",
              "```\n", "| a |", " always pin the lockfile", " x", "watch\nout", "**", "  ", "Outcome.", "落とし穴"]
    rng = random.Random(7)
    texts = ["- Les**son**: keep the lockfile honest", "Lessons\nlearned: pin it", "注意\n事项：不要用 npm 安装依赖"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))) for _ in range(4000)]
    looked = {text: cues.may_hold_memory_label(text) for text in texts}
    monkeypatch.setattr(cues, "may_hold_memory_label", lambda text: True)
    found = [text for text in texts if lessons.statements(text)]
    assert found, "no fragment made a statement: the check checks nothing"
    assert [text for text in found if not looked[text]] == []
    assert any(not v for v in looked.values())
