"""The recorded OpenCode 2.0.15 rows (tests/fixtures/opencode-2.0.15) as a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

V2_FIXTURE = FIXTURES / "opencode-2.0.15"


def v2_sessions() -> dict[str, dict[str, Any]]:
    """sessions.json: scenario → session id, facts, forbidden strings."""
    return json.loads((V2_FIXTURE / "sessions.json").read_text())


def make_v2_db(path: Path) -> Path:
    """A database as a fresh OpenCode 2 install has it (no 1.x tables), holding the rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = json.loads((V2_FIXTURE / "rows.json").read_text())
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript((V2_FIXTURE / "schema.sql").read_text())
        for table in ("session_v2", "session_message"):
            for row in rows[table]:
                cols = list(row)
                conn.execute(f"INSERT INTO {table} ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", list(row.values()))
    conn.close()
    return path


def add_v2_row(db: Path, session_id: str, kind: str, data: dict, at_ms: int, row_id: str) -> None:
    """Append a row to a session as OpenCode 2 does (next seq)."""
    conn = sqlite3.connect(db)
    with conn:
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM session_message WHERE session_id = ?", (session_id,)).fetchone()[0]
        conn.execute(
            "INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row_id, session_id, kind, seq, at_ms, at_ms, json.dumps(data)),
        )
    conn.close()
