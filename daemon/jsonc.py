"""Agents' JSON(C) settings files: read them, and edit one member or element in place.

`opencode.jsonc` may hold `//` and `/* */` comments and trailing commas. `loads` parses it
(comments and trailing commas dropped); `set_member` rewrites only the bytes of one
member (`"mcp": {"memoryd": …}`), so everything else, comments included, stays as the
user wrote it. `append_element` adds one element at the end of an array (Codex trusts a
hook by its place: the user's hooks keep theirs). `remove_first_member` and
`remove_last_element` undo what `set_member` (a new member goes first) and
`append_element` did byte for byte, so an uninstall gives back the very file the install
found. All are pure functions of the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any


class JsoncError(ValueError):
    """The text is not JSONC this module can edit; the message says where."""


@dataclass(frozen=True)
class Token:
    kind: str  # one of { } [ ] : , or "string" / "value"
    start: int
    end: int


_VALUE = re.compile(r"[^\s{}\[\]:,\"/]+")


def tokens(text: str) -> Iterator[Token]:
    """The tokens of `text`, comments and white space skipped."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            i = _end_of(text, "\n", i + 2)
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise JsoncError(f"unterminated /* comment at offset {i}")
            i = end + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise JsoncError(f"unterminated string at offset {i}")
            yield Token("string", i, j + 1)
            i = j + 1
        elif c in "{}[]:,":
            yield Token(c, i, i + 1)
            i += 1
        else:
            match = _VALUE.match(text, i)
            if not match:
                raise JsoncError(f"unexpected {c!r} at offset {i}")
            yield Token("value", i, match.end())
            i = match.end()


def _end_of(text: str, mark: str, start: int) -> int:
    end = text.find(mark, start)
    return len(text) if end < 0 else end


def loads(text: str) -> Any:
    """Parse JSONC: JSON with comments and trailing commas."""
    toks = list(tokens(text))
    parts = []
    for k, tok in enumerate(toks):
        if tok.kind == "," and k + 1 < len(toks) and toks[k + 1].kind in "}]":
            continue  # a trailing comma
        parts.append(text[tok.start : tok.end])
    try:
        return json.loads(" ".join(parts))
    except json.JSONDecodeError as exc:
        raise JsoncError(str(exc)) from exc


def _object_members(text: str, toks: Sequence[Token], brace: int) -> tuple[dict[str, tuple[int, int]], int]:
    """For the object opened at token `brace`: key → (first, last) token index of its
    value, and the index of the closing brace."""
    members: dict[str, tuple[int, int]] = {}
    k = brace + 1
    while toks[k].kind != "}":
        if toks[k].kind == ",":
            k += 1
            continue
        if toks[k].kind != "string" or toks[k + 1].kind != ":":
            raise JsoncError(f"expected a member name at offset {toks[k].start}")
        key = json.loads(text[toks[k].start : toks[k].end])
        first = last = k + 2
        depth = 0
        while True:
            kind = toks[last].kind
            depth += kind in "{[" and 1 or 0
            depth -= kind in "}]" and 1 or 0
            if depth == 0 and (kind not in "{[" or last > first):
                break
            last += 1
        members[key] = (first, last)
        k = last + 1
    return members, k


def set_member(text: str, path: Sequence[str], value: Any, indent: str = "  ") -> str:
    """`text` with the member at `path` (e.g. ("mcp", "memoryd")) set to `value`.

    Objects on the way that are missing are created; only the bytes of that member change.
    Raises JsoncError when the text is not a JSONC object or the path crosses a non-object.
    """
    toks = list(tokens(text))
    if not toks or toks[0].kind != "{":
        raise JsoncError("the top level is not an object")
    brace, depth = 0, 1
    for number, key in enumerate(path):
        members, close = _object_members(text, toks, brace)
        last = number == len(path) - 1
        if key not in members:
            rest = path[number + 1 :]
            new: Any = value
            for name in reversed(rest):
                new = {name: new}
            return _insert(text, toks, brace, close, key, new, indent * depth)
        first, end = members[key]
        if last:
            body = _dump(value, indent * depth)
            return text[: toks[first].start] + body + text[toks[end].end :]
        if toks[first].kind != "{":
            raise JsoncError(f"{'.'.join(path[: number + 1])} is not an object")
        brace, depth = first, depth + 1
    raise JsoncError("empty path")


def _insert(text: str, toks: Sequence[Token], brace: int, close: int, key: str, value: Any, pad: str) -> str:
    member = f"{json.dumps(key)}: {_dump(value, pad)}"
    empty = close == brace + 1
    at = toks[brace].end
    return text[:at] + f"\n{pad}{member}" + ("" if empty else ",") + text[at:]


def _dump(value: Any, pad: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + pad)


def _value_at(text: str, toks: Sequence[Token], path: Sequence[str]) -> tuple[int, int]:
    """(first, last) token index of the value at `path` (the whole text for ())."""
    if not toks or toks[0].kind != "{":
        raise JsoncError("the top level is not an object")
    first, last = 0, len(toks) - 1
    for number, key in enumerate(path):
        if toks[first].kind != "{":
            raise JsoncError(f"{'.'.join(path[:number]) or 'the top level'} is not an object")
        members, _ = _object_members(text, toks, first)
        if key not in members:
            raise JsoncError(f"no member {'.'.join(path[: number + 1])}")
        first, last = members[key]
    return first, last


def _elements(toks: Sequence[Token], first: int, last: int) -> list[tuple[int, int]]:
    """(first, last) token index of each element of the array between tokens first and last."""
    spans, depth, start = [], 0, first + 1
    for k in range(first + 1, last):
        kind = toks[k].kind
        if kind in "{[":
            depth += 1
        elif kind in "}]":
            depth -= 1
        elif kind == "," and depth == 0:
            if k > start:
                spans.append((start, k - 1))
            start = k + 1
    if last > start:
        spans.append((start, last - 1))
    return spans


def append_element(text: str, path: Sequence[str], value: Any, indent: str = "  ") -> str:
    """`text` with `value` added as the last element of the array at `path`."""
    toks = list(tokens(text))
    first, last = _value_at(text, toks, path)
    if toks[first].kind != "[":
        raise JsoncError(f"{'.'.join(path)} is not an array")
    pad = indent * (len(path) + 1)
    spans = _elements(toks, first, last)
    at = toks[spans[-1][1]].end if spans else toks[first].end
    return text[:at] + ("," if spans else "") + f"\n{pad}{_dump(value, pad)}" + text[at:]


def remove_last_element(text: str, path: Sequence[str]) -> str:
    """`text` without the last element of the array at `path` (the inverse of append_element)."""
    toks = list(tokens(text))
    first, last = _value_at(text, toks, path)
    spans = _elements(toks, first, last)
    if toks[first].kind != "[" or not spans:
        raise JsoncError(f"{'.'.join(path)} is not an array with elements")
    start = toks[spans[-2][1]].end if len(spans) > 1 else toks[first].end
    return text[:start] + text[toks[spans[-1][1]].end :]


def remove_first_member(text: str, path: Sequence[str], key: str) -> str:
    """`text` without member `key` of the object at `path`: the inverse of set_member, which
    put it first; a member found elsewhere (the file edited since) goes with its comma."""
    toks = list(tokens(text))
    first, _ = _value_at(text, toks, path)
    members, close = _object_members(text, toks, first)
    if key not in members:
        raise JsoncError(f"no member {'.'.join((*path, key))}")
    order = sorted(members.values())
    _, end = members[key]
    if members[key] == order[0]:
        after = end + 1 if toks[end + 1].kind == "," else end
        return text[: toks[first].end] + text[toks[after].end :]
    name = next(k for k in range(first, end) if toks[k].kind == "string" and toks[k + 1].kind == ":" and k + 2 == members[key][0])
    comma = name - 1  # the comma before the member
    return text[: toks[comma].start] + text[toks[end].end :]
