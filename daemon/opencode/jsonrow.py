"""One row's `data`: `json.loads`, with its answers and its errors, at less cost per row.

A session is a few dozen rows, each parsed once, and `json.loads` spends about as long
in its Python wrappers (`decode`, `raw_decode`, two whitespace matches) as the C scanner
spends on a short row. A row is an object: its text opens with `{` and ends where the
scanner stops, so the scanner alone answers it; anything else (whitespace around it,
extra data, an error) goes to `json.loads`, which gives its own answer or error.
"""

from __future__ import annotations

import json
from typing import Any

_scan = json.decoder.JSONDecoder().scan_once  # what json.loads runs, with json.loads's defaults


def loads(text: str) -> Any:
    """`json.loads(text)` for a str."""
    if text[:1] == "{":
        try:
            value, end = _scan(text, 0)
        except (StopIteration, ValueError):  # (json.loads raises the error itself, with its message)
            return json.loads(text)
        if end == len(text):
            return value
    return json.loads(text)


_ATTACHED = "\n\n<file name="  # what `opencode run --file` appends to the prompt


def unquote_prompt(text: str) -> str:
    """A prompt as the user typed it: `opencode run "…"` stores it as a JSON string literal (inner quotes
    escaped as \\"), with any attached file after it. Any other text is returned as it is."""
    if text[:1] != '"':
        return text
    try:
        value, end = _scan(text, 0)
    except (StopIteration, ValueError):
        return text
    rest = text[end:]
    if not isinstance(value, str) or not (rest == "" or rest.startswith(_ATTACHED)):
        return text  # '"foo" is broken': a quote the user typed
    return value + rest
