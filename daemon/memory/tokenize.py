"""The token stream memoryd feeds to (and queries) the search index.

FTS5's own tokenizers fail on CJK: unicode61 makes a whole sentence one token, trigram
needs three characters, so a two-character Chinese word is never found. memoryd
tokenizes in Python instead and hands FTS5 space-separated tokens:

- latin words and identifiers, lower-cased; compounds such as `snake_case`,
  `kebab-case`, `daemon.memory.tree` and `src/app/main.py` are kept whole *and* split
  into their parts (camelCase too), so both `snake_case` and `snake` find them;
- CJK runs (Han, kana, Hangul) as overlapping character bigrams, or the single
  character for a one-character run.

Documents and queries go through the same function, so a query matches exactly when
its tokens occur in the document. Pure functions; no I/O.
"""

from __future__ import annotations

import re
import unicodedata

from daemon.memory.script_re import NonAscii

# Bump when the token stream changes: the index rebuilds itself on a mismatch.
# 2: a plural acronym (PDFs, APIs, IDs) is one word, not PD + Fs.
TOKENIZER_VERSION = 2

# Han (with extensions and compatibility forms), kana, Hangul syllables and jamo, and
# the iteration marks (U+3005-U+3007). Halfwidth kana need no entry: NFKC widens them first.
_CJK_CHARS = (
    "\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\U00020000-\U0003134f"
)
_CJK_RUN = NonAscii(f"[{_CJK_CHARS}]+")
# A compound: word characters joined by the connectors `.`, `-` and `/` (`_` is a word
# character already). Connectors at either end are not part of it ("end." -> "end").
_COMPOUND = re.compile(r"\w+(?:[./-]+\w+)*")
_SEPARATORS = re.compile(r"[._/-]+")
# camelCase and digit boundaries in ASCII words: HTTPServer2 -> HTTP, Server, 2; a plural
# acronym stays one word (PDFs, APIs). Words in other scripts stay whole (café is one
# word, not "caf" + "é").
_CAMEL = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Longer "words" are hashes, base64 blobs or minified code: index their parts only.
MAX_WHOLE_TOKEN = 80
# A query longer than this many tokens is cut: FTS5 cost grows with every term.
MAX_QUERY_TOKENS = 64


def _normalize(text: str) -> str:
    # NFKC folds full-width latin and half-width kana onto their usual forms.
    return unicodedata.normalize("NFKC", text)


# The tokens of each compound met lately: words repeat (most of a text is its commonest
# few thousand words), so indexing a backfill's notes splits each word once, not per use.
# Cleared whole when full; a dict's get and set are atomic, so threads may share it.
_COMPOUNDS: dict[str, tuple[str, ...]] = {}
COMPOUNDS_KEPT = 50_000


def _compound_tokens(compounds: list[str], out: list[str]) -> None:
    cache = _COMPOUNDS
    for compound in compounds:
        found = cache.get(compound)
        if found is None:
            found = _split_compound(compound)
            if len(cache) >= COMPOUNDS_KEPT:
                cache.clear()
            cache[compound] = found
        out += found


def _split_compound(compound: str) -> tuple[str, ...]:
    out: list[str] = []
    parts = [
        piece.casefold()
        for segment in _SEPARATORS.split(compound)
        for piece in (_CAMEL.findall(segment) if segment.isascii() else (segment,))
    ]
    whole = compound.casefold()
    if len(parts) != 1 or parts[0] != whole:
        if len(whole) <= MAX_WHOLE_TOKEN:
            out.append(whole)
        if "/" in whole:
            # File names inside paths are searched on their own: `main.py` in `src/main.py`.
            out.extend(s for s in whole.split("/") if s and _SEPARATORS.search(s) and s != whole)
    out.extend(parts)
    return tuple(out)


def _cjk_tokens(run: str, out: list[str]) -> None:
    if len(run) == 1:
        out.append(run)
        return
    out.extend(run[i : i + 2] for i in range(len(run) - 1))


def _below_cjk(text: str) -> bool:
    """True when every character is Latin-1 (a quick test in C), so none is CJK."""
    if text.isascii():
        return True
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def tokens(text: str) -> list[str]:
    """Return the search tokens of `text`, in order, duplicates kept (they weigh in BM25)."""
    out: list[str] = []
    if not text.isascii():  # NFKC leaves ASCII as it is
        text = _normalize(text)
    if _below_cjk(text):  # most text: no CJK run to look for
        _compound_tokens(_COMPOUND.findall(text), out)
        return out
    position = 0
    for match in _CJK_RUN.finditer(text):
        _compound_tokens(_COMPOUND.findall(text, position, match.start()), out)
        _cjk_tokens(match.group(), out)
        position = match.end()
    _compound_tokens(_COMPOUND.findall(text, position), out)
    return out


def token_stream(text: str) -> str:
    """Return `text` as the space-joined token stream stored in the index."""
    return " ".join(tokens(text))


def query_tokens(query: str) -> list[str]:
    """Return the distinct tokens of a query, in order, at most MAX_QUERY_TOKENS."""
    seen: dict[str, None] = {}
    for token in tokens(query):
        seen.setdefault(token, None)
        if len(seen) >= MAX_QUERY_TOKENS:
            break
    return list(seen)


def quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def strict_match(terms: list[str]) -> str:
    """Return an FTS5 expression matching documents that contain every term."""
    return " ".join(quote(t) for t in terms)


def prefix_match(terms: list[str]) -> str:
    """Return an FTS5 expression matching documents with any term as a prefix."""
    return " OR ".join(quote(t) + "*" for t in terms)
