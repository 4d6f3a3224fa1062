"""OpenCode 2's tables, read from rows real 2.0.15 wrote (tests/fixtures/opencode-2.0.15)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import frontmatter
import pytest
from click.testing import CliRunner

from daemon.capture.transcript import build_transcript
from daemon.cli.main import cli
from daemon.opencode.reader import OpenCodeReader, SchemaError
from tests.capture.helpers import distill_once
from tests.conftest import OPENCODE_FIXTURE
from tests.opencode.v2fixture import add_v2_row, make_v2_db, v2_sessions


@pytest.fixture
def v2_db(home) -> Path:
    """A fresh OpenCode 2 install's database (no 1.x tables) at the default location."""
    return make_v2_db(home.opencode_db)


def transcript_of(db: Path, sid: str) -> str:
    with OpenCodeReader(db) as reader:
        (info,) = reader.sessions([sid])
        return build_transcript(reader.session_rows(info)).text


def notes_by_session(root: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for path in root.rglob("sessions/*.md"):
        if path.name != "index.md":
            found.setdefault(frontmatter.load(path)["session_id"], []).append(path)
    return found


def test_a_fresh_2_0_database_is_read_from_session_v2(v2_db):
    spec = v2_sessions()
    with OpenCodeReader(v2_db) as reader:
        assert reader.families == ["v2"]
        sessions = reader.sessions()
    roots = [s for s in sessions if not s.parent_id]
    assert {s.id for s in roots} == {v["session"] for v in spec.values()}
    assert all(s.family == "v2" and s.ended for s in roots)  # every recorded turn ended (idle)
    (child,) = [s for s in sessions if s.parent_id]
    assert child.parent_id == spec["subagent-search"]["session"]
    deploy = next(s for s in roots if s.id == spec["deploy-pnpm"]["session"])
    assert deploy.directory == "/home/dev/src/webapp" and deploy.title == "Fix deploy script to use pnpm"
    assert deploy.message_count == 6


def test_the_transcript_of_2_0_rows_keeps_tools_files_and_compaction(v2_db):
    spec = v2_sessions()
    deploy = transcript_of(v2_db, spec["deploy-pnpm"]["session"])
    # One spelling for both versions: shell is bash, read/edit take `path`.
    assert "[assistant · tool bash] command=sh -n scripts/deploy.sh" in deploy
    assert "[assistant · tool read] path=/home/dev/src/webapp/scripts/deploy.sh" in deploy
    assert "[assistant · tool edit] path=/home/dev/src/webapp/scripts/deploy.sh" in deploy
    assert "changed files: scripts/deploy.sh" in deploy  # the step's snapshot.files
    assert "(private reasoning omitted)" in deploy and "packageManager says pnpm" not in deploy
    failed = transcript_of(v2_db, spec["missing-file"]["session"])
    assert "✗ error: File not found: /home/dev/src/cli/config.py" in failed
    assert "SECRET-THOUGHT-7731" not in failed
    write = transcript_of(v2_db, spec["cjk-deploy"]["session"])
    assert "[assistant · tool write] path=/home/dev/src/shop/deploy.sh" in write
    subagent = transcript_of(v2_db, spec["subagent-search"]["session"])
    assert "[assistant · tool task]" in subagent and "RATE_LIMIT_PER_MINUTE = 120 in src/limits.py" in subagent
    attached = transcript_of(v2_db, spec["attached"]["session"])
    assert "[user · note] attached file notes.txt" in attached and "PORT=8421" in attached
    assert "[assistant · note] context was compacted here" in attached
    assert attached.count("context was compacted here") == 1  # the interrupted attempt changed nothing
    assert "COMPACTED-FACT-5521" in attached  # the summary is the assistant's text


def test_2_0_notes_keep_the_facts_and_one_note_per_root(home, v2_db):
    report = distill_once()
    spec = v2_sessions()
    notes = notes_by_session(home.global_root)
    assert sorted(notes) == sorted(v["session"] for v in spec.values())  # no note for the subagent
    assert all(len(paths) == 1 for paths in notes.values())
    for name, v in spec.items():
        text = notes[v["session"]][0].read_text()
        missing = [fact for fact in v["facts"] if fact not in text]
        assert not missing, f"{name} lost {missing}:\n{text}"
    failed = notes[spec["missing-file"]["session"]][0].read_text()
    assert "`config.py` (read failed)" in failed
    deploy = notes[spec["deploy-pnpm"]["session"]][0].read_text()
    assert "`scripts/deploy.sh` (read, edited)" in deploy and "`sh -n scripts/deploy.sh && echo syntax-ok`" in deploy
    written = "\n".join(p.read_text(errors="replace") for p in home.root.rglob("*") if p.is_file() and "opencode.db" not in p.name)
    for v in spec.values():
        for secret in v["forbidden"]:
            assert secret not in written
    assert not report.warnings
    again = distill_once()
    assert again.distilled == [] and again.junk == [] and again.unchanged == len(spec)


def test_memoryd_distill_works_on_a_fresh_2_0_install(home, v2_db):
    result = CliRunner().invoke(cli, ["distill"])
    assert result.exit_code == 0, result.output
    assert len(notes_by_session(home.global_root)) == len(v2_sessions())


def test_a_new_row_is_found_by_the_cursor_and_ends_the_turn_only_when_idle(v2_db):
    sid = v2_sessions()["cjk-deploy"]["session"]
    with OpenCodeReader(v2_db) as reader:
        cursor = reader.cursor()
        assert reader.changed_since(cursor) == set()
        at = reader.newest_update() + 1000
        add_v2_row(v2_db, sid, "user", {"text": "也改 CI", "files": [], "time": {"created": at}}, at, "msg_zzzzzzzz01")
        assert reader.changed_since(cursor) == {sid}
        (info,) = reader.sessions([sid])
        assert not info.ended and info.time_updated == at  # a new prompt: the turn is on again
        add_v2_row(v2_db, sid, "idle", {"outcome": "succeeded", "time": {"created": at + 5}}, at + 5, "msg_zzzzzzzz02")
        (info,) = reader.sessions([sid])
        assert info.ended and info.time_updated == at + 5
        newer = reader.cursor()
        assert newer != cursor and reader.changed_since(newer) == set()


def test_change_probes_use_opencode_s_own_btrees(tmp_path):
    """Every question a pass asks is a search of one of OpenCode's b-trees, never a scan."""
    from daemon.opencode import v1, v2

    v2_db = make_v2_db(tmp_path / "v2.db")
    for db, probes in ((OPENCODE_FIXTURE / "opencode.db", v1.PROBES), (v2_db, v2.PROBES)):
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        for name, sql in probes.items():
            plan = [str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", (0,) * sql.count("?"))]
            assert plan and all(step.startswith(("SEARCH", "SCALAR SUBQUERY")) for step in plan), (name, plan)
        conn.close()


def test_a_missing_2_0_column_is_named(tmp_path):
    db = tmp_path / "odd.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE session_v2 (id TEXT, directory TEXT, time_created INT, time_updated INT);"
        "CREATE TABLE session_message (id TEXT, session_id TEXT, type TEXT, time_created INT, time_updated INT, data TEXT);"
    )
    conn.close()
    with pytest.raises(SchemaError, match=r"table 'session_message' has no column seq"):
        OpenCodeReader(db)


def test_a_database_without_either_family_says_so(tmp_path):
    db = tmp_path / "other.db"
    sqlite3.connect(db).executescript("CREATE TABLE notes (id TEXT);")
    with pytest.raises(SchemaError, match=r"has no 'session' or 'session_v2' table: is it an OpenCode database"):
        OpenCodeReader(db)


def test_a_cursor_of_another_file_or_an_older_memoryd_means_every_session(tmp_path):
    db = make_v2_db(tmp_path / "a.db")
    with OpenCodeReader(db) as reader:
        cursor = reader.cursor()
        every = {s.id for s in reader.sessions()}
        assert reader.changed_since("msg_22bc5772a001c6A5SoY1ytliV5") == every  # the old last_message_id
        assert reader.changed_since("") == every
    copy = tmp_path / "b.db"
    copy.write_bytes(db.read_bytes())
    copy.replace(db)  # a restored copy at the same path: its rowids say nothing about the old file
    with OpenCodeReader(db) as reader:
        assert reader.changed_since(cursor) == every
