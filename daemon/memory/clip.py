"""Shortening text for people: at a sentence or word boundary, never inside a word.

Pure functions. Used for extracted memories' descriptions and the context block's
previews, which show a memory's own words, without link lists or redaction markers.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
_SENTENCE_END = re.compile("[.!?](?=\\s)|[\u3002\uff01\uff1f]")  # CJK full stop, exclamation and question marks too
_SOURCES = re.compile(r"(?ms)^(?:Sources?|Links?|See also):\s*$.*")
_LINK_LINE = re.compile(r"(?m)^\s*[-*]\s*(?:session `[^`]*`:?\s*)?\[[^\]]*\]\([^)]*\)\s*$")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_REDACTED = re.compile(r"\s*\[REDACTED[^\]]*\]")
_HEADING = re.compile(r"(?m)^\s*#.*$")  # a note's section names are not its content
_QUOTE = re.compile(r"(?m)^\s*>+\s*")


def cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut where the limit falls ("…" marks a cut): for
    titles and table cells, where a boundary is not worth the room."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + ELLIPSIS


def clip_text(text: str, limit: int) -> str:
    """Return `text` (one line) within `limit` characters, cut where a reader expects it.

    Whole sentences when at least one fits in the latter half of the budget; else whole
    words (CJK text, which has no spaces, may cut between characters); "…" marks a cut.
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    if limit < 2:
        return ELLIPSIS[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(text[:limit])]
    if ends and ends[-1] >= limit // 2:
        return text[: ends[-1]]
    room = text[: limit - 1]
    space = room.rfind(" ")
    # A space far back means a long unbroken run (CJK text, an identifier): cut inside it.
    if space >= limit // 3:
        return room[:space].rstrip(" ,;:—-") + ELLIPSIS
    return room.rstrip() + ELLIPSIS


REPEATS = 0.7  # a line whose words are this share of words already said repeats them


def without_repeats(text: str, *said: str) -> str:
    """The lines of `text` that say something `said` (a preview's title, the prompt it
    answers) does not: a session note that quotes its opening prompt does not quote it
    back to the session that asked it again."""
    from daemon.memory.tokenize import tokens

    known = {t for s in said for t in tokens(s)}
    kept = []
    for line in text.splitlines():
        words = tokens(line)
        if not words or sum(w in known for w in words) < REPEATS * len(words):
            kept.append(line)
    return "\n".join(kept)


def readable(text: str) -> str:
    """A memory's own words: no "Sources:" list, link lines, link targets, headings or redaction markers."""
    text = _SOURCES.sub("", text)
    text = _LINK_LINE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _REDACTED.sub("", text)
    text = _QUOTE.sub("", _HEADING.sub("", text))
    return " ".join(text.split())
