"""memoryd's word tables, kept as data: one folder per language, one table per file.

Layout: ``daemon/lexicon/<lang>/<table>.tsv`` (``en``, ``zh``, ``ja``, ``ko``, ``de``…;
``all`` for a table that is no one language's). UTF-8; a line starting with ``#`` is a
comment, a blank line is skipped; the columns are separated by tabs, the first one the
word or phrase. Cells are read in Unicode NFKC (full-width letters are the ASCII ones),
so a native speaker reviews a data diff, not code.

The API, on purpose small:

- `rows(lang, table)`: a table's rows (tuples of cells), in file order;
- `words(lang, table)`: the first column as a set, casefolded;
- `languages(table)`: the languages that have a table of that name;
- `Matcher(phrases)`: every occurrence of a table's phrases in a text, in one pass
  (Aho-Corasick, pyahocorasick), with a word-boundary rule for Latin scripts: a phrase
  that starts (ends) with a letter or digit of an alphabet (Latin, Greek, Cyrillic…) is
  found only where no letter or digit of one is before (after) it. Chinese and Japanese
  have no spaces: a phrase is found anywhere. Korean spaces its words but glues its
  particles on: a Hangul phrase is found where a word starts, whatever follows;
- `digest()`: a hash of every table's path and bytes, for what must change when the
  data does (the extractive distiller's version, the word-table cache key).

A missing table reads as empty: a language without a table has no words of it. A
malformed file (not UTF-8) raises `LexiconError` naming it.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

FOLDER = Path(__file__).resolve().parent
SUFFIX = ".tsv"


class LexiconError(ValueError):
    """A table that cannot be read: its path and why."""


def _path(lang: str, table: str) -> Path:
    if not (lang.replace("_", "").isalnum() and table.replace("_", "").isalnum()):
        raise LexiconError(f"not a table name: {lang}/{table} (letters, digits and _ only)")
    return FOLDER / lang / f"{table}{SUFFIX}"


@lru_cache(maxsize=256)
def rows(lang: str, table: str) -> tuple[tuple[str, ...], ...]:
    """The rows of `<lang>/<table>.tsv`: each a tuple of its NFKC cells (trailing empty
    cells dropped), comments and blank lines skipped; () when there is no such table."""
    path = _path(lang, table)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except UnicodeDecodeError as error:
        raise LexiconError(f"{path}: not UTF-8 ({error})") from error
    out = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [unicodedata.normalize("NFKC", c).strip() for c in line.split("\t")]
        while cells and not cells[-1]:
            cells.pop()
        if cells and cells[0]:
            out.append(tuple(cells))
    return tuple(out)


@lru_cache(maxsize=256)
def words(lang: str, table: str) -> frozenset[str]:
    """The first column of `<lang>/<table>.tsv`, casefolded."""
    return frozenset(row[0].casefold() for row in rows(lang, table))


def languages(table: str) -> tuple[str, ...]:
    """The languages (folders) that hold a table of this name, sorted."""
    return tuple(sorted(p.parent.name for p in FOLDER.glob(f"*/{table}{SUFFIX}")))


def every(table: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(language, row) for each row of this table in every language that has it."""
    for lang in languages(table):
        for row in rows(lang, table):
            yield lang, row


@lru_cache(maxsize=1)
def digest() -> str:
    """A hash of every table (its path under the lexicon and its bytes): changes when any
    table does, not when the files are merely touched."""
    sha = hashlib.sha256()
    for path in sorted(FOLDER.glob(f"*/*{SUFFIX}")):
        sha.update(path.relative_to(FOLDER).as_posix().encode("utf-8") + b"\0")
        sha.update(path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


def _alphabetic(char: str) -> bool:
    """True for a letter or digit of an alphabet (Latin, Greek, Cyrillic…): one next to a
    phrase makes it part of a longer word. CJK ideographs, kana and Hangul are not."""
    if not (char.isalnum() or char == "_"):
        return False
    return char.isascii() or not unicodedata.name(char, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL"))


def _hangul(char: str) -> bool:
    return "\uac00" <= char <= "\ud7af"


class Found(NamedTuple):
    """One occurrence of a phrase: where in the (normalized) text, and its value."""

    start: int
    end: int
    phrase: str
    value: Any


class Matcher:
    """Every occurrence of some phrases in a text, in one Aho-Corasick pass.

    `phrases`: phrase → value (any object), or an iterable of phrases (the value is the
    phrase). Text and phrases are compared in NFKC, casefolded unless `casefold=False`
    (then the text must be normalized as the phrases are). The word-boundary rule (see
    the module) applies to each end of a phrase that is a letter or digit of a spaced
    script; `boundary=False` turns it off (a stem found inside longer words)."""

    def __init__(self, phrases: Mapping[str, Any] | Iterable[str], *, casefold: bool = True, boundary: bool = True) -> None:
        import ahocorasick  # pyahocorasick, in C

        self.casefold = casefold
        self.boundary = boundary
        items = phrases.items() if isinstance(phrases, Mapping) else ((p, p) for p in phrases)
        self._automaton = ahocorasick.Automaton()
        self._size = 0
        for phrase, value in items:
            key = self._normal(phrase)
            if key:
                self._automaton.add_word(key, (key, value))
                self._size += 1
        if self._size:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return self._size

    def _normal(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text)
        return text.casefold() if self.casefold else text

    def find(self, text: str) -> list[Found]:
        """Every occurrence, in order of where it ends (overlapping ones included)."""
        if not self._size or not text:
            return []
        text = self._normal(text)
        out = []
        for end, (phrase, value) in self._automaton.iter(text):
            start = end - len(phrase) + 1
            if self.boundary and not self._bounded(text, start, end):
                continue
            out.append(Found(start, end + 1, phrase, value))
        return out

    def _bounded(self, text: str, start: int, end: int) -> bool:
        before = text[start - 1] if start > 0 else " "
        if (_alphabetic(text[start]) and _alphabetic(before)) or (_hangul(text[start]) and _hangul(before)):
            return False
        return not (_alphabetic(text[end]) and end + 1 < len(text) and _alphabetic(text[end + 1]))

    def found(self, text: str) -> bool:
        """True when the text holds any of the phrases."""
        return bool(self.find(text))

    def values(self, text: str) -> list[Any]:
        """The values of the phrases the text holds, each once, in order of first end."""
        return list(dict.fromkeys(f.value for f in self.find(text)))
