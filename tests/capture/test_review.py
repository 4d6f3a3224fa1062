"""Reviewing capture before and after: `distill --dry-run --show` and `list --junk`."""

from __future__ import annotations

import frontmatter
from click.testing import CliRunner

from daemon.capture.distill.extractive import EXTRACTIVE_VERSION
from daemon.cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_dry_run_show_prints_the_notes_and_writes_nothing(home, fixture_db, fixture_sessions):
    result = run("distill", "--dry-run", "--show", "--settle", "0")
    assert result.exit_code == 0, result.output
    deploy = fixture_sessions["deploy-pnpm"]["session"]
    assert f"===== {deploy} =====" in result.output
    block = result.output.split(f"===== {deploy} =====\n", 1)[1].split("\n=====", 1)[0]
    assert frontmatter.loads(block)["session_id"] == deploy
    assert "## Outcome / Current State" in block and "scripts/deploy.sh" in block
    assert "(junk: no note)" in result.output  # the greeting
    assert not home.global_root.exists() or not list(home.global_root.rglob("*.md"))
    assert run("distill", "--show").exit_code == 2  # --show needs --dry-run


def test_list_junk_names_each_skipped_session_with_its_reason(home, fixture_db, fixture_sessions):
    assert "No sessions captured yet" in run("list", "--junk").output
    assert run("distill", "--settle", "0").exit_code == 0
    result = run("list", "--junk")
    assert result.exit_code == 0, result.output
    junk = fixture_sessions["junk-hello"]["session"]
    assert junk in result.output and "1 session(s) skipped as junk" in result.output
    assert "why: only greetings" in result.output and f"[extractive {EXTRACTIVE_VERSION}]" in result.output
    for spec in fixture_sessions.values():
        if not spec["junk"]:
            assert spec["session"] not in result.output
    import json

    (entry,) = json.loads(run("list", "--junk", "--json").output)
    assert entry["session_id"] == junk and entry["reason"].startswith("only greetings")


def test_dry_run_show_lists_the_memories_the_notes_would_save(home, fixture_db, tmp_path):
    """The preview names each lesson, gotcha and decision memory; a real pass then saves exactly those."""
    import json
    import re
    import subprocess
    import sys

    def memoryd(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "daemon", *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    shown = memoryd("distill", "--dry-run", "--show", "--settle", "0")
    assert "memories this note would save" in shown
    previewed = set(re.findall(r"^- (lesson|gotcha|decision): (.+)$", shown, flags=re.M))
    assert previewed and {kind for kind, _ in previewed} <= {"lesson", "gotcha", "decision"}
    memoryd("distill", "--settle", "0")
    saved = {
        (m["kind"], m["title"])
        for m in json.loads(memoryd("list", "--json"))
        if m["kind"] in {"lesson", "gotcha", "decision"}
    }
    assert saved == previewed
