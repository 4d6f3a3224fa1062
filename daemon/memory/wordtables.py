"""Word tables built from lists at first use, kept in a file for short-lived commands.

The stop tokens (`stopwords.stop_tokens`: ~2,000 words of four languages, each tokenized)
and the glossary's concepts (`wordforms`) cost 30-45 ms to build in a new process, which
`memoryd context --json` (the plugin's path when no daemon answers) and `memoryd recall`
would pay on every run. A command that calls `keep_in(state folder)` reads them from
`words.json` there (~2 ms) instead, built and written by the first command that needs them.

Each table is keyed by what it is built from: the stat of the modules that build it and of
the stop-words package, the lexicon's digest (`daemon.lexicon.digest`: its tables), and Python's Unicode version (NFKC and casefold). A table whose
key differs, or a file that is unreadable or malformed, is built again and rewritten: a
cache only, never the truth.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

FILE = "words.json"

_folder: Path | None = None
_tables: dict[str, Any] | None = None  # the file's tables, read once a process


def keep_in(folder: Path | None) -> None:
    """Read and keep word tables in `folder` (the state folder), or nowhere (None)."""
    global _folder, _tables
    if folder != _folder:
        _folder, _tables = folder, None


def _key(sources: Sequence[str | None]) -> list[Any]:
    from daemon import lexicon
    from daemon.paths import file_identity

    return [unicodedata.unidata_version, list(sys.version_info[:2]), lexicon.digest(), *(file_identity(s) for s in sources)]


def _read(folder: Path) -> dict[str, Any]:
    try:
        found = json.loads((folder / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def table(name: str, sources: Sequence[str | None], build: Callable[[], Any], check: Callable[[Any], bool]) -> Any:
    """The JSON value `build()` returns, from the file when it holds one built from these
    `sources` (module files) that passes `check`; built, and written there, otherwise."""
    global _tables
    if _folder is None:
        return build()
    if _tables is None:
        _tables = _read(_folder)
    key = _key(sources)
    entry = _tables.get(name)
    if isinstance(entry, dict) and entry.get("key") == key and check(entry.get("value")):
        return entry["value"]
    value = build()
    _tables[name] = {"key": key, "value": value}
    _write(_folder, _tables)
    return value


def _write(folder: Path, tables: dict[str, Any]) -> None:
    from daemon.diskfull import DiskFull
    from daemon.files import atomic_write_bytes

    if not folder.is_dir():
        return  # a command that made no state folder has nothing to keep one in
    try:
        atomic_write_bytes(folder / FILE, json.dumps(tables, ensure_ascii=False).encode("utf-8"), durable=False)
    except (OSError, DiskFull):
        return  # a cache only: a read-only or full state folder means a slower command, no failure


def strings(value: Any) -> bool:
    """A check for `table`: a list of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def module_of(name: str) -> str | None:
    """The file of an importable module, without importing it (a source for `table`)."""
    from importlib.util import find_spec

    spec = find_spec(name)
    return spec.origin if spec is not None else None
