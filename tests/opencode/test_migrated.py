"""A database real OpenCode 2.0.15 migrated from a real 1.18.33 one, then used by both versions."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import frontmatter
import pytest

from daemon.opencode.reader import OpenCodeReader
from daemon.config import Config, load_settings
from daemon.status import format_status, gather
from tests.capture.helpers import distill_once
from tests.conftest import OPENCODE_FIXTURE
from tests.e2e.opencode import require_opencode
from tests.e2e.opencode2 import require_opencode2
from tests.opencode import migrated

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> migrated.Built:
    """Built once per test run by the real binaries (about a minute)."""
    require_opencode()
    require_opencode2()
    return migrated.build(tmp_path_factory.mktemp("migrated"))


@pytest.fixture
def migrated_db(home, built: migrated.Built) -> Path:
    home.opencode_db.parent.mkdir(parents=True)
    shutil.copy(built.db, home.opencode_db)
    return home.opencode_db


def notes_by_session(root: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for path in root.rglob("sessions/*.md"):
        if path.name != "index.md":
            found.setdefault(frontmatter.load(path)["session_id"], []).append(path)
    return found


def fixture_roots() -> set[str]:
    import json

    return {v["session"] for v in json.loads((OPENCODE_FIXTURE / "sessions.json").read_text()).values()}


def test_each_root_session_is_read_once_from_the_family_with_the_newest_activity(migrated_db, built):
    with OpenCodeReader(migrated_db) as reader:
        assert reader.families == ["v1", "v2"]
        roots = [s for s in reader.sessions() if not s.parent_id]
    by_id = {s.id: s for s in roots}
    assert len(by_id) == len(roots)  # one each, though most ids are in both families
    natives = {v["session"] for v in built.sessions.values()}
    assert set(by_id) == fixture_roots() | natives | {built.v1_after}
    assert by_id[built.continued].family == "v2"  # continued in 2.0 after the migration
    assert by_id[built.v1_after].family == "v1"  # 1.x wrote it after the migration: 1.x tables only
    assert all(by_id[sid].family == "v2" for sid in natives)
    untouched = fixture_roots() - {built.continued}
    assert all(by_id[sid].family == "v1" for sid in untouched)  # a tie keeps the 1.x rows


def test_every_root_session_gets_one_note_the_continued_one_its_new_turn(home, migrated_db, built):
    first = distill_once()
    notes = notes_by_session(home.global_root)
    assert all(len(paths) == 1 for paths in notes.values()), notes
    with OpenCodeReader(migrated_db) as reader:
        roots = {s.id for s in reader.sessions() if not s.parent_id}
    junk = set(first.junk)
    assert set(notes) | junk == roots and not set(notes) & junk
    continued = notes[built.continued][0].read_text()
    assert "WORKER_DEADLINE_S is now 90s" in continued and "TimeoutError" in continued  # both turns
    assert ".nvmrc" in notes[built.v1_after][0].read_text()
    again = distill_once()
    assert again.distilled == [] and again.junk == [] and again.unchanged == len(roots)


def test_an_upgrade_alone_rewrites_no_note(home, built):
    """Notes made from the 1.x database stay as they are once 2.0 has migrated it."""
    home.opencode_db.parent.mkdir(parents=True)
    shutil.copy(built.before, home.opencode_db)
    before = distill_once()
    notes = {p: p.read_bytes() for paths in notes_by_session(home.global_root).values() for p in paths}
    copy = home.opencode_db.with_name("upgraded.db")
    shutil.copy(built.db, copy)
    os.replace(copy, home.opencode_db)  # what OpenCode 2 left: the same file, upgraded
    assert "behind the newest row" in format_status(gather(Config(*load_settings())))  # not "up to date"
    after = distill_once()
    natives = {v["session"] for v in built.sessions.values()}
    assert set(after.distilled) | set(after.junk) == natives | {built.continued, built.v1_after}
    rewritten = [p for p, text in notes.items() if p.read_bytes() != text]
    assert [frontmatter.load(p)["session_id"] for p in rewritten] == [built.continued]
    assert len(before.distilled) + len(before.junk) == len(fixture_roots())


def test_status_names_both_families_with_counts(home, migrated_db, built):
    distill_once()
    data = gather(Config(*load_settings()))
    source = data["source"]
    assert source["ok"]
    families = source["families"]
    assert families["v1"]["sessions"] == len(fixture_roots()) + 1  # plus the one 1.x wrote later
    assert families["v2"]["sessions"] == len(fixture_roots()) + len(built.sessions)
    assert source["in_both"] == len(fixture_roots()) + 1  # with the subagent
    text = format_status(data)
    assert "OpenCode 1.x (session, message, part): 8 sessions (+1 subagent)" in text
    assert "OpenCode 2 (session_v2, session_message): 12 sessions (+2 subagents)" in text
    assert "8 sessions are in both" in text and "up to date" in text
