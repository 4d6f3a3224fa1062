"""Pure: what kind of statement a sentence is, from its wording, in several languages.

Two tables. A *label* opens a sentence and names its kind outright ("Decision:",
and its equivalents in every language of the lexicon). A *cue* is wording inside a sentence
that marks its kind ("root cause", "switched to"). Latin-script cues match whole words; CJK and Hangul cues match
anywhere, since those scripts put no spaces between a word and its particles.
"""

from __future__ import annotations

import re

from daemon import lexicon
from daemon.capture.distill.memo import per_session

# Kinds, in the order a sentence is tested when it has no label.
FINDING, LESSON, GOTCHA, DECISION, FIX, FOLLOWUP = "finding", "lesson", "gotcha", "decision", "fix", "followup"
_KINDS = (LESSON, GOTCHA, DECISION, FINDING, FIX, FOLLOWUP)  # the order labels are tried in
_SPACED = re.compile(r"[A-Za-z0-9]")  # a phrase of a spaced script: matched as whole words


class _Table:
    """A lexicon table's phrases in every language, found as the distiller always read them: a phrase of
    a spaced script (Latin) as whole words, a CJK or Hangul one anywhere (those scripts glue particles on)."""

    def __init__(self, table: str, where: str | None = None) -> None:
        rows = [row for _, row in lexicon.every(table) if where is None or (row[1] if len(row) > 1 else "any") == where]
        values = {row[0]: (row[1] if len(row) > 1 else True) for row in rows}
        self._words = lexicon.Matcher({p: v for p, v in values.items() if _SPACED.search(p)})
        self._anywhere = lexicon.Matcher({p: v for p, v in values.items() if not _SPACED.search(p)}, boundary=False)

    def find(self, text: str) -> tuple[lexicon.Found, ...]:
        return _found(self, text)

    def found(self, text: str) -> bool:
        return bool(_found(self, text))

    def values(self, text: str) -> set:
        return {f.value for f in _found(self, text)}


@per_session
def _found(table: _Table, text: str) -> tuple[lexicon.Found, ...]:
    """A sentence is asked about the same table from several angles: looked up once a session."""
    return (*table._words.find(text), *table._anywhere.find(text))


def _labels() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {kind: [] for kind in _KINDS}
    for _, row in lexicon.every("distill_kind_labels"):
        if len(row) > 1 and row[1] in out:
            out[row[1]].append(row[0])
    return out


_LABELS = _labels()
_CUES = _Table("distill_cues")
# Wording that makes a sentence a decision or a finding even inside a turn's conclusion.
_STRONG = _Table("distill_strong")
_STRONG_ORDER = (DECISION, FINDING, LESSON)

# Anchored at the start, so cheap as it is.
_LABEL_RE = re.compile(
    r"^\W{0,4}(?P<label>"
    + "|".join(f"(?P<{k}>{'|'.join(map(re.escape, sorted(v, key=len, reverse=True)))})" for k, v in _LABELS.items() if v)
    + r")\W{0,2}\s*[:：]\s*",
    re.IGNORECASE,
)


# Any memory kind's label word, with the spaces inside it left out: a text without one
# (its whitespace and bold markers removed too) has no labelled block a memory is made of.
_MEMORY_LABEL_WORD = lexicon.Matcher({w.replace(" ", "") for k in (LESSON, GOTCHA, DECISION) for w in _LABELS[k]},
                                     boundary=False)
# A heading line as `blocks` drops it (no character `str.splitlines` splits at inside it).
_HEADING = re.compile("(?m)^[ \t]*#{1,6}[ \t]+[^.。!！?？:：\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*$")


def may_hold_memory_label(text: str) -> bool:
    """False when no block of `text` (`turns.blocks`) can open with a lesson, gotcha or decision
    label: a quick look that spares most notes the parse. A block is the text's lines with
    markup, bold markers and line breaks taken out and headings dropped, so a label word it
    opens with stands in the text with at most whitespace or `**` inside it."""
    # `str.split` splits at what `\s` matches; `**` pairs go first, as a left-to-right scan takes them.
    return _MEMORY_LABEL_WORD.found("".join(_HEADING.sub("", text).replace("**", "").split()))


CLASSIFY_ORDER = (LESSON, GOTCHA, FINDING, DECISION, FIX)
MEMORY_KINDS = (LESSON, GOTCHA, DECISION)  # labelled lines that also become memories


@per_session
def label_of(sentence: str) -> tuple[str, str] | None:
    """The kind a sentence's opening label names, and the text after the label."""
    match = _LABEL_RE.match(sentence)
    if not match:
        return None
    kind = next(k for k in _LABELS if match.group(k))
    return kind, sentence[match.end() :].strip()


@per_session
def _cues_of(sentence: str) -> frozenset:
    return frozenset(_CUES.values(sentence))


def has_cue(sentence: str, kind: str) -> bool:
    return kind in _cues_of(sentence)


# "always" / "never" make a rule only as one ("never call X", "we always…", "…; never hard-code it"),
# not in a description of behaviour ("the effect never clears it").
_BARE = frozenset({"always", "never"})
_RULE_ALWAYS = re.compile(r"(?i)(?:^|[;:,—–]\s*|\b(?:we|you|should|must|to)\s+)(?:always|never)\b")


def _is_decision(sentence: str) -> bool:
    words = {f.phrase for f in _CUES.find(sentence) if f.value == DECISION}
    if not words:
        return False
    return bool(words - _BARE) or bool(_RULE_ALWAYS.search(sentence))


@per_session
def kind_of(sentence: str) -> str | None:
    """The kind of a sentence: its label's, else its first cue's (followups excluded)."""
    labelled = label_of(sentence)
    if labelled:
        return labelled[0]
    found = _cues_of(sentence)
    return next((kind for kind in CLASSIFY_ORDER if (_is_decision(sentence) if kind == DECISION else kind in found)), None)


@per_session
def strong_kind(sentence: str) -> str | None:
    """The kind of a sentence whose wording leaves no doubt (a decision, a root cause), or None."""
    found = _STRONG.values(sentence)
    return next((kind for kind in _STRONG_ORDER if kind in found), None)


# --- decisive findings and plans ------------------------------------------------------

_DECISIVE = _Table("distill_decisive")
# Wording that makes a statement a guess, not a finding; and guesses its whole words miss (Chinese
# and Japanese hedges glued to the next word).
_HEDGE = _Table("distill_hedge")
_GUESS = _Table("distill_guess")
# Narration of what the agent is about to do, at a sentence's start ("Let me…", "First,"), a plan anywhere in
# it ("…so I'll fix the hook"), or its polite future at its end (Japanese "-masu"): not a result.
_NARRATION = _Table("distill_intent", "start")
_INTENT = _Table("distill_intent", "any")
_INTENT_END = _Table("distill_intent", "end")
# An expectation ("should go through now") is not a fix either, though it may be a claim that fails.
_SHOULD = _Table("distill_should")


def narrates(sentence: str) -> bool:
    """The sentence opens with narration of what comes next ("Let me…", "First")."""
    return any(f.start == 0 for f in _NARRATION.find(sentence.lstrip()))


def names_cause(sentence: str) -> bool:
    """Wording of a finding, settled or only guessed ("the cause is probably X")."""
    return _DECISIVE.found(sentence)


@per_session
def is_decisive(sentence: str) -> bool:
    """A finding stated as settled ("found it", "X is the culprit", "it turned out"), not hedged."""
    return _DECISIVE.found(sentence) and not _HEDGE.found(sentence)


@per_session
def is_hedged(sentence: str) -> bool:
    """A statement made as a guess ("I think…", "probably", "should be")."""
    return _HEDGE.found(sentence) or _GUESS.found(sentence)


@per_session
def is_intent(sentence: str) -> bool:
    """What the agent is about to do ("Let me…", "…so I'll fix the hook", "I will fix it"), not what it did."""
    text = sentence.rstrip()
    return narrates(sentence) or _INTENT.found(sentence) or any(f.end == len(text) for f in _INTENT_END.find(text))


@per_session
def is_plan(sentence: str) -> bool:
    """An intent or an expectation ("should fix the apply"): never a fix that worked."""
    return is_intent(sentence) or _SHOULD.found(sentence)
