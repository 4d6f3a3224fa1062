"""Recall counters: how often each memory was recalled, a small ranking hint.

Counters live in `<root>/.state.json`, not in the Markdown: a synced tree would
otherwise conflict on every recall.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from daemon.files import write_if_changed
from daemon.memory.roots import MemoryRoot

log = logging.getLogger("memoryd.memory.hits")


def read_hits(root: MemoryRoot) -> dict[str, int]:
    """Return the recall counters of a root (id → hits); empty when absent or unreadable."""
    try:
        data = json.loads(root.state_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("memory.hits_unreadable", extra={"path": str(root.state_file), "error": str(exc)})
        return {}
    hits = data.get("hits") if isinstance(data, dict) else None
    if not isinstance(hits, dict):
        return {}
    return {str(k): v for k, v in hits.items() if isinstance(v, int) and v > 0}


def add_hits(root: MemoryRoot, ids: Iterable[str]) -> None:
    """Add one recall to each id's counter in the root's `.state.json`."""
    ids = list(ids)
    if not ids or not root.exists():
        return
    hits = read_hits(root)
    for memory_id in ids:
        hits[memory_id] = hits.get(memory_id, 0) + 1
    text = json.dumps({"version": 1, "hits": dict(sorted(hits.items()))}, indent=1) + "\n"
    try:
        # Not fsynced: a counter lost in a crash costs nothing, a sync per recall costs time.
        write_if_changed(root.state_file, text, durable=False)
    except OSError as exc:
        # Counters are a ranking hint: a read-only tree must not break recall.
        log.warning("memory.hits_unwritable", extra={"path": str(root.state_file), "error": str(exc)})
