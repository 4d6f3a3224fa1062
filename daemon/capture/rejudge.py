"""Junk verdicts are judged again when the distiller or its prompt (or rules) version changes.

A verdict is only as good as what gave it: a better prompt or a fixed rule may find
work in a session an older one called junk. Notes have their own staleness rule
(pipeline.is_stale); a junk verdict costs little to redo, so any change redoes it.
"""

from __future__ import annotations

from daemon.state import SessionRecord, StateDB

_JUDGED_BY = "junk_judged_by"  # meta: the identity every junk verdict was last checked against


def junk_is_stale(record: SessionRecord, identity: tuple[str, str]) -> bool:
    """A junk verdict given by another distiller or prompt version than `identity`."""
    return record.status == "junk" and (record.distiller, record.prompt_version) != tuple(identity)


def stale_junk_ids(state: StateDB, identity: tuple[str, str]) -> set[str]:
    """Sessions whose junk verdict is stale; free once every verdict is current."""
    marker = "\x1f".join(identity)
    if state.get_meta(_JUDGED_BY) == marker:
        return set()
    stale = {r.session_id for r in state.records("junk") if junk_is_stale(r, identity)}
    if not stale:
        state.set_meta(_JUDGED_BY, marker)  # later passes skip the scan until the identity changes
    return stale
