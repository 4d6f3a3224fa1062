"""Re-apply the current secret rules to a memory tree that is already on disk.

Memories and notes written before a rule existed (or by hand) may hold what the scrubber
now finds. Each file's frontmatter fields and body are scrubbed through the frontmatter
editor (a marker at the start of a YAML value stays a string, and untouched fields keep
their bytes); a file whose name carried a secret is renamed. Files the daemon cannot parse
are reported, never rewritten (DESIGN.md, "Memory file").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.files import atomic_write_text
from daemon.memory.frontmatter import MemoryFileError, edit_document, split_document
from daemon.memory.roots import MemoryRoot
from daemon.memory.tree import list_memory_files
from daemon.scrub import redact

_UNSAFE = re.compile(r"[^\w.\-]+")
# Hand-written markdown in a tree that has no frontmatter but may hold text a user pasted.
PLAIN_FILES = ("ROOT.md",)


@dataclass
class TreeScrub:
    """What re-scrubbing one tree changed (or, in a dry run, would change)."""

    root: MemoryRoot
    rewritten: list[Path] = field(default_factory=list)
    renamed: list[tuple[Path, Path]] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)


def _scrub_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_scrub_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_value(v) for k, v in value.items()}
    return value


def rescrub_memory_text(text: str) -> str | None:
    """Return the memory file `text` with its secrets redacted, or None when it holds none.
    Raises MemoryFileError for a file whose frontmatter cannot be read."""
    doc = split_document(text)
    changes = {key: new for key, value in doc.fields.items() if (new := _scrub_value(value)) != value}
    body = redact(doc.body)
    if not changes and body == doc.body:
        return None
    return edit_document(doc, changes, body if body != doc.body else None)[0]


def scrubbed_name(name: str) -> str | None:
    """The file name `name` with a secret it holds replaced (`…-redacted-github_token-…`),
    or None when it holds none."""
    stem, dot, suffix = name.rpartition(".") if "." in name else (name, "", "")
    clean = redact(stem)
    if clean == stem:
        return None
    clean = _UNSAFE.sub("-", clean.replace("[REDACTED:", "redacted-").replace("]", "")).strip("-") or "redacted"
    return clean + dot + suffix


def _free(path: Path) -> Path:
    """`path`, or the first `name-2.md`, `name-3.md`… that does not exist yet."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def _targets(root: MemoryRoot) -> Iterator[Path]:
    files, _ = list_memory_files(root)
    for relative, _st in files:
        yield root.path / relative


def rescrub_tree(root: MemoryRoot, dry_run: bool = False, on_file: Any = None) -> TreeScrub:
    """Scrub every memory file of `root` in place; rename those whose names held a secret.
    `on_file(path)` is called after each file (a progress bar)."""
    report = TreeScrub(root)
    for path in [*_targets(root), *(root.path / name for name in PLAIN_FILES if (root.path / name).is_file())]:
        try:
            text = path.read_text(encoding="utf-8")
            new = redact(text) if path.name in PLAIN_FILES else rescrub_memory_text(text)
            if new == text:
                new = None
        except (OSError, UnicodeDecodeError, MemoryFileError) as exc:
            report.unreadable.append((path, str(exc)))
            new = None
        if new is not None:
            report.rewritten.append(path)
            if not dry_run:
                atomic_write_text(path, new, mode=path.stat().st_mode & 0o777)
        name = scrubbed_name(path.name)
        if name is not None:
            target = _free(path.with_name(name))
            report.renamed.append((path, target))
            if not dry_run:
                os.replace(path, target)
        if on_file is not None:
            on_file(path)
    return report


def count_files(root: MemoryRoot) -> int:
    """How many files rescrub_tree will look at (for a progress bar)."""
    return sum(1 for _ in _targets(root)) + sum(1 for name in PLAIN_FILES if (root.path / name).is_file())
