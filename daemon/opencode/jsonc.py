"""OpenCode's JSONC config files: read them, and set one member without losing a comment.

`opencode.jsonc` may hold `//` and `/* */` comments and trailing commas. `loads` parses it
(comments and trailing commas dropped); `set_member` rewrites only the bytes of one
member (`"mcp": {"memoryd": …}`), so everything else, comments included, stays as the
user wrote it. Both are pure functions of the text.
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
