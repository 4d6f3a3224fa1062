"""The words the name-driven detectors start from (a secret's name in prose, a call that
takes a password, a name quoted before its value), found in one pass over the text.

Searching each word with `str.find` costs a pass per word; one Aho-Corasick automaton
(ahocorasick_rs, compiled to a DFA) finds them all, overlapping ones included, in one pass
that costs about as much as a single `str.find`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Hit = tuple[int, int, str]  # (start, end, word) in the lower-cased text


class Anchors:
    """Every occurrence of each group's words (lower-cased) in a lower-cased text."""

    def __init__(self, groups: Mapping[str, Iterable[str]]) -> None:
        import ahocorasick_rs

        self.groups = tuple(groups)
        by_word: dict[str, list[str]] = {}
        for group, words in groups.items():
            for word in words:
                if word:
                    by_word.setdefault(word.lower(), []).append(group)
        self._words = list(by_word)
        self._groups = [tuple(by_word[word]) for word in self._words]
        self._automaton = ahocorasick_rs.AhoCorasick(self._words, implementation=ahocorasick_rs.Implementation.DFA)

    def find(self, low: str) -> dict[str, list[Hit]]:
        """group → its words' (start, end, word) in `low` (character offsets), by start."""
        found: dict[str, list[Hit]] = {group: [] for group in self.groups}
        words, groups = self._words, self._groups
        matches = self._automaton.find_matches_as_indexes(low, overlapping=True)
        if not matches:
            return found
        matches.sort(key=lambda match: match[1])  # (by start: what every detector reads them in)
        for index, start, end in matches:
            hit = (start, end, words[index])
            for group in groups[index]:
                found[group].append(hit)
        return found
