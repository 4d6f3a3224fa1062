"""Writers for test copies of an OpenCode database (never the fixture itself)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def add_message(
    db: Path,
    session_id: str,
    message_id: str,
    role: str,
    parts: list[tuple[str, dict | bytes | str]],
    at_ms: int,
) -> None:
    """Append a message with parts to a session and touch the session, as OpenCode does."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
            (message_id, session_id, at_ms, at_ms, json.dumps({"role": role, "time": {"created": at_ms}})),
        )
        for part_id, data in parts:
            raw = data if isinstance(data, (bytes, str)) else json.dumps(data)
            conn.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
                (part_id, message_id, session_id, at_ms, at_ms, raw),
            )
        conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (at_ms, session_id))
    conn.close()


def max_time(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT MAX(time_updated) FROM session").fetchone()[0]
    finally:
        conn.close()


def distill_once(opencode_db: Path | None = None, clock=None, options=None):  # noqa: ANN001, ANN201 - PassReport
    """One capture pass over the home's OpenCode database (or `opencode_db`), nothing left
    settling; `clock`: the pass's (the real one by default), `options`: its PassOptions."""
    import time

    from daemon.capture.pipeline import PassOptions, open_capturer
    from daemon.config import Config, load_settings

    settings, paths = load_settings()
    if opencode_db is not None:
        paths = paths._replace(opencode_db=opencode_db)
    settings.capture.settle_seconds = 0
    capture = open_capturer(Config(settings, paths), clock=clock or time.time)
    try:
        return capture.run_pass(options or PassOptions())
    finally:
        capture.close()
