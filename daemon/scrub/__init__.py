"""The secret scrubber: redact() for everything memoryd writes or sends, find_secrets() for
the guards that refuse.

Pure functions over strings. A redaction stays visible as `[REDACTED:kind]` so a reader knows
something was there. Four detectors, from the most specific to the most general, each
yielding spans; overlapping spans merge so nothing is left half-redacted:

1. known formats (formats.py, a row each in formats.tsv): provider prefixes and shapes, one
   trie-shaped regex;
2. structure (structure.py): private-key blocks, URL userinfo, `.netrc`/`.pgpass` lines;
3. names (keywords.py): values bound to a secret's name, command flags, headers, prose,
   judged by their shape (shape.py) so that code (`token = tokens[i]`) survives;
4. high-entropy tokens anywhere (entropy.py), except digests, ids and encoded text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from daemon.scrub import entropy, formats, keywords, structure

Span = tuple[int, int, str]
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
MARKER = "[REDACTED:"
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
# When spans overlap, a named kind beats a generic one, then the more specific detector wins.
_GENERIC = frozenset({"assignment", "password", "high_entropy"})


def _spans(text: str) -> Iterator[tuple[int, Span]]:
    low = text.lower()
    if len(low) != len(text):  # a few characters grow when lower-cased (`İ`): keep offsets
        low = text.translate(_ASCII_LOWER)
    for span in structure.find_keys(text, low):
        yield 0, span
    for span in formats.find_formats(text, low):
        yield 1, span
    if "://" in text:
        for span in structure.find_url_credentials(text):
            yield 2, span
    for span in structure.find_credential_files(text, low):
        yield 2, span
    for span in keywords.find_headers(text, low):
        yield 2, span
    for span in keywords.find_commands(text, low):
        yield 2, span
    for span in keywords.find_assignments(text, low):
        yield 3, span
    for span in keywords.find_prose(text, low):
        yield 3, span
    for span in entropy.find_tokens(text):
        yield 4, span


def find_spans(text: str) -> list[Span]:
    """Return the merged (start, end, kind) spans of every secret in `text`, in order."""
    # A span touching an earlier redaction marker is a detector reading the marker itself
    # (`https://[REDACTED:x]@host` has a `user:password` shape): skip it, so redact() is
    # idempotent.
    markers = [m.span() for m in _MARKER.finditer(text)] if MARKER in text else []
    found = sorted(
        (
            (s, e, (kind in _GENERIC, rank), kind)
            for rank, (s, e, kind) in _spans(text)
            if e > s and not any(s < me and e > ms for ms, me in markers)
        ),
        key=lambda x: (x[0], x[2], -x[1]),
    )
    merged: list[list] = []
    for start, end, rank, kind in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if rank < last[2]:
                last[2], last[3] = rank, kind
            continue
        merged.append([start, end, rank, kind])
    return [(s, e, k) for s, e, _, k in merged]


def redact(text: str) -> str:
    """Return `text` with every secret replaced by `[REDACTED:kind]`."""
    if not text:
        return text
    spans = find_spans(text)
    if not spans:
        return text
    out, pos = [], 0
    for start, end, kind in spans:
        out.append(text[pos:start])
        out.append(f"{MARKER}{kind}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def find_secrets(text: str) -> list[str]:
    """Return the kinds of secret found in `text` (empty when clean), in order of appearance."""
    kinds: list[str] = []
    for _, _, kind in find_spans(text) if text else ():
        if kind not in kinds:
            kinds.append(kind)
    return kinds
