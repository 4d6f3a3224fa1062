"""A note's file name is unique per session id: sessions alike in day, title and the last
8 characters of their ids (other agents' ids, imports, hand-made databases) never share
one, so a new note never replaces another session's."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import frontmatter

from tests.capture.helpers import add_message

DAY_MS = 1_767_225_600_000  # 2026-01-01


def add_session(db, sid: str, at_ms: int, text: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        project = conn.execute("SELECT id FROM project LIMIT 1").fetchone()[0]
        conn.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES (?, ?, ?, '/nowhere/shop', 'Fix the deploy', '1.18.33', ?, ?)",
            (sid, project, sid, at_ms, at_ms),
        )
    conn.close()
    ask = f"The deploy fails on main since yesterday. {text} Please find out why and fix it."
    add_message(db, sid, f"msg_{sid}_u", "user", [(f"prt_{sid}_u", {"type": "text", "text": ask})], at_ms + 1)
    tool = {"type": "tool", "tool": "bash", "callID": f"call_{sid}", "state": {
        "status": "completed", "input": {"command": "make deploy", "description": "deploy"},
        "output": "deploy failed: runner image drifted\nexit 1", "title": "deploy",
        "time": {"start": at_ms + 2, "end": at_ms + 3}}}
    reply = {"type": "text", "text": f"Found it: the deploy broke because of drift. {text} The pipeline now passes."}
    add_message(db, sid, f"msg_{sid}_a", "assistant", [(f"prt_{sid}_t", tool), (f"prt_{sid}_a", reply)], at_ms + 4)


def distill() -> None:
    done = subprocess.run([sys.executable, "-m", "daemon", "distill", "--settle", "0"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def notes_by_session(home) -> dict[str, str]:
    found = {}
    for path in (home.global_root / "sessions").glob("2026-01-01-*.md"):
        found[frontmatter.load(path)["session_id"]] = path.name
    return found


def test_sessions_alike_but_for_their_ids_get_a_note_each(home, fixture_db):
    # Same day, same title, same last 8 id characters: three in one pass, one in the next.
    ids = ["agentA-0000deploy1", "agentB-0000deploy1", "agentB_0000deploy1", "imported0000deploy1"]
    texts = ["Pin the runner image.", "Rotate the deploy key.", "Cache the wheels.", "Split the smoke tests."]
    for n, (sid, text) in enumerate(zip(ids[:3], texts, strict=False)):
        add_session(fixture_db, sid, DAY_MS + n * 1000, text)
    distill()
    first = notes_by_session(home)
    add_session(fixture_db, ids[3], DAY_MS + 9000, texts[3])
    distill()
    notes = notes_by_session(home)
    assert sorted(notes) == sorted(ids)
    assert len(set(notes.values())) == 4
    assert {sid: notes[sid] for sid in first} == first  # nothing renamed, nothing replaced
    for sid, text in zip(ids, texts, strict=True):
        assert text.split()[1] in (home.global_root / "sessions" / notes[sid]).read_text()
