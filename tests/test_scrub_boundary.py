"""The boundary below capture: rows written to state.db (titles, errors, the hold: written by
capture.lifecycle, scrubbed there) and the
sink outbox (what a Cognee server receives) pass the scrubber whoever hands them in."""

from __future__ import annotations

from pathlib import Path

from daemon.sinks.outbox import Entry, Outbox
from daemon.capture.lifecycle import Hold, write_hold
from daemon.state import SessionRecord, StateDB
from tests.secrets_catalogue import CATALOGUE

SECRETS = [c for c in CATALOGUE if c.kind in ("github_token", "slack_token", "url_credentials", "assignment")][:6]


def _raw(path: Path) -> str:
    return "".join(p.read_bytes().decode("utf-8", "replace") for p in path.parent.glob(path.name + "*"))


def test_state_rows_and_the_outbox_hold_no_secret(tmp_path: Path):
    db = StateDB(tmp_path / "state.db")
    try:
        for i, case in enumerate(SECRETS):
            db.put(SessionRecord(session_id=f"ses_{i}", title=case.text.splitlines()[0], last_error=f"HTTP 401: {case.text}"))
            db.log_error(f"server said {case.text}", f"ses_{i}")
        write_hold(db, Hold("auth", f"bad key {SECRETS[0].text}", 0))
        outbox = Outbox(db)
        for i, case in enumerate(SECRETS):
            outbox.put(Entry(f"doc{i}", "put", "h", content=f"# Note\n{case.text}\n", filename=f"{case.text[:40]}.md", metadata={"title": case.text}))
        titles = [r.title for r in db.records()]
    finally:
        db.close()
    raw = _raw(tmp_path / "state.db")
    for case in SECRETS:
        for value in case.values:
            assert value not in raw, case.format
    assert all("[REDACTED:" in t for t in titles)
