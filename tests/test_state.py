"""The state database: the migration to explicit session states, rebuilding a broken file,
and the fence that ends every write at shutdown."""

from __future__ import annotations

import sqlite3

import pytest

from daemon.state import MIGRATIONS, SessionRecord, StateDB, StateFenced, WriteFence


def old_database(path) -> None:
    """A state.db as the first schema made it, with the three kinds of 'pending'."""
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA user_version=1")
    rows = [
        ("ses_settling", "pending", "", ""),  # being written
        ("ses_retry", "pending", "sha256:abc", "HTTP 500"),  # a failure waiting for its retry
        ("ses_held", "pending", "", "budget spent"),  # left by a stop
        ("ses_done", "distilled", "", ""),
        ("ses_failed", "failed", "sha256:def", "model refused"),
    ]
    conn.executemany(
        "INSERT INTO session (session_id, status, failed_hash, last_error) VALUES (?, ?, ?, ?)", rows
    )
    conn.commit()
    conn.close()


def test_an_old_database_is_carried_over_to_explicit_states(tmp_path):
    path = tmp_path / "state.db"
    old_database(path)
    state = StateDB(path)
    try:
        found = {r.session_id: r.status for r in state.records()}
        assert found == {
            "ses_settling": "settling",
            "ses_retry": "retry",
            "ses_held": "held",
            "ses_done": "distilled",
            "ses_failed": "failed",
        }
        assert state.get("ses_retry").retry_at == 0  # due at once: nothing waits longer than before
        assert sorted(state.session_ids(["settling"], retry="retry", retry_due_by=1)) == ["ses_retry", "ses_settling"]
    finally:
        state.close()


@pytest.mark.parametrize(
    "content",
    [b"not a database at all", b"SQLite format 3\x00" + b"\x00" * 84 + b"garbage" * 100],
    ids=["text", "damaged"],
)
def test_a_broken_state_file_is_moved_aside_and_rebuilt_once(tmp_path, content):
    path = tmp_path / "state.db"
    path.write_bytes(content)
    state, note = StateDB.open_or_rebuild(path)
    try:
        assert "moved to state.db.broken-" in note and state.count_records() == 0
        assert state.get_meta("rebuilt") == note  # for `memoryd status`
    finally:
        state.close()
    assert [p.read_bytes() for p in tmp_path.glob("state.db.broken-*")] == [content]
    again, second_note = StateDB.open_or_rebuild(path)
    again.close()
    assert second_note == ""  # reported once, not on every start


def test_a_foreign_schema_is_moved_aside(tmp_path):
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE session (id TEXT PRIMARY KEY)")
    conn.execute("PRAGMA user_version=2")
    conn.commit()
    conn.close()
    state, note = StateDB.open_or_rebuild(path)
    state.close()
    assert "not this memoryd's state database" in note


def test_after_the_fence_closes_nothing_is_written(tmp_path):
    fence = WriteFence()
    state = StateDB(tmp_path / "state.db", fence)
    state.put(SessionRecord("ses_a", status="distilled"))
    state.set_meta("hold", "kept")
    fence.close()
    for write in (
        lambda: state.put(SessionRecord("ses_b")),
        lambda: state.set_meta("watermark", "1"),
        lambda: state.log_error("late"),
        lambda: state.add_spend("2026-11-30", 1, 1),
    ):
        with pytest.raises(StateFenced):
            write()
    with pytest.raises(StateFenced), state.transaction():
        pass
    assert [r.session_id for r in state.records()] == ["ses_a"] and state.get_meta("hold") == "kept"
    state.close()


def test_put_many_inserts_and_updates_a_batch_in_one_statement_titles_scrubbed(tmp_path):
    state = StateDB(tmp_path / "state.db")
    try:
        state.put(SessionRecord(session_id="ses_a", title="old", status="settling"))
        key = "sk-proj-" + "Ab3dEf9hIj2kLm5nOp8qRs1tUv4wXy7z" * 2
        with state.transaction():
            state.put_many(
                [
                    SessionRecord(session_id="ses_a", title="new", status="distilled", note_path="/n/a.md"),
                    SessionRecord(session_id="ses_b", title=f"token {key}", status="junk"),
                ]
            )
        found = state.get_many(["ses_a", "ses_b"])
        assert (found["ses_a"].title, found["ses_a"].status, found["ses_a"].note_path) == ("new", "distilled", "/n/a.md")
        assert found["ses_b"].status == "junk" and key not in found["ses_b"].title
        state.put_many([])  # an empty batch is no statement at all
        assert state.count_records() == 2
    finally:
        state.close()
