"""Pure: an answer's own structure, read before any cue word: which block says what.

Agents write their final answer with headings, bold labels and bullets ("**Root cause:**",
"## Result", "**What was not the cause:**", "Next steps:", in any language of the lexicon). The labels and what each one
introduces (outcome, cause, fix, failed, next) are data: `<lang>/distill_labels.tsv` in
the lexicon. A label covers its own paragraph; a label alone on its line (or a heading)
covers what follows it up to the next label or heading. Never the paragraph before it:
"What was not the cause: the journal mode" rules out the journal mode, it withdraws
nothing else.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from daemon import lexicon
from daemon.capture.distill.memo import per_session
from daemon.capture.distill.turns import blocks

OUTCOME, CAUSE, FIX, FAILED, NEXT = "outcome", "cause", "fix", "failed", "next"
ROLES = (OUTCOME, CAUSE, FIX, FAILED, NEXT)
TABLE = "distill_labels"
_LABEL_CHARS = 40  # a label is short: "What was not the cause", in any language
_LABELLED = re.compile(r"^(?P<label>[^:：。.!?！？`]{1,%d}?)\s*[:：]\s*(?P<rest>.*)$" % _LABEL_CHARS, re.DOTALL)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<label>.+?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\*\*(?P<label>[^*]+?)\*\*\s*[:：]?\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_PUNCT = re.compile(r"[\s*_`'\"“”‘’()（）\[\]:：.。!！?？-]+")


class Block(NamedTuple):
    """One paragraph or list item of an answer, with the role its label (or heading) gives it."""

    role: str | None  # one of ROLES, or None for an unlabelled block
    text: str  # the block as `turns.blocks` gives it (its label included): its sentences are the answer's
    content: str  # the text after its own label ("" when the label only opens what follows)
    label: str  # the label as written, "" when it has none of its own


@lru_cache(maxsize=1)
def _labels() -> lexicon.Matcher:
    """Every language's label phrases → their role, in one matcher."""
    return lexicon.Matcher({row[0]: row[1] for _, row in lexicon.every(TABLE) if len(row) >= 2 and row[1] in ROLES})


def role_of(label: str) -> str | None:
    """The role a label names: its longest phrase of the table ("What was not the cause" → failed, not cause,
    in every language), or None. A label is short; a sentence that only holds such a word is no label."""
    text = _PUNCT.sub(" ", label).strip()
    found = _labels().find(text) if len(text) <= _LABEL_CHARS else []
    if not found:
        return None
    best = max(found, key=lambda f: f.end - f.start)
    # Most of the label is the phrase: "Fix" and "The fix", not "Note on the fix of the login form".
    return best.value if 2 * (best.end - best.start) >= len(text.replace(" ", "")) - 6 else None


def _heading_role(line: str) -> tuple[bool, str | None]:
    """(is it a heading or a bold line of its own, the role it names)."""
    match = _HEADING.match(line) or _BOLD_LINE.match(line)
    if not match:
        return False, None
    return True, role_of(match.group("label"))


@per_session
def read_blocks(text: str) -> tuple[Block, ...]:
    """The answer's blocks in order, each with its role."""
    out: list[Block] = []
    heading: str | None = None  # the role a heading gives what follows it, up to the next heading
    listed: str | None = None  # the role a label alone on its line gives the paragraph or list right under it
    for chunk in _chunks(text):
        is_heading, role = _heading_role(chunk)
        if is_heading:
            if _HEADING.match(chunk):
                heading, listed = role, None
            else:  # "**Next steps**" on its own line: a label for what is right under it
                listed = role
            continue
        under, listed = listed, None
        for block in blocks(chunk):
            labelled = _LABELLED.match(block)
            own = role_of(labelled.group("label")) if labelled else None
            if own and not labelled.group("rest").strip():
                listed = own  # "Next steps:" alone: what is right under it
                continue
            if own:
                out.append(Block(own, block, labelled.group("rest").strip(), labelled.group("label").strip()))
            else:
                out.append(Block(under or heading, block, block, ""))
    return tuple(out)


def _chunks(text: str) -> list[str]:
    """Headings and bold lines of their own apart, the rest in paragraphs as `blocks` reads them."""
    out: list[str] = []
    current: list[str] = []
    in_code = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
        own_line = not in_code and bool(_HEADING.match(line) or _BOLD_LINE.match(line))
        # A blank line ends a paragraph; a list starts (or ends) one of its own.
        ends = not in_code and (not line.strip() or bool(_ITEM.match(line)) != bool(current and _ITEM.match(current[0])))
        if (own_line or ends) and current:
            out.append("\n".join(current))
            current = []
        if own_line:
            out.append(line)
        elif line.strip() or in_code:
            current.append(line)
    if current:
        out.append("\n".join(current))
    return out


@per_session
def structured(text: str) -> bool:
    """True when the answer has a structure of its own: two labelled blocks (a cause and a fix, an outcome
    and next steps…), or one that says what did not work. One labelled sentence is only a sentence."""
    roles = [b.role for b in read_blocks(text) if b.role]
    return FAILED in roles or len(roles) >= 2


def role_by_sentence(text: str) -> dict[str, str]:
    """Each sentence of a structured answer → its block's role (unlabelled blocks left out)."""
    from daemon.capture.distill.turns import sentences

    out: dict[str, str] = {}
    for block in read_blocks(text):
        if block.role:
            for sentence in sentences(block.text):
                out.setdefault(sentence, block.role)
    return out
