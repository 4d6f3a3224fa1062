"""Grow a real-shape OpenCode database (1.x tables, or 2.0 ones) by cloning real sessions with fresh ids."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "opencode-1.18.33" / "opencode.db"


def grow(target: Path, sessions: int) -> int:
    """Copy the fixture to `target` and clone its sessions until there are `sessions` roots.

    Returns the number of root sessions written. Ids keep OpenCode's ordering rule
    (message and part ids ascend in creation order) and times shift per copy.
    """
    shutil.copy(FIXTURE, target)
    conn = sqlite3.connect(target)
    conn.execute("PRAGMA journal_mode=WAL")
    s_cols = [r[1] for r in conn.execute("PRAGMA table_info(session)")]
    src_sessions = conn.execute("SELECT * FROM session").fetchall()
    src_messages = conn.execute("SELECT id, session_id, time_created, time_updated, data FROM message").fetchall()
    src_parts = conn.execute("SELECT id, message_id, session_id, time_created, time_updated, data FROM part").fetchall()
    roots = sum(1 for s in src_sessions if s[s_cols.index("parent_id")] is None)
    copies = max(0, -(-(sessions - roots) // roots))
    idx = {c: i for i, c in enumerate(s_cols)}
    with conn:
        for n in range(1, copies + 1):
            shift = -n * 3_600_000  # clones are older: a backfill of history
            tag = f"{n:06d}"
            rows = []
            for s in src_sessions:
                row = list(s)
                row[idx["id"]] = f"{s[idx['id']]}_{tag}"
                if row[idx["parent_id"]]:
                    row[idx["parent_id"]] = f"{row[idx['parent_id']]}_{tag}"
                row[idx["time_created"]] += shift
                row[idx["time_updated"]] += shift
                rows.append(row)
            conn.executemany(f"INSERT INTO session VALUES ({','.join('?' * len(s_cols))})", rows)
            conn.executemany(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
                [(f"msg_{tag}{m[0][4:]}", f"{m[1]}_{tag}", m[2] + shift, m[3] + shift, m[4]) for m in src_messages],
            )
            conn.executemany(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (f"prt_{tag}{p[0][4:]}", f"msg_{tag}{p[1][4:]}", f"{p[2]}_{tag}", p[3] + shift, p[4] + shift, p[5])
                    for p in src_parts
                ],
            )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return roots * (copies + 1)


def grow_v2(target: Path, sessions: int) -> int:
    """A fresh OpenCode 2 database (no 1.x tables) of the recorded 2.0.15 sessions, cloned
    until there are `sessions` roots. Returns the number of root sessions written."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.opencode.v2fixture import make_v2_db

    make_v2_db(target)
    conn = sqlite3.connect(target)
    s_cols = [r[1] for r in conn.execute("PRAGMA table_info(session_v2)")]
    m_cols = [r[1] for r in conn.execute("PRAGMA table_info(session_message)")]
    src_sessions = conn.execute("SELECT * FROM session_v2").fetchall()
    src_rows = conn.execute("SELECT * FROM session_message").fetchall()
    si, mi = {c: i for i, c in enumerate(s_cols)}, {c: i for i, c in enumerate(m_cols)}
    roots = sum(1 for s in src_sessions if s[si["parent_id"]] is None)
    copies = max(0, -(-(sessions - roots) // roots))
    with conn:
        for n in range(1, copies + 1):
            shift, tag = -n * 3_600_000, f"{n:06d}"  # clones are older: a backfill of history
            rows = []
            for s in src_sessions:
                row = list(s)
                row[si["id"]] = f"{s[si['id']]}_{tag}"
                if row[si["parent_id"]]:
                    row[si["parent_id"]] = f"{row[si['parent_id']]}_{tag}"
                for col in ("time_created", "time_updated", "time_idle"):
                    row[si[col]] = row[si[col]] + shift if row[si[col]] else row[si[col]]
                rows.append(row)
            conn.executemany(f"INSERT INTO session_v2 VALUES ({','.join('?' * len(s_cols))})", rows)
            rows = []
            for m in src_rows:
                row = list(m)
                row[mi["id"]] = f"msg_{tag}{m[mi['id']][4:]}"
                row[mi["session_id"]] = f"{m[mi['session_id']]}_{tag}"
                row[mi["time_created"]] += shift
                row[mi["time_updated"]] += shift
                rows.append(row)
            conn.executemany(f"INSERT INTO session_message VALUES ({','.join('?' * len(m_cols))})", rows)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return roots * (copies + 1)
