"""The secret scrubber: redact() for everything memoryd writes or sends, find_secrets() for
the guards that refuse.

Pure functions over strings. A redaction stays visible as `[REDACTED:kind]` so a reader knows
something was there. Four detectors, from the most specific to the most general, each
yielding spans; overlapping spans merge so nothing is left half-redacted:

1. known formats (formats.py, a row each in formats.tsv): provider prefixes and shapes, one
   trie-shaped regex;
2. structure: private-key blocks and JWTs in any wrapping, URL userinfo, `.netrc`/`.pgpass`
   lines (structure.py); URL path segments and query values (urls.py); base64 decoded and
   scanned again (encoded.py);
3. names and places: values bound to a secret's name, command flags and arguments, headers,
   cookies (keywords.py), places without an operator, positional arguments and connection
   strings (places.py), sentences in any language of the lexicon (prose.py), all judged by
   their shape (shape.py) so that code (`token = tokens[i]`) survives;
4. high-entropy tokens anywhere (entropy.py), except digests, ids and encoded text.

The word tables (a secret's names in 44 languages, the calls that take a password, the
words of a URL, a name's words) are data in `daemon/lexicon/`.

Most text holds no secret, so what keeps this cheap is finding nothing fast: each detector
first checks for what its patterns need (a word, a dash, a run of token characters), the
runs of token characters are found once for the detectors that look inside them, and the
keyword patterns are tried only where their first word is, every detector's words found in
one Aho-Corasick pass (anchors.py, scan.py). Short texts, which come back again and again
(titles, directories, a tool's status line), keep their answers.
"""

from __future__ import annotations

import functools
import re

from daemon.scrub import anchors, encoded, entropy, formats, keywords, places, prose, structure, urls
from daemon.scrub.scan import token_runs

Span = tuple[int, int, str]
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
MARKER = "[REDACTED:"
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
# When spans overlap, a named kind beats a generic one, then the more specific detector wins.
_GENERIC = frozenset({"assignment", "password", "high_entropy"})


@functools.lru_cache(maxsize=1)
def _anchors() -> anchors.Anchors:
    """The words every name-driven detector starts from, by detector, found in one pass."""
    return anchors.Anchors({
        "prose": prose.names(), "call": places.call_words(), "pair": places.PAIR_WORDS, "oracle": places.ORACLE_WORDS,
        "assign": keywords._ASSIGN_WORDS, "scheme": keywords._SCHEME_WORDS, "login": prose._LOGIN_WORDS,
        "netrc": structure._NETRC_WORDS, "auth": keywords._AUTH_WORDS, "flag": keywords._FLAG_WORDS, "command": keywords.COMMAND_WORDS,
    })


def _starts(hits: list[anchors.Hit]) -> list[int]:
    return [start for start, _, _ in hits]


# How many times base64 is decoded and scanned again inside itself.
_DEPTH = 2


def _spans(text: str, depth: int = 0) -> list[tuple[int, int, tuple[bool, int], str]]:
    """Every detector's spans as (start, end, rank, kind), in the detectors' order (`depth`:
    how many base64 wrappings deep `text` was found)."""
    low = text.lower()
    if len(low) != len(text):  # a few characters grow when lower-cased (`İ`): keep offsets
        low = text.translate(_ASCII_LOWER)
    runs = token_runs(text)
    words = _anchors().find(low)
    found: list[tuple[int, int, tuple[bool, int], str]] = []
    add = found.append
    for rank, spans in (
        (0, structure.find_keys(text, low)),
        (1, structure.find_wrapped_jwts(text) if "eyJ" in text else ()),
        (1, formats.find_formats(text, low, runs)),
        (2, structure.find_url_credentials(text) if "://" in text else ()),
        (2, urls.find_url_secrets(text) if "://" in text else ()),
        (2, structure.find_credential_files(text, low, _starts(words["netrc"]))),
        (2, keywords.find_headers(text, low, _starts(words["scheme"]))),
        (2, keywords.find_commands(text, low, _starts(words["flag"]), words["command"])),
        (2, keywords.find_cookies(text, low)),
        (2, keywords.find_auth_arguments(text, low, _starts(words["auth"]))),
        (3, keywords.find_assignments(text, low, _starts(words["assign"]))),
        (3, places.find_places(text, low, words)),
        (3, prose.find_sentences(text, low, words["prose"])),
        (3, prose.find_logins(text, low, _starts(words["login"]))),
        (4, entropy.find_tokens(text, runs)),
        (2, encoded.find_encoded(text, runs, lambda inner: _kinds(inner, depth + 1)) if depth < _DEPTH else ()),
    ):
        for s, e, kind in spans:
            if e > s:
                add((s, e, (kind in _GENERIC, rank), kind))
    return found


def _kinds(text: str, depth: int) -> list[str]:
    """The kinds of secret in a text decoded from base64 `depth` wrappings deep."""
    return [kind for _, _, _, kind in _spans(text, depth)]


def find_spans(text: str) -> list[Span]:
    """Return the merged (start, end, kind) spans of every secret in `text`, in order."""
    found = _spans(text)
    if not found:
        return []
    # A span touching an earlier redaction marker is a detector reading the marker itself
    # (`https://[REDACTED:x]@host` has a `user:password` shape): skip it, so redact() is
    # idempotent.
    if MARKER in text:
        markers = [m.span() for m in _MARKER.finditer(text)]
        found = [f for f in found if not any(f[0] < me and f[1] > ms for ms, me in markers)]
    found.sort(key=lambda x: (x[0], x[2], -x[1]))
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


# Short texts come back again and again (a title, a directory, a tool's "Edit applied
# successfully."): their answers are kept, a pure function's, for the most recent of them.
_SHORT = 256


def redact(text: str) -> str:
    """Return `text` with every secret replaced by `[REDACTED:kind]`."""
    if not text:
        return text
    if len(text) <= _SHORT:
        return _redact_short(text)
    return _redact(text)


def _redact(text: str) -> str:
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


_redact_short = functools.lru_cache(maxsize=2048)(_redact)


def find_secrets(text: str) -> list[str]:
    """Return the kinds of secret found in `text` (empty when clean), in order of appearance."""
    kinds: list[str] = []
    for _, _, kind in find_spans(text) if text else ():
        if kind not in kinds:
            kinds.append(kind)
    return kinds
