"""Sessions with no credential in them get notes with no redaction marker: the scrubber must
not mangle the code, commands and paths a reader needs. Every corpus the tests have (the
real OpenCode fixture, the synthetic and multi-turn corpora in four languages) is distilled."""

from __future__ import annotations

import json
from pathlib import Path

import frontmatter
import pytest

from tests.capture.corpora import FIXTURE_DB, build_all
from tests.capture.helpers import distill_once

# The fixture's one session that holds credentials on purpose.
WITH_SECRETS = {"secrets"}


def _corpora(tmp: Path) -> list[tuple[Path, dict]]:
    fixture = (FIXTURE_DB, json.loads((FIXTURE_DB.parent / "sessions.json").read_text()))
    built = [*build_all(tmp / "c"), *build_all(tmp / "m", multiturn=True)]
    return [fixture, *((p / "opencode.db", json.loads((p / "sessions.json").read_text())) for p in built)]


@pytest.mark.timeout(600)
def test_credential_free_sessions_get_notes_without_redactions(home, tmp_path):
    marked, checked = [], set()
    for db, sessions in _corpora(tmp_path):
        distill_once(db)
        clean = {s["session"] for name, s in sessions.items() if name not in WITH_SECRETS}
        for note in home.root.rglob("*.md"):
            text = note.read_text(encoding="utf-8")
            sid = str(frontmatter.loads(text).metadata.get("session_id", ""))
            if sid in clean:
                checked.add(sid)
            if sid in clean and "[REDACTED" in text:
                marked.append((db.parent.name, note.name, [ln for ln in text.splitlines() if "[REDACTED" in ln][:3]))
    assert len(checked) >= 20  # the notes were found and read
    assert not marked
