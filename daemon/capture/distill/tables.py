"""The distiller's regex tables, kept as lexicon data, and asked only where they can match.

A table is `daemon/lexicon/all/<table>.tsv`: one regex alternative a row, in order (the
first alternative that matches wins a substitution), the language it is written in, and
the words one of which every match of the row holds (folded, space-separated; `*` when
none is known). Python's `re` tries every alternative at every position of a text, and
a table of a hundred alternatives costs about a microsecond a character; most texts hold
the words of none. So a text is looked at once for every table's words (the lexicon's
Aho-Corasick automaton, folded as IGNORECASE folds), and only the rows whose words it holds are joined
into the pattern that runs: the answers are the whole table's, at a fraction of the cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import ahocorasick

from daemon import lexicon

_ALWAYS = "*"
_KEPT = 256  # joined patterns compiled per table, at most (one per set of rows a text can match)


class RegexTable:
    """One table as a pattern: `found`, `search`, `match` and `sub` answer as the whole table's regex would."""

    def __init__(self, table: str, flags: str = "") -> None:
        rows = lexicon.rows("all", table)
        if not rows:
            raise lexicon.LexiconError(f"daemon/lexicon/all/{table}.tsv: no rows")
        self.table, self.flags = table, flags
        self._pieces = [row[0] for row in rows]
        self._always = tuple(n for n, row in enumerate(rows) if len(row) < 3 or row[2] == _ALWAYS)
        owners: dict[str, list[int]] = {}
        for n, row in enumerate(rows):
            if n not in self._always:
                for word in row[2].split():
                    owners.setdefault(word, []).append(n)
        self._words = ahocorasick.Automaton()  # folded word → the rows it lets match
        for word, owned in owners.items():
            self._words.add_word(word, frozenset(owned))
        if owners:
            self._words.make_automaton()
        self._any = bool(owners)
        self._compiled: dict[tuple[int, ...], re.Pattern[str] | None] = {}
        self._rows: list[Callable[[str], re.Match[str] | None] | None] = [None] * len(rows)

    def whole(self) -> re.Pattern[str]:
        """The whole table as one regex: what its answers must equal (compiled on demand, as each row is)."""
        return re.compile(self.flags + "|".join(self._pieces))

    def rows_for(self, text: str) -> tuple[int, ...]:
        """The rows that can match somewhere in `text` (one automaton pass), in table order."""
        found: set[int] = set(self._always)
        if self._any:
            for _, rows in self._words.iter(fold(text)):
                found |= rows
        return tuple(sorted(found))

    def may_match(self, text: str) -> bool:
        return bool(self.rows_for(text))

    def _pattern(self, text: str) -> re.Pattern[str] | None:
        rows = self.rows_for(text)
        if rows not in self._compiled:
            if len(self._compiled) >= _KEPT:
                self._compiled.clear()
            self._compiled[rows] = re.compile(self.flags + "|".join(self._pieces[n] for n in rows)) if rows else None
        return self._compiled[rows]

    def search(self, text: str) -> re.Match[str] | None:
        pattern = self._pattern(text)
        return pattern.search(text) if pattern is not None else None

    def match(self, text: str) -> re.Match[str] | None:
        pattern = self._pattern(text)
        return pattern.match(text) if pattern is not None else None

    def found(self, text: str) -> bool:
        """Whether any row matches: its rows tried one by one, each compiled once (a text's set of rows
        varies more than the rows do)."""
        for n in self.rows_for(text):
            search = self._rows[n]
            if search is None:
                search = self._rows[n] = re.compile(self.flags + self._pieces[n]).search
            if search(text) is not None:
                return True
        return False

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        pattern = self._pattern(text)
        return pattern.sub(repl, text) if pattern is not None else text


# IGNORECASE matches these to an ASCII letter that their str.lower() is not (İ lowers to two characters);
# every other character lowers to what IGNORECASE matches it with. The words are folded so.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def fold(text: str) -> str:
    """`text` lower-cased so that an IGNORECASE literal match is a substring match."""
    if not text.isascii() and ("\u0130" in text or "\u0131" in text or "\u017f" in text):
        text = text.translate(_FOLD)
    return text.lower()
