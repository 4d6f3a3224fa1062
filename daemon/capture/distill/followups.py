"""Pure: is a follow-up one turn proposed done by a later turn of the same session?

A follow-up is done when a later turn acted on what it names: edited or created a path
it mentions, or was asked for, or concluded with, most of its distinctive words.
"""

from __future__ import annotations

import re

from daemon.capture.distill.cues import label_of
from daemon.capture.distill.turns import Turn

_IDENT = re.compile(r"[\w./-]*[./_][\w./-]+|`[^`]+`")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{3,}|\b[A-Z]{2,3}\b")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_STOP = frozenset(
    "follow-up followup todo also should could would still need next step later consider with from that this "
    "there their then them they into onto about when what which have been will your make sure".split()
)
DONE_SHARE = 0.6  # share of a follow-up's distinctive words a later turn must cover


def terms(text: str) -> set[str]:
    """Distinctive words of a text: identifiers, longer words, CJK bigrams."""
    found = {m.strip("`").strip(".").lower() for m in _IDENT.findall(text)}
    found |= {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP}
    for run in _CJK_RUN.findall(text):
        found |= {run[i : i + 2] for i in range(len(run) - 1)}
    return {t for t in found if t}


def _turn_terms(turn: Turn) -> tuple[set[str], set[str]]:
    """(words of what the turn asked and said, paths it edited or created)."""
    words: set[str] = set()
    for text in [*turn.asked, *turn.said]:
        words |= terms(text)
    changed: set[str] = set()
    for tool in turn.tools:
        if tool.tool in ("edit", "write", "multiedit", "patch", "apply_patch") and tool.status != "error":
            path = str(tool.input.get("filePath") or tool.input.get("path") or "")
            if path:
                changed |= {path.lower(), path.rsplit("/", 1)[-1].lower()}
    return words, changed


def done_later(followup: str, later: list[Turn]) -> bool:
    """True when a later turn evidently did what `followup` proposes."""
    labelled = label_of(followup)
    wanted = terms(labelled[1] if labelled else followup)
    if not wanted or not later:
        return False
    idents = {t for t in wanted if re.search(r"[./_]", t)}
    for turn in later:
        words, changed = _turn_terms(turn)
        if idents and any(i in changed or i.rsplit("/", 1)[-1] in changed for i in idents):
            return True
        if len(wanted & words) >= DONE_SHARE * len(wanted):
            return True
    return False
