"""Pure: is a follow-up one turn proposed done by a later turn of the same session? Is a result
one turn reached replaced by what a later request asked for instead?

A follow-up is done when a later turn acted on what it names: edited or created a path
it mentions, or was asked for, or concluded with, most of its distinctive words. A
result is replaced when a later request changes the requirement (its wording:
`<lang>/distill_requirement_change.tsv`), names something the result states, and the
later turn changes a file the earlier one changed.
"""

from __future__ import annotations

import re

from functools import lru_cache

from daemon import lexicon
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
_NEAR = 24  # characters either side of a change's wording where what it changes is named


def terms(text: str) -> set[str]:
    """Distinctive words of a text: identifiers, longer words, CJK bigrams."""
    found = {m.strip("`").strip(".").lower() for m in _IDENT.findall(text)}
    found |= {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP}
    for run in _CJK_RUN.findall(text):
        found |= {run[i : i + 2] for i in range(len(run) - 1)}
    return {t for t in found if t}


def _changed(turn: Turn) -> set[str]:
    """The paths a turn edited or created (each also by its file name), lower-cased."""
    changed: set[str] = set()
    for tool in turn.tools:
        if tool.tool in ("edit", "write", "multiedit", "patch", "apply_patch") and tool.status != "error":
            path = str(tool.input.get("filePath") or tool.input.get("path") or "")
            if path:
                changed |= {path.lower(), path.rsplit("/", 1)[-1].lower()}
    return changed


def _turn_terms(turn: Turn) -> tuple[set[str], set[str]]:
    """(words of what the turn asked and said, paths it edited or created)."""
    words: set[str] = set()
    for text in [*turn.asked, *turn.said]:
        words |= terms(text)
    return words, _changed(turn)


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


@lru_cache(maxsize=1)
def _change_words() -> lexicon.Matcher:
    return lexicon.Matcher({row[0]: True for _, row in lexicon.every("distill_requirement_change")})


def _written(turn: Turn) -> list[str]:
    """The text a turn's edits and writes put into files."""
    out = []
    for tool in turn.tools:
        if tool.tool in ("edit", "write", "multiedit") and tool.status != "error":
            text = tool.input.get("newString") or tool.input.get("content") or ""
            if isinstance(text, str) and text.strip():
                out.append(text)
    return out


def _rewrites(earlier: Turn, later: Turn) -> bool:
    """The later turn replaced text the earlier one wrote (an edit's old text lies in what it put there)."""
    written = _written(earlier)
    for tool in later.tools:
        old = tool.input.get("oldString") if tool.tool in ("edit", "multiedit") and tool.status != "error" else None
        if isinstance(old, str) and len(old.strip()) >= 8 and any(old.strip() in w for w in written):
            return True
    return False


def replaced_later(result: str, turn: Turn, later: list[Turn]) -> bool:
    """True when a later request changed what `turn` delivered (`result`): the earlier result no longer stands.

    Either the request says so next to something the result states, or the later turn rewrote what this
    one wrote while its request speaks of what the result states (two of its words).
    """
    changed = _changed(turn)
    stated = terms(result)
    for other in later:
        asked = " ".join(other.asked)
        if asked and len(stated & terms(asked)) >= 2 and _rewrites(turn, other):
            return True
        # What the change is about stands next to its wording: "not CSV", "instead of CSV" (the Korean puts it after: "CSV instead").
        near = " ".join(asked[max(0, f.start - _NEAR) : f.end + _NEAR] for f in _change_words().find(asked))
        if not near:
            continue
        if changed & _changed(other) and stated & terms(near):
            return True
    return False
