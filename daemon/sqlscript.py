"""Split an SQL script into statements, keeping trigger bodies (`BEGIN … END;`) whole."""

from __future__ import annotations

import sqlite3


def split_sql(script: str) -> list[str]:
    """Return the statements of `script` in order; comment lines between statements are dropped.

    A plain split on `;` would cut a trigger at the first statement of its body;
    sqlite3.complete_statement knows where a statement really ends.
    """
    statements: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        if line.strip().startswith("--") and not current:
            continue
        current.append(line)
        text = "\n".join(current)
        if text.rstrip().endswith(";") and sqlite3.complete_statement(text):
            statements.append(text)
            current = []
    if "\n".join(current).strip():
        statements.append("\n".join(current))  # a last statement without its `;`
    return statements
