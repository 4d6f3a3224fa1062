"""Term statistics: how many memories hold each token, kept beside FTS5.

FTS5 stores no document frequency: its vocabulary table counts a word's memories by
walking the word's whole posting list, which costs more the larger the store. The
`term` table answers in one lookup; every write of the index keeps it current with the
token streams it adds and removes.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence


def distinct_tokens(streams: Iterable[str]) -> set[str]:
    """The distinct tokens of one memory's token streams."""
    found: set[str] = set()
    for stream in streams:
        found.update(stream.split())
    return found


class TermDelta:
    """Changes to the term table, gathered over a batch of writes and applied at once."""

    def __init__(self) -> None:
        self.delta: Counter[str] = Counter()

    def add(self, streams: Iterable[str]) -> None:
        self.delta.update(distinct_tokens(streams))

    def remove(self, streams: Iterable[str]) -> None:
        self.delta.subtract(distinct_tokens(streams))

    def remove_rows(self, db: sqlite3.Connection, where: str, params: Sequence[object]) -> None:
        """Count out the memories `where` selects (on `doc d`), before they are deleted or replaced."""
        for row in db.execute(
            "SELECT t.t_title, t.t_description, t.t_tags, t.t_body FROM doc d "
            f"JOIN doc_text t ON t.rowid = d.rowid WHERE {where}",
            list(params),
        ):
            self.remove(row)

    def apply(self, db: sqlite3.Connection) -> None:
        changed = [(term, count) for term, count in self.delta.items() if count]
        db.executemany(
            "INSERT INTO term (term, docs) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
            changed,
        )
        db.executemany("DELETE FROM term WHERE term = ? AND docs <= 0", [(t,) for t, c in changed if c < 0])
        self.delta.clear()


def delete_paths(db: sqlite3.Connection, paths: Sequence[str]) -> int:
    """Delete these memories (and their term counts); return how many there were."""
    if not paths:
        return 0
    delta = TermDelta()
    count = 0
    for start in range(0, len(paths), 500):
        chunk = list(paths[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        delta.remove_rows(db, f"d.path IN ({marks})", chunk)
        count += db.execute(f"DELETE FROM doc WHERE path IN ({marks})", chunk).rowcount
    delta.apply(db)
    return count


def delete_root(db: sqlite3.Connection, root_key: str) -> int:
    """Delete every memory of a root (and their term counts); return how many there were."""
    delta = TermDelta()
    delta.remove_rows(db, "d.root = ?", [root_key])
    count = db.execute("DELETE FROM doc WHERE root = ?", (root_key,)).rowcount
    delta.apply(db)
    return count
