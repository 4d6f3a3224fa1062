"""Pure: a quick literal test in front of a costly regex, with the same answers.

Python's `re` tries every alternative of a pattern at every position of a text, and
under IGNORECASE it cannot skip ahead on a first character, so a cue table of a hundred
alternatives costs about a microsecond a character. Every match of such a pattern holds
some word the pattern spells out (`still`, `didn't`, `没用`, `E` and three digits).
`Prefiltered` reads those words from the pattern's own parse tree, finds which of them a
text holds in one Aho-Corasick pass (case folded as IGNORECASE folds), and runs only the
alternatives of the pattern that can match, so its answers are the pattern's own. Words
are cut at whitespace: a text still holds them after a caller collapses its spaces or
trims its lines, so one test can speak for every line of a text.
"""

from __future__ import annotations

import re
import re._constants as sre  # the parse tree is where a pattern's literals are
import re._parser as sre_parse
from collections.abc import Callable, Iterable

import ahocorasick

# IGNORECASE matches these to an ASCII letter that their str.lower() is not (İ lowers to
# two characters). Every other character lowers to what IGNORECASE matches it with.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_DIGIT = r"\d"  # an atom of a word: any digit (digits have no case)
Word = tuple[str, ...]  # atoms: folded characters, or _DIGIT


def fold(text: str) -> str:
    """`text` lower-cased so that an IGNORECASE literal match is a substring match."""
    if not text.isascii() and ("\u0130" in text or "\u0131" in text or "\u017f" in text):
        text = text.translate(_FOLD)  # a translation by dict is slow: only for a text that needs it
    return text.lower()


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


def necessary_words(pattern: re.Pattern[str]) -> frozenset[Word]:
    """Folded words, one of which every match of `pattern` holds; empty when no such set is known."""
    return _words_of(pattern.pattern, pattern.flags)


def _words_of(source: str, flags: int) -> frozenset[Word]:
    # The parse alone (no compile): a worker process reads a few thousand alternatives at start-up.
    return _best(_options(list(sre_parse.parse(source, flags)))) or frozenset()


def _key(word: Word) -> str | Word:
    """A literal word is found as its text; a word with a digit in it, as itself."""
    return word if _DIGIT in word else "".join(word)


class _Finder:
    """Whether a folded text holds any of some words: the literal ones in one Aho-Corasick pass, the others by a regex each."""

    def __init__(self, words: Iterable[Word]) -> None:
        self._automaton = None
        literal = {"".join(w) for w in words if _DIGIT not in w}
        if literal:
            self._automaton = ahocorasick.Automaton()
            for text in literal:
                self._automaton.add_word(text, text)
            self._automaton.make_automaton()
        self._patterned = [(w, re.compile("".join(a if a == _DIGIT else re.escape(a) for a in w)).search)
                           for w in words if _DIGIT in w]  # fmt: skip

    def any(self, folded: str) -> bool:
        if self._automaton is not None and next(self._automaton.iter(folded), None) is not None:
            return True
        return any(search(folded) for _, search in self._patterned)


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


class _Split:
    """A pattern's top-level alternatives, grouped by the words that let them match: an
    alternative holds one of its own words, so only those of the words a text holds can match it.

    A group's regex is compiled the first time a text holds one of its words: most groups
    of a cue table are never tried in a process, and compiling them all costs a worker's
    start-up a tenth of a second."""

    def __init__(self, pieces: list[str], flags: int, owned: dict[str | Word, tuple[int, ...]]) -> None:
        self._pieces, self._flags = pieces, flags
        # Groups are numbered: a text's words name them by number, cheap to look up and to remember as tried.
        self._groups = list(dict.fromkeys(owned.values()))
        number = {group: n for n, group in enumerate(self._groups)}
        self._searches: list[Callable[[str], re.Match[str] | None] | None] = [None] * len(self._groups)
        self._automaton = None  # literal word → the number of the group it lets match
        literal = {word: number[group] for word, group in owned.items() if isinstance(word, str)}
        if literal:
            self._automaton = ahocorasick.Automaton()
            for word, n in literal.items():
                self._automaton.add_word(word, n)
            self._automaton.make_automaton()
        self._patterned = [(re.compile("".join(a if a == _DIGIT else re.escape(a) for a in word)).search, number[group])
                           for word, group in owned.items() if not isinstance(word, str)]  # fmt: skip

    @classmethod
    def of(cls, pattern: re.Pattern[str]) -> _Split | None:
        """None for a pattern that is one alternative, or has one without a word: the whole pattern is tried."""
        pieces = alternatives(_GLOBAL_FLAGS.sub("", pattern.pattern))
        words_of = [_words_of(piece, pattern.flags) for piece in pieces]
        if len(pieces) < 2 or not all(words_of):
            return None
        owned: dict[str | Word, list[int]] = {}
        for index, words in enumerate(words_of):
            for word in words:
                owned.setdefault(_key(word), []).append(index)
        return cls(pieces, pattern.flags, {word: tuple(group) for word, group in owned.items()})

    def _matches(self, n: int, text: str) -> bool:
        search = self._searches[n]
        if search is None:
            joined = "|".join(f"(?:{self._pieces[i]})" for i in self._groups[n])
            search = self._searches[n] = re.compile(joined, self._flags).search
        return search(text) is not None

    def found(self, text: str) -> bool:
        folded = fold(text)
        tried: set[int] = set()
        if self._automaton is not None:
            # Each occurrence of a word names its group: the first group that matches answers.
            for _, n in self._automaton.iter(folded):
                if n not in tried:
                    tried.add(n)
                    if self._matches(n, text):
                        return True
        for search, n in self._patterned:
            if n not in tried and search(folded):
                tried.add(n)
                if self._matches(n, text):
                    return True
        return False


class Prefiltered:
    """`pattern` asked only of texts that hold one of its necessary words.

    `search`, `match` and `sub` give the pattern's own answers. `found` answers whether it
    matches at all, trying only the top-level alternatives whose words the text holds.
    """

    __slots__ = ("pattern", "words", "_finder", "_split")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.words = necessary_words(pattern)
        self._finder = _Finder(self.words) if self.words else None
        self._split = _Split.of(pattern) if self.words else None

    def may_match(self, text: str) -> bool:
        """False only when `pattern` matches nowhere in `text` (nor in its lines, nor with its spaces collapsed)."""
        return self._finder is None or self._finder.any(fold(text))

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.may_match(text) else None

    def match(self, text: str) -> re.Match[str] | None:
        return self.pattern.match(text) if self.may_match(text) else None

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.pattern.sub(repl, text) if self.may_match(text) else text

    def found(self, text: str) -> bool:
        """Whether `pattern` matches anywhere in `text` (`bool(pattern.search(text))`)."""
        return self.search(text) is not None if self._split is None else self._split.found(text)


class Pruned:
    """`pattern.sub(repl, text)` run with only the top-level alternatives that can match in `text`.

    An alternative whose every necessary word is missing from the text matches nowhere in
    it, so leaving it out changes no match: at each position the first alternative that
    matches is the same. A table of words followed by a catch-all (`\\bdone\\b|…|[\\W_]`)
    then costs what the few words the text holds cost, not what the whole table does.
    `repl` names no group (the pruned pattern numbers its groups otherwise)."""

    _KEPT = 256  # pruned patterns compiled, at most (one per set of alternatives a text keeps)

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._pieces = alternatives(_GLOBAL_FLAGS.sub("", pattern.pattern))
        words_of = [_words_of(piece, pattern.flags) for piece in self._pieces]
        self._always = frozenset(i for i, words in enumerate(words_of) if not words)
        owned: dict[str | Word, list[int]] = {}
        for index, words in enumerate(words_of):
            for word in words:
                owned.setdefault(_key(word), []).append(index)
        self._automaton = ahocorasick.Automaton()
        for word, pieces in owned.items():
            if isinstance(word, str):
                self._automaton.add_word(word, tuple(pieces))
        if len(self._automaton):
            self._automaton.make_automaton()
        self._patterned = [(re.compile("".join(a if a == _DIGIT else re.escape(a) for a in word)).search, tuple(pieces))
                           for word, pieces in owned.items() if not isinstance(word, str)]  # fmt: skip
        self._compiled: dict[tuple[int, ...], re.Pattern[str]] = {}

    def sub(self, repl: str, text: str) -> str:
        folded = fold(text)
        kept = set(self._always)
        if len(self._automaton):
            for _, pieces in self._automaton.iter(folded):
                kept.update(pieces)
        for search, pieces in self._patterned:
            if search(folded):
                kept.update(pieces)
        if not kept:
            return text
        if len(kept) == len(self._pieces):
            return self.pattern.sub(repl, text)
        key = tuple(sorted(kept))
        pruned = self._compiled.get(key)
        if pruned is None:
            if len(self._compiled) >= self._KEPT:
                self._compiled.clear()
            joined = "|".join(f"(?:{self._pieces[i]})" for i in key)
            pruned = self._compiled[key] = re.compile(joined, self.pattern.flags)
        return pruned.sub(repl, text)


def any_word(*patterns: Prefiltered) -> Callable[[str], bool]:
    """Whether a folded text holds a necessary word of any of `patterns`: if not, none of them matches."""
    if not all(p.words for p in patterns):
        return lambda folded: True
    return _Finder({w for p in patterns for w in p.words}).any


def prefiltered(pattern: str, flags: int = 0) -> Prefiltered:
    """`re.compile(pattern, flags)` behind its literal test."""
    return Prefiltered(re.compile(pattern, flags))
