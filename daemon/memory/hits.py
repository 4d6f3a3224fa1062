"""Recall counters: how often each memory was recalled, a small ranking hint.

Counters live beside the search index in memoryd's state folder (`hits.json`), keyed by
memory id: never in a memory tree, where every recall would show in `git status` and a
synced tree would conflict. Losing them costs only a nudge in ranking, so they are
written without fsync.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from daemon.files import write_if_changed

log = logging.getLogger("memoryd.memory.hits")

HITS_FILE = "hits.json"


class HitCounter:
    """The recall counters in one file (id → hits)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def read(self) -> dict[str, int]:
        """Return every counter; empty when the file is absent or unreadable."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("memory.hits_unreadable", extra={"path": str(self.path), "error": str(exc)})
            return {}
        hits = data.get("hits") if isinstance(data, dict) else None
        if not isinstance(hits, dict):
            return {}
        return {str(k): v for k, v in hits.items() if isinstance(v, int) and v > 0}

    def add(self, ids: Iterable[str], known: dict[str, int] | None = None) -> None:
        """Add one recall to each id (`known`: the counters just read, to save a read)."""
        ids = list(ids)
        if not ids:
            return
        hits = dict(self.read() if known is None else known)
        for memory_id in ids:
            hits[memory_id] = hits.get(memory_id, 0) + 1
        text = json.dumps({"version": 1, "hits": dict(sorted(hits.items()))}, indent=1) + "\n"
        try:
            # Not fsynced: a counter lost in a crash costs nothing, a sync per recall costs time.
            write_if_changed(self.path, text, durable=False)
        except OSError as exc:
            # Counters are a ranking hint: an unwritable state folder must not break recall.
            log.warning("memory.hits_unwritable", extra={"path": str(self.path), "error": str(exc)})
