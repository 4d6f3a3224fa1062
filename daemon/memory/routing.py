"""The project's scenario routing in a session's block: which ROOT.md rows come first.

Pure: rows in, lines out. A row is (scenario, path, id) as `context.routing_rows` reads
them; scenarios that share a content word with the first prompt are listed first, the rest
after them in order, within a character budget.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from daemon.memory import relevance
from daemon.memory.clip import cut


def routing_words(rows: Sequence[tuple[str, str, str]]) -> dict[str, tuple[int, ...]]:
    """Token → the routing rows whose scenario holds it (built once with the stable part)."""
    from daemon.memory import tokenize

    found: dict[str, list[int]] = {}
    for number, (scenario, _, _) in enumerate(rows):
        for token in dict.fromkeys(tokenize.tokens(scenario)):
            found.setdefault(token, []).append(number)
    return {token: tuple(numbers) for token, numbers in found.items()}


def render_routing(rows: Sequence[tuple[str, str, str]], prompt: str, budget: int, words: Mapping[str, tuple[int, ...]] | None = None) -> str:
    """The routing lines within `budget` characters: scenarios that share a content word
    with the prompt first (`routing_first`), then the rest in order, and how many did not fit."""
    return routing_lines(rows, routing_first(rows, prompt, words), budget)


def routing_first(rows: Sequence[tuple[str, str, str]], prompt: str, words: Mapping[str, tuple[int, ...]] | None = None) -> tuple[int, ...]:
    """The rows whose scenario shares a content word with the prompt, in order. `words`:
    `routing_words(rows)` when the caller keeps it (a lookup per prompt word, not a
    tokenizing pass over every row)."""
    terms = set(relevance.content_terms(prompt)) if prompt and rows else set()
    where = (routing_words(rows) if words is None else words) if terms else {}
    return tuple(sorted({number for term in terms for number in where.get(term, ())}))


def routing_lines(rows: Sequence[tuple[str, str, str]], first: tuple[int, ...], budget: int) -> str:
    chosen = set(first)
    ordered = itertools.chain((rows[n] for n in first), (row for n, row in enumerate(rows) if n not in chosen))
    lines: list[str] = []
    used = 0
    for number, (scenario, path, mid) in enumerate(ordered):
        line = f"- {cut(scenario, 120)} → {path} (id {mid})"
        rest = len(rows) - number - 1
        reserve = 60 if rest else 0
        if used + len(line) + 1 + reserve > budget:
            lines.append(f"… {len(rows) - number} more scenarios: ROOT.md of the project tree")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
