"""The base helpers shared across layers: one duration grammar, one SQL-script splitter."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from daemon import state as state_module
from daemon.logs import parse_since
from daemon.memory.checks import parse_expiry
from daemon.sqlscript import split_sql
from daemon.state import StateDB
from daemon.timefmt import parse_duration

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30s", timedelta(seconds=30)),
        ("10m", timedelta(minutes=10)),
        ("1h30m", timedelta(minutes=90)),
        ("12h", timedelta(hours=12)),
        ("30d", timedelta(days=30)),
        ("2w", timedelta(weeks=2)),
        ("6mo", timedelta(days=180)),
        ("1y", timedelta(days=365)),
        ("1mo2w", timedelta(days=44)),
        (" 2 d ", timedelta(days=2)),
        ("1.5h", timedelta(minutes=90)),
    ],
)
def test_one_grammar_reads_every_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "10", "m10", "2025-12-31", "10x", "1 month"])
def test_what_is_not_a_duration_says_so(text):
    assert parse_duration(text) is None


def test_logs_and_remember_read_durations_the_same_way():
    # "m" is minutes for both (it was months nowhere and minutes only in logs).
    assert parse_since("10m", NOW) == NOW - timedelta(minutes=10)
    assert parse_expiry("10m", NOW) == NOW + timedelta(minutes=10)
    assert parse_since("6mo", NOW) == NOW - timedelta(days=180)
    assert parse_expiry("6mo", NOW) == NOW + timedelta(days=180)


def test_the_splitter_keeps_trigger_bodies_whole():
    script = """
    -- a comment before the first statement
    CREATE TABLE t (x INTEGER);
    CREATE TABLE log (x INTEGER);
    CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
        INSERT INTO log VALUES (new.x);
        INSERT INTO log VALUES (new.x * 10);
    END;
    INSERT INTO t VALUES (1)
    """
    statements = split_sql(script)
    assert len(statements) == 4 and statements[2].rstrip().endswith("END;")
    db = sqlite3.connect(":memory:")
    for statement in statements:
        db.execute(statement)
    assert [x for (x,) in db.execute("SELECT x FROM log ORDER BY x")] == [1, 10]


def test_a_state_migration_may_hold_a_trigger(tmp_path, monkeypatch):
    trigger = """
    CREATE TABLE audit (session_id TEXT);
    CREATE TRIGGER session_audit AFTER INSERT ON session BEGIN
        INSERT INTO audit VALUES (new.session_id);
    END;
    """
    monkeypatch.setattr(state_module, "MIGRATIONS", (*state_module.MIGRATIONS, trigger))
    db = StateDB(tmp_path / "state.db")
    try:
        version = db.conn.execute("PRAGMA user_version").fetchone()[0]
        assert version == len(state_module.MIGRATIONS)
        names = {name for (name,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert "session_audit" in names
    finally:
        db.close()
