"""Derived files that are not what memoryd wrote are moved aside and rebuilt, said once."""

from __future__ import annotations

import sqlite3

from structlog.testing import capture_logs

from daemon.capture.lifecycle import session_counts
from daemon.config import Config, load_settings
from daemon.service.jobs import Jobs


def test_a_foreign_index_and_a_corrupt_state_db_are_moved_aside_and_rebuilt(home, fixture_db):
    settings, paths = load_settings()
    paths.index_db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(paths.index_db)  # another program's database at our path
    conn.execute("CREATE TABLE meta (k TEXT)")
    conn.commit()
    conn.close()
    paths.state_db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    with capture_logs() as logs:
        jobs = Jobs(Config(settings, paths))
    try:
        assert jobs.capture(full=True) is not None  # works at once on the fresh files
        assert session_counts(jobs.state)["distilled"] == 6
        for root in jobs.roots():
            jobs.refresh_tree(root.path)
        conn = sqlite3.connect(f"file:{paths.index_db}?mode=ro", uri=True)
        assert conn.execute("SELECT COUNT(*) FROM doc").fetchone()[0] >= 6  # rebuilt from the notes
        conn.close()
        assert jobs.state.get_meta("index_rebuilt") and jobs.state.get_meta("rebuilt")
    finally:
        jobs.close()
    assert sorted(e["event"] for e in logs if e["event"].endswith("rebuilt")) == ["index.rebuilt", "state.rebuilt"]
    aside = sorted(p.name.split(".broken-")[0] for p in paths.index_db.parent.glob("*.broken-*[0-9]"))
    assert aside == ["index.db", "state.db"]  # their -wal/-shm files went along
    with capture_logs() as again:
        Jobs(Config(settings, paths)).close()
    assert not [e for e in again if e["event"].endswith("rebuilt")]  # reported once
