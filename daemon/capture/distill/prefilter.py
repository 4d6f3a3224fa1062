"""Pure: a quick literal test in front of a costly regex, with the same answers.

Python's `re` tries every alternative of a pattern at every position of a text, and
under IGNORECASE it cannot skip ahead on a first character, so a cue table of a hundred
alternatives costs about a microsecond a character. Every match of such a pattern holds
some word the pattern spells out (`still`, `didn't`, `没用`, `E` and three digits).
`Prefiltered` reads those words from the pattern's own parse tree and runs the pattern
only on a text that holds one of them, case folded as IGNORECASE folds, so its answers
are the pattern's own. Words are cut at whitespace: a text still holds them after a
caller collapses its spaces or trims its lines, so one test can speak for every line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
import re._constants as sre  # the parse tree is where a pattern's literals are
import re._parser as sre_parse

# IGNORECASE matches these to an ASCII letter that their str.lower() is not (İ lowers to
# two characters). Every other character lowers to what IGNORECASE matches it with.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_DIGIT = r"\d"  # an atom of a word: any digit (digits have no case)
Word = tuple[str, ...]  # atoms: folded characters, or _DIGIT


def fold(text: str) -> str:
    """`text` lower-cased so that an IGNORECASE literal match is a substring match."""
    return (text if text.isascii() else text.translate(_FOLD)).lower()


def _atom(op: object, av: object) -> str | None:
    if op is sre.LITERAL:
        return chr(av)  # type: ignore[arg-type]
    return _DIGIT if op is sre.IN and av == [(sre.CATEGORY, sre.CATEGORY_DIGIT)] else None


def _best(options: list[frozenset[Word]]) -> frozenset[Word] | None:
    """The option of fewest, longest words: the one a text holds least often."""
    return max(options, key=lambda words: (min(map(len, words)), -len(words)), default=None)


def _options(items: list) -> list[frozenset[Word]]:
    """Sets of words, one of which every match of the parsed sequence `items` holds."""
    found: list[frozenset[Word]] = []
    run: list[str] = []

    def close() -> None:
        words, word = [], []
        for atom in [*run, " "]:
            if atom != _DIGIT and atom.isspace():
                words, word = [*words, tuple(word)] if word else words, []
            else:
                word.append(atom if atom == _DIGIT else fold(atom))
        if words:
            found.append(frozenset({max(words, key=len)}))
        run.clear()

    for op, av in items:
        if _atom(op, av) is not None:
            run.append(_atom(op, av))  # type: ignore[arg-type]
        elif op in _ZERO_WIDTH:
            continue  # takes no character: the literals around it stand side by side
        elif op in _REPEATS and av[0] >= 1 and len(av[2]) == 1 and _atom(*av[2][0]) is not None:
            run += [_atom(*av[2][0])] * av[0]  # type: ignore[list-item]
            if av[1] != av[0]:
                close()
        elif op is sre.BRANCH:
            close()
            choices = [_best(_options(list(alternative))) for alternative in av[1]]
            if all(choices):
                found.append(frozenset().union(*choices))  # type: ignore[arg-type]
        elif op is sre.SUBPATTERN or op is sre.ATOMIC_GROUP:
            close()
            found += _options(list(av[-1] if op is sre.SUBPATTERN else av))
        elif op in _REPEATS and av[0] >= 1:
            close()
            found += _options(list(av[2]))
        else:  # a class, a wildcard, an optional part: no word it must hold
            close()
    close()
    return found


def _holds(word: Word, other: Word) -> bool:
    return any(word[i : i + len(other)] == other for i in range(len(word) - len(other) + 1))


def necessary_words(pattern: re.Pattern[str]) -> list[str]:
    """Regexes of folded words, one of which every match of `pattern` holds; empty when none is known."""
    words = _best(_options(list(sre_parse.parse(pattern.pattern, pattern.flags)))) or frozenset()
    kept = [w for w in words if not any(o != w and _holds(w, o) for o in words)]  # a word holding another is implied
    return ["".join(a if a == _DIGIT else re.escape(a) for a in w) for w in sorted(kept, key=lambda w: (-len(w), w))]


def alternatives(source: str) -> list[str]:
    """The top-level alternatives of a regex source (split at `|` outside groups, classes and escapes)."""
    pieces, depth, start, i = [], 0, 0, 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 1
        elif char == "[":  # a class: `]` first in it, or escaped, does not close it
            i += 2 if source[i + 1 : i + 2] == "^" else 1
            i += 1 if source[i : i + 1] == "]" else 0
            while i < len(source) and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            pieces.append(source[start:i])
            start = i + 1
        i += 1
    return [*pieces, source[start:]]


_GLOBAL_FLAGS = re.compile(r"^\(\?[aiLmsux]+\)")


class Prefiltered:
    """`pattern` asked only of texts that hold one of its necessary words.

    `search`, `match` and `sub` give the pattern's own answers. `found` answers whether it
    matches at all, trying only the top-level alternatives whose words the text holds.
    """

    __slots__ = ("pattern", "words", "_gate", "_split")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.words = necessary_words(pattern)
        # One alternation of plain, case-sensitive words: `re` skips ahead on their first characters.
        self._gate = re.compile("|".join(self.words)).search if self.words else None
        self._split = _Split.of(pattern) if self.words else None

    def may_match(self, text: str) -> bool:
        """False only when `pattern` matches nowhere in `text` (nor in its lines, nor with its spaces collapsed)."""
        return self._gate is None or self._gate(fold(text)) is not None

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.may_match(text) else None

    def match(self, text: str) -> re.Match[str] | None:
        return self.pattern.match(text) if self.may_match(text) else None

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.pattern.sub(repl, text) if self.may_match(text) else text

    def found(self, text: str) -> bool:
        """Whether `pattern` matches anywhere in `text` (`bool(pattern.search(text))`)."""
        return self.search(text) is not None if self._split is None else self._split.found(text)


def _co_matching(a: list[str], b: list[str]) -> bool:
    """Whether two words (lists of atoms) can both start at one position: one's atoms agree with the other's."""
    return all(x == y or _DIGIT in (x, y) and (x + y).replace(_DIGIT, "").isdecimal() for x, y in zip(a, b))


class _Split:
    """A pattern's top-level alternatives, grouped by the words that let them match.

    An alternative holds one of its own words, so only the alternatives of the words a
    text holds can match it. The finder reports one word a position (the first of the
    alternation there); every other word that can start at the same position brings its
    alternatives along with it.
    """

    def __init__(self, words: list[str], owners: dict[str, re.Pattern[str]]) -> None:
        self._find = re.compile("|".join(words)).search
        # A hit names its word by its text; a word with a digit in it, by a match.
        self._by_text = {re.sub(r"\\(.)", r"\1", w): owners[w] for w in words if _DIGIT not in w}
        self._by_regex = [(re.compile(w).fullmatch, owners[w]) for w in words if _DIGIT in w]

    @classmethod
    def of(cls, pattern: re.Pattern[str]) -> _Split | None:
        """None for a pattern that is one alternative, or has one without a word: the whole pattern is tried."""
        pieces = alternatives(_GLOBAL_FLAGS.sub("", pattern.pattern))
        words_of = [necessary_words(re.compile(piece, pattern.flags)) for piece in pieces]
        if len(pieces) < 2 or not all(words_of):
            return None
        words = sorted({w for ws in words_of for w in ws}, key=lambda w: (-len(w), w))
        atoms = {w: re.findall(r"\\d|\\.|.", w, re.S) for w in words}
        owners = {w: tuple(i for i, ws in enumerate(words_of) if any(_co_matching(atoms[w], atoms[o]) for o in ws))
                  for w in words}
        compiled = {key: re.compile("|".join(f"(?:{pieces[i]})" for i in key), pattern.flags) for key in set(owners.values())}
        return cls(words, {w: compiled[owners[w]] for w in words})

    def found(self, text: str) -> bool:
        folded, at, tried = fold(text), 0, set()
        while (hit := self._find(folded, at)) is not None:
            word = hit.group()
            owner = self._by_text.get(word) or next(o for full, o in self._by_regex if full(word))
            if owner not in tried:
                tried.add(owner)
                if owner.search(text):
                    return True
            at = hit.start() + 1  # words may overlap: every position where one starts is looked at
        return False


def any_word(*patterns: Prefiltered) -> Callable[[str], object]:
    """A search of a folded text for a necessary word of any of `patterns`: without a hit, none of them matches."""
    if not all(p.words for p in patterns):
        return lambda folded: True
    return re.compile("|".join(w for p in patterns for w in p.words)).search


def prefiltered(pattern: str, flags: int = 0) -> Prefiltered:
    """`re.compile(pattern, flags)` behind its literal test."""
    return Prefiltered(re.compile(pattern, flags))
