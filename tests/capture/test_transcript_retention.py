"""capture.transcript_days: how long the scrubbed model inputs stay on disk; 0 keeps none."""

from __future__ import annotations

from pathlib import Path

from daemon.capture.retention import expired
from tests.capture.helpers import distill_once


def test_expired_is_by_age_and_zero_means_all():
    now = 100 * 86400.0
    entries = [(Path("new.md"), now - 3600), (Path("old.md"), now - 15 * 86400)]
    assert expired(entries, 14, now) == [Path("old.md")]
    assert expired(entries, 0, now) == [Path("new.md"), Path("old.md")]


def test_transcripts_are_kept_by_default(home, fixture_db):
    distill_once()
    assert list((home.state_dir / "transcripts").glob("*.md"))


def test_zero_days_keeps_no_transcript(home, fixture_db, monkeypatch):
    monkeypatch.setenv("MEMORYD_CAPTURE__TRANSCRIPT_DAYS", "0")
    report = distill_once()
    assert report.distilled
    assert not list((home.state_dir / "transcripts").glob("*.md"))
