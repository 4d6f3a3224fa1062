"""The distiller's regex tables, kept as lexicon data: one regex alternative a row in
`daemon/lexicon/all/<table>.tsv`, in order (the first alternative that matches wins a
substitution), a second column naming the language each is written in."""

from __future__ import annotations

from daemon import lexicon


def pattern(table: str, flags: str = "") -> str:
    """The table's alternatives joined into one pattern, after `flags` (an inline group such as "(?i)")."""
    return flags + "|".join(row[0] for row in lexicon.rows("all", table))
