"""A pattern's matches found where its first word is, not by the regex engine's own scan.

The engine tries a pattern at every character that could start it: for an alternation of
words (`pass|token|key|…`) that is nearly every letter, and each try costs far more than
`str.find` spends per character. When every match of a pattern starts with one of a few
literal words, finding those words first and trying the pattern only there gives exactly the
matches `pattern.finditer(text)` gives: the same positions, tried in the same order, each
match resuming the search at its end.
"""

from __future__ import annotations

import os
import re

# A run of the characters a credential token is made of (the format tokens' and the
# high-entropy tokens' together, `=` padding included), as long as the shortest format
# token: every format token, high-entropy token and Discord token lies inside one, so those
# detectors look inside the runs only (with the same matches: the characters around a run
# cannot be part of a token, and a pattern's look-behind still sees before the run).
_RUN = re.compile(r"[A-Za-z0-9+/=_\-.$~]{15,}")


def token_runs(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each run of token characters at least 15 long."""
    return [m.span() for m in _RUN.finditer(text)]


def anchored(heads: tuple[str, ...], rest: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The pattern `(?:head|head|…)rest` and the words its matches start with, for
    find_anchored(): each head's leading literal (`credentials?` → `credential`), words
    that begin alike cut to what they share (`passwd`, `password` → `pass`: fewer searches),
    and those that another one starts left out."""
    groups: dict[str, list[str]] = {}
    for head in heads:
        word = _literal_head(head)
        groups.setdefault(word[:4], []).append(word)
    words = sorted({os.path.commonprefix(group) for group in groups.values()}, key=len)
    kept = tuple(word for i, word in enumerate(words) if not any(word.startswith(shorter) for shorter in words[:i]))
    return re.compile("(?:" + "|".join(heads) + ")" + rest), kept


_LITERAL = re.compile(r"[a-z0-9 \-]*")


def _literal_head(head: str) -> str:
    word = _LITERAL.match(head).group()
    if head[len(word) : len(word) + 1] in ("?", "*", "{"):
        word = word[:-1]  # (the last letter is optional: `credentials?`)
    if not word:
        raise ValueError(f"scan.anchored: {head!r} does not start with a literal word")
    return word


def find_anchored(pattern: re.Pattern[str], text: str, anchors: tuple[str, ...], starts: list[int] | None = None) -> list[re.Match[str]]:
    """`list(pattern.finditer(text))`, for a pattern that matches no empty string and whose
    every match starts with one of `anchors`. `starts`, when given, are already every place
    an anchor starts, in order (found for several patterns at once: anchors.py)."""
    if starts is None:
        starts = []
        for anchor in anchors:
            at = text.find(anchor)
            while at >= 0:
                starts.append(at)
                at = text.find(anchor, at + 1)
        starts.sort()
    if not starts:
        return []
    found: list[re.Match[str]] = []
    match, end, tried = pattern.match, 0, -1
    for at in starts:
        if at < end or at == tried:
            continue
        tried = at
        m = match(text, at)
        if m:
            found.append(m)
            end = m.end()
    return found
