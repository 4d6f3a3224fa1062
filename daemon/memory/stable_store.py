"""The prompt-free parts of context blocks, kept in the index for `memoryd context`.

Without a daemon, the OpenCode plugin runs `memoryd context --json` at every session start.
The prompt-free part of the block (hard rules, routing, inventory) reads the whole store's
order and counts: at 100,000 memories that costs more than the rest of the command. It is
a pure function of the index, the settings and the time (only through expiry), so it is
kept in the index's `stable` table:

- every write that changes the index empties the table (`SearchIndex._write`);
- an entry holds until the first expiry among its trees' memories (`until`);
- an entry is stored only when no other process committed while it was built (SQLite's
  `data_version`), so a block read half before and half after a write is never kept.

The daemon keeps these parts in memory instead (it hears every change).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, MutableMapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from daemon import __version__

if TYPE_CHECKING:
    from daemon.memory.context import StablePart
    from daemon.memory.index import SearchIndex
    from daemon.memory.roots import MemoryRoot

STORE_WAIT_MS = 50  # storing is optional: never wait long for another writer's lock


def _encode(stable: StablePart) -> str:
    return json.dumps(
        {
            "head": stable.head,
            "routing": stable.routing,
            "inventory": stable.inventory,
            "generation": stable.generation,
            "shown_ids": sorted(stable.shown_ids),
            "rule_ids": sorted(stable.rule_ids),
            "rules": stable.rules,
            "routing_words": stable.routing_words,
        },
        ensure_ascii=False,
    )


def _decode(data: str) -> StablePart:
    from daemon.memory.context import StablePart

    raw = json.loads(data)
    return StablePart(
        raw["head"],
        tuple(tuple(row) for row in raw["routing"]),
        raw["inventory"],
        raw["generation"],
        frozenset(raw["shown_ids"]),
        frozenset(raw["rule_ids"]),
        raw["rules"],
        {word: tuple(rows) for word, rows in raw["routing_words"].items()},
    )


def _field_names(settings: Any) -> list[str]:
    """The field names of a pydantic model, a NamedTuple (the cached QuickInject) or a plain object."""
    model_fields = getattr(type(settings), "model_fields", None)
    if model_fields is not None:
        return list(model_fields)
    if isinstance(settings, tuple) and hasattr(settings, "_fields"):
        return list(settings._fields)
    return list(vars(settings))


class StoredStable(MutableMapping):
    """A `stable_cache` for `context_payload` backed by the index's `stable` table.

    Keys are what `context_payload` uses (the roots' paths, and a session id); `settings`
    (the `[inject]` section) is part of every key, as are memoryd's version and `now`'s
    place before the next expiry.
    """

    def __init__(self, index: SearchIndex, roots: list[MemoryRoot], settings: Any, now: datetime) -> None:
        self._index = index
        self._db: sqlite3.Connection = index._db
        self._keys = [r.key for r in roots]
        # The settings' values, not their repr: validated ([inject] of Settings) or cached
        # (QuickInject) settings of the same values keep the same parts.
        values = {name: getattr(settings, name) for name in sorted(_field_names(settings))}
        self._salt = hashlib.sha256(f"{__version__}\n{json.dumps(values, default=list)}".encode()).hexdigest()[:16]
        self._now = now.timestamp()
        self._version: int | None = None

    def _key(self, key: tuple[str, ...]) -> str:
        return json.dumps([self._salt, *key], ensure_ascii=False)

    def __getitem__(self, key: tuple[str, ...]) -> StablePart:
        row = self._db.execute("SELECT until, data FROM stable WHERE key = ?", (self._key(key),)).fetchone()
        if self._version is None:
            self._version = self._data_version()  # before anything of this block is read
        if row is None or (row[0] is not None and row[0] <= self._now):
            raise KeyError(key)
        return _decode(row[1])

    def __setitem__(self, key: tuple[str, ...], stable: StablePart) -> None:
        marks = ", ".join("?" * len(self._keys))
        until = self._db.execute(
            f"SELECT min(expires_ts) FROM doc INDEXED BY doc_expires WHERE expires_ts > ? AND root IN ({marks})", [self._now, *self._keys]
        ).fetchone()[0]
        self._db.execute(f"PRAGMA busy_timeout = {STORE_WAIT_MS}")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return  # another process is writing: what it changes would make this stale anyway
            raise
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {self._index.busy_timeout_ms}")
        try:
            if self._version is not None and self._data_version() == self._version:
                self._db.execute(
                    "INSERT OR REPLACE INTO stable (key, until, data) VALUES (?, ?, ?)",
                    (self._key(key), until, _encode(stable)),
                )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _data_version(self) -> int:
        return self._db.execute("PRAGMA data_version").fetchone()[0]

    def __delitem__(self, key: tuple[str, ...]) -> None:
        raise TypeError("entries leave the stable table only with the index's writes")

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(())

    def __len__(self) -> int:
        return 0
