"""OpenCode's database is not what it should be: one clear line, exit 2, no traceback; the
daemon says the source is unusable; a database replaced by an older copy is scanned whole."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.config import Config, load_settings
from daemon.service.jobs import Jobs
from tests.capture.helpers import add_message, max_time
from tests.conftest import OPENCODE_FIXTURE


def text_file(db):
    db.write_text("just some notes\n")


def random_bytes(db):
    db.write_bytes(os.urandom(65536))


def truncated(db):
    data = (OPENCODE_FIXTURE / "opencode.db").read_bytes()
    db.write_bytes(data[: len(data) // 3])


def folder(db):
    db.mkdir()


def zero_bytes(db):
    db.write_bytes(b"")


BAD = {
    "text": (text_file, "is not an SQLite database"),
    "random": (random_bytes, "is not an SQLite database"),
    "truncated": (truncated, "is truncated"),
    "folder": (folder, "is a folder"),
    "empty": (zero_bytes, "is empty"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_source_gives_one_clear_line_everywhere(home, kind):
    make, says = BAD[kind]
    home.opencode_db.parent.mkdir(parents=True)
    make(home.opencode_db)
    runner = CliRunner()

    distilled = runner.invoke(cli, ["distill", "--settle", "0"])
    assert distilled.exit_code == 2 and isinstance(distilled.exception, SystemExit)
    lines = [line for line in distilled.output.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0] and str(home.opencode_db) in lines[0], distilled.output

    shown = runner.invoke(cli, ["status"])
    assert shown.exit_code == 0 and shown.exception is None, shown.output
    assert f"OpenCode database: {home.opencode_db}" in shown.output and says in shown.output

    settings, paths = load_settings()
    jobs = Jobs(Config(settings, paths))
    try:
        result = jobs.capture()  # no pass; a retry once the backoff is over
        assert result is not None and 0 < result.recheck_in <= 1.0 and not result.new_roots
        assert f"source unusable: {home.opencode_db}" in jobs.status_line() and says in jobs.status_line()
    finally:
        jobs.close()


def test_a_database_replaced_by_an_older_copy_is_scanned_whole(home, fixture_db, fixture_sessions):
    """Rows older than the watermark in a file that replaced the old one are not missed."""
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    sid = fixture_sessions["cjk-deploy"]["session"]
    older = home.root / "older-copy.db"
    shutil.copy(fixture_db, older)
    # The copy has an edit dated well before the watermark the first pass will take, with
    # an id below every message id seen: neither quick probe can see it.
    at = max_time(fixture_db) - 3_600_000
    add_message(older, sid, "msg_0000old", "user", [("prt_0000old", {"type": "text", "text": "restored from backup"})], at)
    conn = sqlite3.connect(older)
    with conn:
        conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (at, sid))
    conn.close()

    jobs = Jobs(Config(settings, paths))
    try:
        jobs.capture()
        note = next(p for p in (home.global_root / "sessions").glob("*.md") if sid in p.read_text())
        os.replace(older, fixture_db)  # a new inode at the same path
        jobs.capture()
        assert "restored from backup" in note.read_text()
    finally:
        jobs.close()
