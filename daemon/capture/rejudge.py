"""Junk verdicts are judged again when the distiller or its prompt (or rules) version changes.

A verdict is only as good as what gave it: a better prompt or a fixed rule may find
work in a session an older one called junk. Notes have their own staleness rule
(lifecycle.is_stale); a junk verdict costs little to redo, so any change redoes it.
"""

from __future__ import annotations

from daemon.capture.lifecycle import Identity, Status, junk_is_stale
from daemon.state import StateDB

_JUDGED_BY = "junk_judged_by"  # meta: the identity every junk verdict was last checked against


def stale_junk_ids(state: StateDB, identity: Identity) -> set[str]:
    """Sessions whose junk verdict is stale (`lifecycle.junk_is_stale`); free once every verdict is current."""
    marker = "\x1f".join((identity.distiller, identity.prompt_version))
    if state.get_meta(_JUDGED_BY) == marker:
        return set()
    stale = {r.session_id for r in state.records(Status.JUNK) if junk_is_stale(r, identity)}
    if not stale:
        state.set_meta(_JUDGED_BY, marker)  # later passes skip the scan until the identity changes
    return stale
