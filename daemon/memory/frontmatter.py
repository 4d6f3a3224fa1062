"""YAML frontmatter: split a Markdown file, emit fields, edit one field without touching the rest.

One emitter writes the frontmatter of every file memoryd makes, session notes and
memories alike: strings as JSON (valid YAML, never mistaken for a number, date or
boolean, and far cheaper than a YAML emitter) unless asked for plain style where
plain is unambiguous; datetimes as ISO; lists in flow style. The editor changes only
the lines of the fields it sets: unknown fields, comments and key order stay
byte for byte, and every edit is read back before it is returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from daemon.timefmt import format_time

_FENCE = "---"
_CLOSERS = ("---", "...")
# A top-level YAML key at column 0: plain, or quoted.
_TOP_KEY = r"""^(?:"([^"]+)"|'([^']+)'|([^\s#'"\-?:][^:]*?))\s*:(?:\s|$)"""  # compiled on first use, as below
# Characters JSON leaves raw that YAML refuses (C1 controls, non-characters) or reads as
# line breaks inside a quoted string (NEL, LS, PS): escaped so the value reads back.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
# A string safe as a plain scalar: starts with a letter, holds no indicator YAML acts
# on (`:` and `#` anywhere, a quote at the start) and nothing that needs escaping.
# Compiled on first use (its character ranges take ~8 ms): only writers render YAML, and
# `memoryd context` and `recall` start a process each time.
_PLAIN_BLOCK = "[A-Za-z\u00c0-\ud7ff\ue000-\ufffd][^\x00-\x1f\x7f-\x9f:#\u2028\u2029\ufeff\ufffe\uffff]*"
_quote = json.encoder.encode_basestring  # (the C function, where json has it)
_PLAIN_FLOW_EXTRA = re.compile(r"[,?\[\]{}]")
# Plain words YAML 1.1 resolves to booleans or null.
_YAML_WORDS = frozenset("y n yes no true false on off null ~".split())


class MemoryFileError(Exception):
    """A memory file memoryd cannot use; the message says why and what to do."""


def _is_plain(text: str, flow: bool) -> bool:
    return (
        re.fullmatch(_PLAIN_BLOCK, text) is not None  # re's own cache keeps it compiled
        and not text.endswith(" ")
        and text.lower() not in _YAML_WORDS
        and not (flow and _PLAIN_FLOW_EXTRA.search(text))
    )


def _string(text: str, plain: bool, flow: bool = False) -> str:
    if plain and _is_plain(text, flow):
        return text
    quoted = _quote(text)  # what json.dumps(text, ensure_ascii=False) answers, without its encoder object
    if _YAML_UNSAFE.search(quoted):
        quoted = _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return quoted


def yaml_value(value: Any, *, plain: bool = False, flow: bool = False) -> str:
    """Return `value` as a one-line YAML scalar or flow collection.

    Strings are JSON-quoted; with `plain`, those YAML reads back unchanged without
    quotes are left bare (memories written by `remember`, for people to read).
    """
    if isinstance(value, str):
        return _string(value, plain, flow)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(v, plain=plain, flow=True) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (f"{_string(str(k), plain, True)}: {yaml_value(v, plain=plain, flow=True)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"cannot write a {type(value).__name__} as a frontmatter value")


def field_line(key: str, value: Any, *, plain: bool = False) -> str:
    """Return one `key: value` frontmatter line."""
    return f"{key}: {yaml_value(value, plain=plain)}"


def frontmatter_block(fields: Mapping[str, Any], *, plain: bool = False) -> str:
    """Return `---`-fenced frontmatter for these fields, in their order."""
    return "---\n" + "\n".join(field_line(k, v, plain=plain) for k, v in fields.items()) + "\n---\n"


def _yaml_load(text: str) -> Any:
    import yaml  # imported on first parse: `memoryd recall` rarely needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader


@dataclass
class Document:
    """A memory file split into its raw frontmatter lines, the parsed fields and the body."""

    frontmatter_lines: list[str]
    fields: dict[str, Any]
    body: str
    newline: str = "\n"


def _yaml_load(text: str) -> Any:
    import yaml  # imported on first parse: `memoryd recall` rarely needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader


def split_document(text: str) -> Document:
    """Split a memory file's text; raise MemoryFileError when it has no usable frontmatter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    newline = "\r\n" if text.startswith(_FENCE + "\r\n") else "\n"
    lines = text.split(newline)
    if not lines or lines[0].rstrip() != _FENCE:
        raise MemoryFileError("no frontmatter: the file must start with a '---' line and YAML fields")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in _CLOSERS:
            break
    else:
        raise MemoryFileError("frontmatter is not closed: add a '---' line after the YAML fields")
    raw = lines[1:end]
    import yaml

    try:
        # With its final newline, as in the file: a block scalar (`|`) on the last field keeps it.
        fields = _yaml_load("\n".join(raw) + "\n")
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        # ValueError: a scalar YAML resolves but cannot build, such as 2025-13-45.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise MemoryFileError(f"broken YAML in the frontmatter{where}: {problem}") from exc
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        raise MemoryFileError("the frontmatter is not a set of 'key: value' fields")
    body = newline.join(lines[end + 1 :])
    return Document(raw, fields, body, newline)


def parse_time(value: Any, *, end_of_day: bool = False) -> datetime | None:
    """Return an aware UTC datetime for a YAML date/datetime or ISO string; None if empty.

    A bare date means the start of that day (UTC), or with `end_of_day` the start of the
    next one: `expires: 2025-01-31` keeps a memory through the 31st.
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            if "T" in text or " " in text:
                value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            else:
                value = date.fromisoformat(text)
        except ValueError as exc:
            raise MemoryFileError(f"not an ISO date or datetime: {value!r}") from exc
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        start = datetime.combine(value, time(0), UTC)
        return start + timedelta(days=1) if end_of_day else start
    raise MemoryFileError(f"not a date: {value!r}")


# The order memoryd writes a memory's own fields in; unknown fields follow in given order.
FIELD_ORDER = ("id", "title", "description", "kind", "tags", "scenarios", "hard_rule", "created", "updated", "expires")


def render_memory(fields: Mapping[str, Any], body: str) -> str:
    """Return a new memory file: frontmatter (known fields in FIELD_ORDER) and body."""
    known = {key: fields[key] for key in FIELD_ORDER if key in fields and fields[key] not in (None, "", (), [])}
    rest = {key: value for key, value in fields.items() if key not in FIELD_ORDER}
    return frontmatter_block({**known, **rest}, plain=True) + "\n" + body.strip() + "\n"


def _entries(lines: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Map each top-level key to the [start, end) range of its lines in the frontmatter."""
    spans: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        match = re.match(_TOP_KEY, lines[i])
        if not match:
            i += 1
            continue
        key = next(g for g in match.groups() if g is not None).strip()
        j = i + 1
        # A value goes on over indented lines, `- item` lines and blank lines between them.
        while j < len(lines) and (lines[j][:1] in (" ", "\t", "-") or lines[j].strip() == ""):
            j += 1
        while j > i + 1 and lines[j - 1].strip() == "":
            j -= 1
        spans[key] = (i, j)
        i = j
    return spans


def edit_memory(text: str, changes: Mapping[str, Any], body: str | None = None) -> str:
    """Return `text` with the given fields set (and the body replaced, if given).

    Only the lines of the changed fields move: every other byte of the frontmatter is
    kept. Raises MemoryFileError when the result would not read back as intended (YAML
    that a line edit cannot safely change, such as anchors or duplicate keys).
    """
    return edit_document(split_document(text), changes, body)[0]


def edit_document(doc: Document, changes: Mapping[str, Any], body: str | None = None) -> tuple[str, Document]:
    """Like `edit_memory`, for a document already split; also return the result, parsed."""
    lines = list(doc.frontmatter_lines)
    spans = _entries(lines)
    appended: list[str] = []
    # Replace from the bottom up so earlier spans stay valid.
    for key, value in sorted(changes.items(), key=lambda kv: -spans.get(kv[0], (-1, 0))[0]):
        new = field_line(key, value, plain=True)
        if key in spans:
            start, end = spans[key]
            lines[start:end] = [new]
        else:
            appended.append(new)
    lines.extend(appended)
    nl = doc.newline
    head = nl.join(["---", *lines, "---"]) + nl
    if body is None:
        result = head + doc.body
    else:
        # Keep the file's own line endings for the new body too.
        result = head + nl + nl.join(body.strip().splitlines()) + nl
    check = split_document(result)
    for key, value in doc.fields.items():
        if key not in changes and check.fields.get(key) != value:
            raise MemoryFileError(f"field '{key}' would change on rewrite; edit the file by hand instead")
    for key, value in changes.items():
        expected = _yaml_load(field_line(key, value, plain=True))[key]
        if check.fields.get(key) != expected:
            raise MemoryFileError(f"field '{key}' cannot be set safely; edit the file by hand instead")
    return result, check
