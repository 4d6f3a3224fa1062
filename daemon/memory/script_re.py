"""Regexes of CJK characters, compiled the first time they look at text that is not ASCII.

A character class spanning thousands of code points costs 2-6 ms to compile here (sre
fills a 65,536-entry map range by range): the seven memoryd has cost every short command
(`memoryd context --json`, `memoryd recall`) ~20 ms at import, for text that is mostly
ASCII and can never match them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


class NonAscii:
    """A pattern that matches no ASCII character anywhere (a class of CJK characters, runs
    of them): on ASCII text it answers without being compiled. The methods of `re.Pattern`
    that memoryd uses, same arguments."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.source)
        return compiled

    def match(self, text: str) -> re.Match[str] | None:
        return None if text.isascii() else self.pattern.match(text)

    def search(self, text: str) -> re.Match[str] | None:
        return None if text.isascii() else self.pattern.search(text)

    def findall(self, text: str) -> list[str]:
        return [] if text.isascii() else self.pattern.findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return iter(()) if text.isascii() else self.pattern.finditer(text)
