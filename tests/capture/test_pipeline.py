"""Capture passes on the real OpenCode fixture: notes, facts, secrets, edits, resume."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import frontmatter
import pytest
from click.testing import CliRunner

from daemon.capture.distill.base import SECTIONS, DistillError
from daemon.capture.distill.extractive import ExtractiveDistiller
from daemon.capture.pipeline import Capturer, PassOptions
from daemon.cli.main import cli
from daemon.config import Config, load_settings
from daemon.opencode.reader import OpenCodeReader
from daemon.state import StateDB
from tests.capture.helpers import add_message, max_time

NOW = 1796040000.0  # after every fixture row (2026-11-30T09:25Z), in seconds


class Counting(ExtractiveDistiller):
    """The real extractive distiller, counting its calls; optionally failing."""

    def __init__(self, fail_for: set[str] | None = None, retryable: bool = True) -> None:
        self.calls: list[str] = []
        self.fail_for = fail_for or set()
        self.retryable = retryable

    def distill(self, transcript):
        self.calls.append(transcript.session.id)
        if transcript.session.id in self.fail_for:
            raise DistillError("model server said no", retryable=self.retryable)
        return super().distill(transcript)


def make_capture(distiller=None, now: float = NOW, **capture_settings) -> Capturer:
    settings, paths = load_settings()
    for key, value in capture_settings.items():
        setattr(settings.capture, key, value)
    reader = OpenCodeReader(paths.opencode_db)
    return Capturer(Config(settings, paths), reader, StateDB(paths.state_db), distiller or Counting(), clock=lambda: now)


def close(capture: Capturer) -> None:
    capture.reader.close()
    capture.state.close()


def notes_in(root: Path) -> list[Path]:
    # index.md is compiled beside the notes (distill compiles the trees it wrote into).
    return sorted(p for p in root.rglob("*.md") if p.parent.name == "sessions" and p.name != "index.md")


def all_written_files(home) -> list[Path]:
    return [p for p in home.root.rglob("*") if p.is_file() and p != home.opencode_db and "opencode.db" not in p.name]


def test_fixture_end_to_end(home, fixture_db, fixture_sessions):
    before = hashlib.sha256(fixture_db.read_bytes()).hexdigest()
    mtime = fixture_db.stat().st_mtime_ns
    capture = make_capture()
    report = capture.run_pass()
    roots = [s for s in fixture_sessions.values() if not s["junk"]]
    assert len(report.distilled) == 6 and len(report.junk) == 1 and not report.failed

    notes = notes_in(home.global_root)
    assert len(notes) == 6
    by_session = {frontmatter.load(n)["session_id"]: n for n in notes}
    for scenario in roots:
        note = by_session[scenario["session"]]
        text = note.read_text()
        for fact in scenario["facts"]:
            assert fact in text, f"{note.name} lost fact {fact!r}"
        meta = frontmatter.load(note).metadata
        assert meta["kind"] == "session" and meta["project"] == scenario["project"]
        assert {"title", "description", "started", "updated", "tags"} <= set(meta)
        assert f"> Source: OpenCode session `{scenario['session']}`" in text
        headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
        assert headings and all(h in SECTIONS for h in headings)
        assert oct(note.stat().st_mode & 0o777) == "0o600"
    junk = fixture_sessions["junk-hello"]["session"]
    assert junk not in by_session and capture.state.get(junk).status == "junk"
    for scenario in fixture_sessions.values():  # subagents are in their parent's note
        for child in scenario["children"]:
            assert child not in by_session and capture.state.get(child) is None

    forbidden = [f for s in fixture_sessions.values() for f in s["forbidden"]]
    for path in all_written_files(home):
        data = path.read_bytes()
        for secret in forbidden:
            assert secret.encode() not in data, f"{secret} leaked into {path}"
    assert hashlib.sha256(fixture_db.read_bytes()).hexdigest() == before
    assert fixture_db.stat().st_mtime_ns == mtime

    # A second pass: everything unchanged, not one distiller call.
    calls = len(capture.distiller.calls)
    again = capture.run_pass()
    assert again.unchanged == 7 and not again.distilled and len(capture.distiller.calls) == calls
    close(capture)


def test_continued_session_rewrites_the_same_note(home, fixture_db, fixture_sessions):
    sid = fixture_sessions["deploy-pnpm"]["session"]
    capture = make_capture()
    capture.run_pass()
    (note,) = [n for n in notes_in(home.global_root) if frontmatter.load(n)["session_id"] == sid]
    at = max_time(fixture_db) + 1000
    add_message(fixture_db, sid, "msg_zzzz1", "user", [("prt_zzzz1", {"type": "text", "text": "Also pin Node 22 in .nvmrc"})], at)
    add_message(
        fixture_db, sid, "msg_zzzz2", "assistant",
        [("prt_zzzz2", {"type": "text", "text": "Done: .nvmrc now pins Node 22 because CI uses it."})], at + 5,
    )
    capture.clock = lambda: (at + 60_000) / 1000
    calls = len(capture.distiller.calls)
    report = capture.run_pass()
    assert report.distilled == [sid]
    assert capture.distiller.calls[calls:] == [sid]  # only the changed session costs a call
    assert len(notes_in(home.global_root)) == 6
    assert ".nvmrc now pins Node 22" in note.read_text()
    assert frontmatter.load(note)["updated"] > frontmatter.load(note)["started"]
    close(capture)


def test_moved_rows_with_same_content_cost_no_call(home, fixture_db, fixture_sessions):
    import sqlite3

    sid = fixture_sessions["cjk-deploy"]["session"]
    capture = make_capture()
    capture.run_pass()
    conn = sqlite3.connect(fixture_db)
    with conn:
        conn.execute("UPDATE session SET time_updated = time_updated + 5000 WHERE id = ?", (sid,))
    conn.close()
    calls = len(capture.distiller.calls)
    report = capture.run_pass()
    assert len(capture.distiller.calls) == calls
    assert report.unchanged == 7
    assert capture.state.get(sid).status == "distilled"
    close(capture)


def test_session_still_being_written_waits(home, fixture_db, fixture_sessions):
    newest = max_time(fixture_db)
    capture = make_capture(now=(newest + 1000) / 1000, settle_seconds=3)
    report = capture.run_pass()
    last = fixture_sessions["deploy-pnpm"]["session"]  # the continued one is the newest
    assert report.settling == [last] and len(report.distilled) == 5
    assert capture.state.get(last).status == "settling"
    capture.clock = lambda: (newest + 4000) / 1000
    report = capture.run_pass()
    assert report.distilled == [last]
    close(capture)


def test_limit_and_offset_follow_oldest_first(home, fixture_db):
    capture = make_capture()
    first = capture.run_pass(PassOptions(limit=2))
    with OpenCodeReader(fixture_db) as reader:
        roots = [s.id for s in reader.sessions() if not s.parent_id]
    assert first.distilled + first.junk == roots[:2]
    second = capture.run_pass(PassOptions(offset=5))
    assert second.distilled + second.junk == roots[5:]
    close(capture)


def test_failures_retry_then_open_the_circuit_until_the_session_changes(home, fixture_db, fixture_sessions):
    sid = fixture_sessions["big-log"]["session"]
    distiller = Counting(fail_for={sid})
    capture = make_capture(distiller, max_failed_passes=2)
    first = capture.run_pass()
    assert (sid, "model server said no") in first.pending and len(first.distilled) == 5
    assert capture.state.get(sid).status == "retry"
    second = capture.run_pass()
    assert second.failed == [(sid, "model server said no")] and second.exit_code == 1
    calls = len(distiller.calls)
    capture.run_pass()
    assert len(distiller.calls) == calls  # circuit open: no call for the same transcript
    distiller.fail_for.clear()
    at = max_time(fixture_db) + 1000
    add_message(fixture_db, sid, "msg_zzzz3", "user", [("prt_zzzz3", {"type": "text", "text": "try again"})], at)
    capture.clock = lambda: (at + 60_000) / 1000
    assert capture.run_pass().distilled == [sid]
    assert capture.state.recent_errors()[0]["session_id"] == sid
    close(capture)


def test_malformed_rows_still_give_a_note(home, fixture_db, fixture_sessions):
    sid = fixture_sessions["missing-file"]["session"]
    at = max_time(fixture_db) + 1000
    add_message(
        fixture_db, sid, "msg_zzzz4", "assistant",
        [("prt_zzzz4", b"{broken"), ("prt_zzzz5", b'{"type":"text","text":"caf\xff fixed main.py"}')], at,
    )
    capture = make_capture(now=(at + 60_000) / 1000)
    report = capture.run_pass()
    assert sid in report.distilled
    assert any("prt_zzzz4" in w and "malformed JSON" in w for w in report.warnings)
    (note,) = [n for n in notes_in(home.global_root) if frontmatter.load(n)["session_id"] == sid]
    assert "ModuleNotFoundError" in note.read_text()
    close(capture)


def test_notes_go_to_a_project_tree_that_exists(home, tmp_path, fixture_db, fixture_sessions):
    import sqlite3

    project = tmp_path / "webapp"
    (project / ".memory").mkdir(parents=True)
    (project / ".git").mkdir()  # a project is a git worktree
    (project / "sub").mkdir()
    sid = fixture_sessions["deploy-pnpm"]["session"]
    conn = sqlite3.connect(fixture_db)
    with conn:
        conn.execute("UPDATE session SET directory = ? WHERE id = ?", (str(project / "sub"), sid))
    conn.close()
    capture = make_capture()
    capture.run_pass()
    assert len(notes_in(project / ".memory")) == 1
    assert len(notes_in(home.global_root)) == 5
    close(capture)
    # `memoryd compile`, run from anywhere, knows the project from its sessions.
    result = CliRunner().invoke(cli, ["compile"])
    assert result.exit_code == 0, result.output
    assert (project / ".memory" / "sessions" / "index.md").exists()
    assert (project / ".memory" / "ROOT.md").exists()


def test_distill_refreshes_exactly_the_trees_it_wrote_gitignore_included(home, tmp_path, fixture_db, fixture_sessions):
    import sqlite3

    from daemon.memory.gitignore import BEGIN

    project = tmp_path / "webapp"
    (project / ".memory").mkdir(parents=True)
    (project / ".git").mkdir()
    other = tmp_path / "untouched"
    (other / ".memory").mkdir(parents=True)
    (other / ".git").mkdir()
    sid = fixture_sessions["deploy-pnpm"]["session"]
    conn = sqlite3.connect(fixture_db)
    with conn:
        conn.execute("UPDATE session SET directory = ? WHERE id = ?", (str(project), sid))
    conn.close()
    result = CliRunner().invoke(cli, ["distill", "--settle", "0"])
    assert result.exit_code == 0, result.output
    for tree in (project / ".memory", home.global_root):  # both new trees, both written to
        assert BEGIN in (tree / ".gitignore").read_text()
        assert (tree / "sessions" / "index.md").exists() and (tree / "ROOT.md").exists()
    assert not list((other / ".memory").iterdir())  # a tree the pass did not write is left alone


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from daemon.capture.distill.extractive import ExtractiveDistiller
    from daemon.capture import pipeline

    class Dies(ExtractiveDistiller):
        n = 0
        def distill(self, transcript):
            Dies.n += 1
            if Dies.n == 4:
                os.kill(os.getpid(), signal.SIGKILL)
            return super().distill(transcript)

    import daemon.capture.distill.extractive as ex
    ex.ExtractiveDistiller = Dies
    from daemon.cli.main import main
    sys.argv = ["memoryd", "distill", "--settle", "0"]
    main()
    """
)


def test_kill_9_mid_pass_then_resume_leaves_one_complete_note_each(home, fixture_db):
    env = {**os.environ}
    killed = subprocess.run([sys.executable, "-c", KILLER], env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    assert 0 < len(notes_in(home.global_root)) < 6
    done = subprocess.run(
        [sys.executable, "-m", "daemon", "distill", "--settle", "0"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    notes = notes_in(home.global_root)
    assert len(notes) == 6
    assert len({frontmatter.load(n)["session_id"] for n in notes}) == 6
    # Complete: a forced full redo writes exactly the same bytes.
    before = {n: n.read_bytes() for n in notes}
    redo = subprocess.run(
        [sys.executable, "-m", "daemon", "distill", "--settle", "0", "--force"], env=env, capture_output=True, timeout=120
    )
    assert redo.returncode == 0
    assert {n: n.read_bytes() for n in notes_in(home.global_root)} == before
    assert not [p for p in home.global_root.rglob(".memoryd-tmp-*")]


def test_cli_distill_summary_and_exit_codes(home, fixture_db):
    runner = CliRunner()
    result = runner.invoke(cli, ["distill", "--settle", "0"])
    assert result.exit_code == 0, result.output
    assert "6 distilled, 0 unchanged, 1 junk, 0 settling, 0 failed" in result.output
    again = runner.invoke(cli, ["distill", "--settle", "0"])
    assert "0 distilled, 7 unchanged" in again.output
    dry = runner.invoke(cli, ["distill", "--dry-run", "--force", "--settle", "0"])
    assert "Would distill 7 session(s)" in dry.output
    unknown = runner.invoke(cli, ["distill", "--session", "ses_nope"])
    assert unknown.exit_code == 2 and "no session 'ses_nope'" in unknown.output


def test_cli_missing_database_explains(home):
    result = CliRunner().invoke(cli, ["distill"])
    assert result.exit_code == 2
    assert str(home.opencode_db) in result.output and "OPENCODE_DB" in result.output


@pytest.mark.parametrize(
    "title",
    ["../../etc/passwd", "a/b\\c", "\x00\x1b[31mred\n", "..", "", "部署脚本" * 40, "x" * 500, "CON: *?<>|"],
)
def test_note_file_names_are_safe_whatever_the_title(title):
    from daemon.capture.notes import note_filename
    from daemon.opencode.reader import SessionInfo

    name = note_filename(SessionInfo("ses_abcDEF123", title, "/w", "p", None, 1_796_030_691_032, 1, 1))
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert all(ch.isprintable() for ch in name)
    assert name.startswith("2026-11-30-") and name.endswith("-bcDEF123.md")  # date, slug, id tail
    assert len(name.encode()) <= 255


def test_one_bad_session_never_stops_the_others(home, tmp_path, fixture_db, fixture_sessions):
    """Odd rows and an unwritable project tree fail their own session; the rest get notes."""
    import sqlite3

    odd = fixture_sessions["missing-file"]["session"]
    blocked = fixture_sessions["deploy-pnpm"]["session"]
    project = tmp_path / "webapp"
    (project / ".git").mkdir(parents=True)
    (project / ".memory").mkdir()
    (project / ".memory" / "sessions").write_text("a file where the folder should be")
    conn = sqlite3.connect(fixture_db)
    with conn:
        conn.execute("UPDATE session SET directory = ? WHERE id = ?", (str(project), blocked))
        conn.execute(
            "UPDATE part SET data = ? WHERE id = (SELECT id FROM part WHERE session_id = ? LIMIT 1)",
            ('{"type": ["text"], "files": 3}', odd),
        )
        conn.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
            "SELECT 'prt_zzzzodd', message_id, session_id, time_created, time_updated, ? "
            "FROM part WHERE session_id = ? LIMIT 1",
            ('{"type": "patch", "files": 7}', odd),
        )
    conn.close()
    capture = make_capture()
    report = capture.run_pass()
    assert odd in report.distilled  # odd rows are skipped with a warning, not fatal
    assert any("is not a name" in w for w in report.warnings)
    assert [sid for sid, _ in report.pending] == [blocked]
    assert "NotADirectoryError" in report.pending[0][1] or "FileExistsError" in report.pending[0][1]
    assert len(report.distilled) == 5
    assert len(notes_in(home.global_root)) == 5  # all recorded: a second pass redoes nothing
    again = capture.run_pass()
    assert again.distilled == [] and capture.state.get(blocked).status == "retry"
    close(capture)


def test_an_edit_to_an_old_part_is_found_by_a_full_scan(home, fixture_db, fixture_sessions):
    """OpenCode may update an existing part without touching the session row."""
    import sqlite3

    sid = fixture_sessions["cjk-deploy"]["session"]  # updated well before the watermark's overlap
    capture = make_capture()
    capture.run_pass()
    at = max_time(fixture_db) + 5000
    conn = sqlite3.connect(fixture_db)
    with conn:
        conn.execute(
            "UPDATE part SET data = json_set(data, '$.text', 'Root cause: WORKER_DEADLINE_S was 30s; raised to 90s.'), "
            "time_updated = ? WHERE id = (SELECT id FROM part WHERE session_id = ? AND data LIKE '%\"type\":\"text\"%' "
            "ORDER BY id DESC LIMIT 1)",
            (at, sid),
        )
    conn.close()
    capture.clock = lambda: (at + 60_000) / 1000
    assert capture.run_pass().distilled == []  # the quick probes cannot see it...
    assert capture.run_pass(PassOptions(full_scan=True)).distilled == [sid]  # ...the reconcile does
    (note,) = [n for n in notes_in(home.global_root) if frontmatter.load(n)["session_id"] == sid]
    assert "raised to 90s" in note.read_text()
    close(capture)


def test_a_clock_that_ran_ahead_does_not_hide_later_edits(home, fixture_db, fixture_sessions):
    sid = fixture_sessions["cjk-deploy"]["session"]
    capture = make_capture(now=NOW + 86_400)  # one pass a day ahead (a wrong clock at boot)
    capture.run_pass()
    capture.clock = lambda: NOW + 60
    at = max_time(fixture_db) + 1000
    add_message(fixture_db, sid, "msg_zzzz5", "user", [("prt_zzzz5", {"type": "text", "text": "CI 也要改"})], at)
    assert capture.run_pass().distilled == [sid]
    close(capture)


def test_distill_shows_five_warnings_and_says_how_many_more(home, fixture_db, fixture_sessions):
    sid = next(s["session"] for s in fixture_sessions.values() if not s["junk"])
    parts = [(f"prt_bad{n}", b"{not json") for n in range(8)]
    add_message(fixture_db, sid, "msg_zzbad", "user", parts, max_time(fixture_db) + 1)
    result = CliRunner().invoke(cli, ["distill", "--settle", "0"])
    assert result.exit_code == 0, result.output
    shown = [line for line in result.stderr.splitlines() if "malformed JSON" in line]
    assert len(shown) == 5
    assert "warning: … and 3 more, see `memoryd logs --level warning`" in result.stderr
