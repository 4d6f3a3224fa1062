"""A pattern's matches found where its first word is, not by the regex engine's own scan.

The engine tries a pattern at every character that could start it: for an alternation of
words (`pass|token|key|…`) that is nearly every letter, and each try costs far more than
`str.find` spends per character. When every match of a pattern starts with one of a few
literal words, finding those words first and trying the pattern only there gives exactly the
matches `pattern.finditer(text)` gives: the same positions, tried in the same order, each
match resuming the search at its end.
"""

from __future__ import annotations

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


def find_anchored(pattern: re.Pattern[str], text: str, anchors: tuple[str, ...]) -> list[re.Match[str]]:
    """`list(pattern.finditer(text))`, for a pattern that matches no empty string and whose
    every match starts with one of `anchors`."""
    starts: list[int] = []
    for anchor in anchors:
        at = text.find(anchor)
        while at >= 0:
            starts.append(at)
            at = text.find(anchor, at + 1)
    if not starts:
        return []
    starts.sort()
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
