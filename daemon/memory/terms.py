"""Counts kept beside FTS5 so that reading one costs a lookup, not a walk of the store.

- `term`: how many memories hold each token. FTS5 stores no document frequency: its
  vocabulary table counts a word's memories by walking the word's whole posting list.
- `cat_tag`: per root and category, how many memories it holds (tag '') and carry each
  tag: ROOT.md's directory registry, without a pass over the category's rows.

Every write of the index keeps them current with the rows it adds and removes.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence


def distinct_tokens(streams: Iterable[str]) -> set[str]:
    """The distinct tokens of one memory's token streams."""
    found: set[str] = set()
    for stream in streams:
        found.update(stream.split())
    return found


def root_facts(category: str, tags: str, scenarios: str, hard_rule: int, title: str, description: str) -> tuple:
    """What ROOT.md's tables take from a memory (registry: category, tags; routing and hard
    rules: scenarios, the rule flag, and the title and description of those it lists)."""
    listed = scenarios != "[]" or bool(hard_rule)
    return (category, tags, scenarios, bool(hard_rule), title if listed else None, description if listed else None)


class CountsDelta:
    """Changes to the term and cat_tag tables, gathered over a batch of writes and applied at once."""

    def __init__(self) -> None:
        self.terms: Counter[str] = Counter()
        self.tags: Counter[tuple[str, str, str]] = Counter()
        self.before: dict[str, tuple] = {}  # path → root_facts of the rows counted out

    def add(self, root: str, category: str, tags_json: str, streams: Iterable[str], sign: int = 1) -> None:
        # Counter's own (C) counting, not a Python loop: a backfill counts ~100 tokens a note.
        if sign == 1:
            self.terms.update(distinct_tokens(streams))
        else:
            self.terms.subtract(dict.fromkeys(distinct_tokens(streams), -sign))
        self.tags[(root, category, "")] += sign
        if tags_json != "[]":
            for tag in json.loads(tags_json):
                self.tags[(root, category, str(tag))] += sign

    def remove_rows(self, db: sqlite3.Connection, where: str, params: Sequence[object]) -> None:
        """Count out the memories `where` selects (on `doc d`), before they are deleted or replaced."""
        for path, root, category, tags, scenarios, hard, title, description, *streams in db.execute(
            "SELECT d.path, d.root, d.category, d.tags, d.scenarios, d.hard_rule, d.title, d.description, "
            f"t.t_title, t.t_description, t.t_tags, t.t_body FROM doc d JOIN doc_text t ON t.rowid = d.rowid WHERE {where}",
            list(params),
        ):
            self.add(root, category, tags, streams, -1)
            self.before[path] = root_facts(category, tags, scenarios, hard, title, description)

    def apply(self, db: sqlite3.Connection) -> None:
        terms = [(term, count) for term, count in self.terms.items() if count]
        db.executemany(
            "INSERT INTO term (term, docs) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
            terms,
        )
        db.executemany("DELETE FROM term WHERE term = ? AND docs <= 0", [(t,) for t, c in terms if c < 0])
        tags = [(*key, count) for key, count in self.tags.items() if count]
        db.executemany(
            "INSERT INTO cat_tag (root, category, tag, docs) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(root, category, tag) DO UPDATE SET docs = docs + excluded.docs",
            tags,
        )
        db.executemany(
            "DELETE FROM cat_tag WHERE root = ? AND category = ? AND tag = ? AND docs <= 0",
            [(r, c, t) for r, c, t, n in tags if n < 0],
        )
        self.terms.clear()
        self.tags.clear()


def delete_paths(db: sqlite3.Connection, paths: Sequence[str]) -> int:
    """Delete these memories (and their counts); return how many there were."""
    if not paths:
        return 0
    delta = CountsDelta()
    count = 0
    for start in range(0, len(paths), 500):
        chunk = list(paths[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        delta.remove_rows(db, f"d.path IN ({marks})", chunk)
        count += db.execute(f"DELETE FROM doc WHERE path IN ({marks})", chunk).rowcount
    delta.apply(db)
    return count


def delete_root(db: sqlite3.Connection, root_key: str) -> int:
    """Delete every memory of a root (and their counts); return how many there were."""
    delta = CountsDelta()
    delta.remove_rows(db, "d.root = ?", [root_key])
    count = db.execute("DELETE FROM doc WHERE root = ?", (root_key,)).rowcount
    delta.apply(db)
    return count
