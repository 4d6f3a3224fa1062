"""capture.transcript_days: how long the scrubbed model inputs stay on disk; 0 keeps none.

A backfill with the local distiller writes no transcript for a session already quiet
longer than that: the retention would only delete it (issue #22, files per session)."""

from __future__ import annotations

from pathlib import Path

from daemon.capture.lifecycle import Identity
from daemon.capture.plan import DAY_MS, PassOptions, keeps_transcript
from daemon.capture.retention import expired
from daemon.capture.skipped import skipped_sessions
from daemon.opencode.source import SessionInfo
from daemon.state import StateDB
from tests.capture.helpers import distill_once, max_time


def test_expired_is_by_age_and_zero_means_all():
    now = 100 * 86400.0
    entries = [(Path("new.md"), now - 3600), (Path("old.md"), now - 15 * 86400)]
    assert expired(entries, 14, now) == [Path("old.md")]
    assert expired(entries, 0, now) == [Path("new.md"), Path("old.md")]


def _info(updated_ms: int) -> SessionInfo:
    return SessionInfo("ses_a", "t", "/x", "prj", None, updated_ms, updated_ms)


def test_keeps_transcript_of_recent_sessions_one_asked_for_and_every_model_input():
    now = 1000 * DAY_MS
    recent, old = _info(now - 13 * DAY_MS), _info(now - 15 * DAY_MS)
    local, model = Identity(), Identity("openai:qwen3:8b", "v1")
    assert keeps_transcript(recent, now, 14, PassOptions(), local)
    assert not keeps_transcript(old, now, 14, PassOptions(), local)
    assert keeps_transcript(old, now, 14, PassOptions(session_id="ses_a"), local)
    assert keeps_transcript(old, now, 14, PassOptions(), model)
    assert not keeps_transcript(recent, now, 0, PassOptions(session_id="ses_a"), model)


def _clock(db: Path, days_after: float):  # noqa: ANN202
    at = (max_time(db) + days_after * DAY_MS) / 1000
    return lambda: at


def test_transcripts_are_kept_by_default(home, fixture_db):
    distill_once(clock=_clock(fixture_db, 1))
    assert list((home.state_dir / "transcripts").glob("*.md"))


def test_zero_days_keeps_no_transcript(home, fixture_db, monkeypatch):
    monkeypatch.setenv("MEMORYD_CAPTURE__TRANSCRIPT_DAYS", "0")
    report = distill_once(clock=_clock(fixture_db, 1))
    assert report.distilled
    assert not list((home.state_dir / "transcripts").glob("*.md"))


def test_a_backfill_of_sessions_past_retention_writes_notes_but_no_transcripts(home, fixture_db):
    folder = home.state_dir / "transcripts"
    first = distill_once(clock=_clock(fixture_db, 1))
    stale = sorted(folder.glob("*.md"))
    assert stale
    # A month later the whole history is distilled again: each note is rewritten (same
    # bytes), and the old transcripts are not left behind for the sweep.
    again = distill_once(clock=_clock(fixture_db, 30), options=PassOptions(force=True))
    assert sorted(again.distilled) == sorted(first.distilled)
    assert all(Path(p).exists() for p in again.notes.values())
    assert again.junk and sorted(p.stem for p in folder.glob("*.md")) == sorted(again.junk)  # kept: see below
    # Asked for one session, its transcript is written whatever its age.
    one = Path(stale[0]).stem
    distill_once(clock=_clock(fixture_db, 30), options=PassOptions(session_id=one, force=True))
    assert one in [p.stem for p in folder.glob("*.md")]


def test_a_junk_verdict_past_retention_still_says_why(home, fixture_db, fixture_sessions):
    # `memoryd list --junk` explains a verdict from its transcript: a backfill of old
    # history keeps a junk session's (a few lines), not the notes' ones.
    report = distill_once(clock=_clock(fixture_db, 30))
    greeting = fixture_sessions["junk-hello"]["session"]
    assert greeting in report.junk and report.distilled
    kept = [p.stem for p in (home.state_dir / "transcripts").glob("*.md")]
    assert sorted(kept) == sorted(report.junk)
    state = StateDB(home.state_dir / "state.db")
    try:
        reasons = {s.session_id: s.reason for s in skipped_sessions(state, home.state_dir / "transcripts")}
    finally:
        state.close()
    assert reasons[greeting].startswith("only greetings")
