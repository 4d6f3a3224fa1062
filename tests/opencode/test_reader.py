"""The reader: read-only, schema-checked, oldest first, children known, busy-tolerant."""

from __future__ import annotations

import hashlib
import sqlite3
import threading

import pytest

from daemon.opencode.reader import OpenCodeReader, SchemaError, SourceMissing


def test_sessions_oldest_first_with_counts(fixture_db, fixture_sessions):
    with OpenCodeReader(fixture_db) as reader:
        sessions = reader.sessions()
    assert [s.time_created for s in sessions] == sorted(s.time_created for s in sessions)
    by_id = {s.id: s for s in sessions}
    deploy = by_id[fixture_sessions["deploy-pnpm"]["session"]]
    assert deploy.directory == "/home/dev/src/webapp"
    assert deploy.message_count > 4
    child = by_id[fixture_sessions["subagent-search"]["children"][0]]
    assert child.parent_id == fixture_sessions["subagent-search"]["session"]


def test_max_updated_covers_messages_and_parts(fixture_db, fixture_sessions):
    child_id = fixture_sessions["subagent-search"]["children"][0]
    with OpenCodeReader(fixture_db) as reader:
        child = reader.sessions([child_id])[0]
    conn = sqlite3.connect(fixture_db)
    own = conn.execute("SELECT time_updated FROM session WHERE id = ?", (child_id,)).fetchone()[0]
    msg = conn.execute("SELECT MAX(time_updated) FROM message WHERE session_id = ?", (child_id,)).fetchone()[0]
    conn.close()
    assert msg > own  # this real child's message moved after its session row
    assert child.time_updated == msg


def test_never_writes_the_source(fixture_db):
    before = hashlib.sha256(fixture_db.read_bytes()).hexdigest()
    mtime = fixture_db.stat().st_mtime_ns
    with OpenCodeReader(fixture_db) as reader:
        for s in reader.sessions():
            reader.session_rows(s)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.conn.execute("CREATE TABLE x (a)")
    assert hashlib.sha256(fixture_db.read_bytes()).hexdigest() == before
    assert fixture_db.stat().st_mtime_ns == mtime
    # SQLite may create the WAL side files of a WAL-mode database for any reader, as
    # OpenCode's own running process does; a read-only reader never puts a page in it.
    wal = fixture_db.with_name("opencode.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_missing_database_says_where_and_how(tmp_path):
    with pytest.raises(SourceMissing) as err:
        OpenCodeReader(tmp_path / "nope.db")
    assert str(tmp_path / "nope.db") in str(err.value)
    assert "OPENCODE_DB" in str(err.value)


def test_missing_required_column_is_named(tmp_path):
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE session (id TEXT, directory TEXT, time_created INT, time_updated INT);"
        "CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, time_updated INT, data TEXT);"
        "CREATE TABLE part (id TEXT, message_id TEXT, session_id TEXT, data TEXT);"
    )
    conn.close()
    with pytest.raises(SchemaError, match=r"'part' has no column time_updated"):
        OpenCodeReader(db)


def test_optional_columns_may_be_absent_or_null(tmp_path):
    db = tmp_path / "min.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE session (id TEXT, directory TEXT, title TEXT, time_created INT, time_updated INT);"
        "CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, time_updated INT, data TEXT);"
        "CREATE TABLE part (id TEXT, message_id TEXT, session_id TEXT, time_created INT, time_updated INT, data TEXT);"
        "INSERT INTO session VALUES ('ses_1', '/w', NULL, 1, 2);"
    )
    conn.close()
    with OpenCodeReader(db) as reader:
        (session,) = reader.sessions()
    assert session.title == "" and session.parent_id is None and session.project_id == ""


def test_reads_while_opencode_holds_a_write_lock(fixture_db):
    """A writer holding the lock briefly (as OpenCode does) delays a read, never fails it."""
    writer = sqlite3.connect(fixture_db, isolation_level=None, check_same_thread=False)
    writer.execute("PRAGMA journal_mode=DELETE")
    writer.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    release.start()
    try:
        with OpenCodeReader(fixture_db, busy_timeout_ms=5000) as reader:
            assert len(reader.sessions()) == 8
    finally:
        release.join()
        writer.close()


def test_missing_database_names_a_channel_database_beside_it(tmp_path):
    (tmp_path / "opencode-dev.db").write_bytes(b"")
    with pytest.raises(SourceMissing, match="opencode-dev.db: a non-default OpenCode channel"):
        OpenCodeReader(tmp_path / "opencode.db")
