"""The files a pass touches: a transcript folder listed once by a large pass, a fresh
note known absent from its folder's listing."""

from __future__ import annotations

import os

from daemon.capture.notefind import NoteFinder
from daemon.capture.transcript_files import LIST_FROM, TranscriptFiles
from daemon.state import WriteFence


def test_a_large_pass_removes_only_transcripts_its_listing_holds(tmp_path):
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "ses_old.md").write_text("an older transcript")
    files = TranscriptFiles(folder, WriteFence())
    files.expect(LIST_FROM + 1)

    files.drop("ses_old")
    files.drop("ses_never")  # not listed: nothing to unlink
    files.write("ses_new", "[user] hi")
    assert sorted(os.listdir(folder)) == ["ses_new.md"]
    files.drop("ses_new")  # written by this pass: known, so removed
    assert os.listdir(folder) == []


def test_a_small_pass_unlinks_without_listing(tmp_path):
    folder = tmp_path / "transcripts"
    files = TranscriptFiles(folder, WriteFence())
    files.expect(1)
    files.write("ses_a", "[user] hi")
    (folder / "ses_b.md").write_text("written by another process")
    files.drop("ses_b")
    files.write("ses_a", "[user] hi again")  # a file already there is rewritten
    assert sorted(os.listdir(folder)) == ["ses_a.md"] and (folder / "ses_a.md").read_text() == "[user] hi again"


def test_a_note_absent_from_its_folder_listing_may_not_exist_until_written(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "2026-01-01-other.md").write_text("hand-written, no frontmatter")
    finder = NoteFinder()
    assert finder.may_exist(folder / "x.md")  # folder not read yet: anything may be there
    assert finder.find(folder, "ses_1") is None
    assert finder.may_exist(folder / "2026-01-01-other.md")  # a name it holds, note or not
    assert not finder.may_exist(folder / "2026-01-01-fresh.md")
    finder.wrote(folder / "2026-01-01-fresh.md")
    assert finder.may_exist(folder / "2026-01-01-fresh.md")
    missing = NoteFinder()
    assert missing.find(tmp_path / "none", "ses_1") is None
    assert not missing.may_exist(tmp_path / "none" / "a.md")
