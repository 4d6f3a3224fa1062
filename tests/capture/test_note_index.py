"""A note is indexed from the Document it was rendered with: exactly what parsing its file gives."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from daemon.capture.distill.base import Distilled
from daemon.capture.notes import note_document, note_filename, render
from daemon.capture.statements import statements
from daemon.memory.index_rows import index_rows
from daemon.memory.roots import MemoryRoot
from daemon.memory.tree import content_hash, memory_from_bytes, memory_from_document
from daemon.opencode.source import SessionInfo

TRICKY = [
    "plain title",
    "yes",
    "null",
    "~",
    "2025-01-31",
    "12:30",
    "0x1F",
    "- a list?",
    "key: value # not a comment",
    "'single' and \"double\" quotes",
    "back\\slash \\n not a newline",
    "tab\there",
    "line\nbreak",
    "nel\x85ls\u2028ps\u2029",
    "bom\ufeff and \ufffe",
    "C1 \x80\x9f controls",
    "emoji 🦀 and CJK 部署 and RTL שלום",
    " leading and trailing ",
    "[flow] {map}, commas",
    "&anchor *alias !tag |block >folded",
    "%directive @at `tick`",
    "",
]


def _random_text(rng: random.Random) -> str:
    pool = "ab :#-'\"\\\n\t[]{},&*!|>%@`?~\x85\u2028\u2029\ufeff\x00\x1f\x7f🦀部"
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 40)))


def _cases() -> list[tuple[str, str, str]]:
    rng = random.Random(22)
    cases = [(t, t, f"## What Was Worked On\n{t}") for t in TRICKY]
    cases += [(_random_text(rng), _random_text(rng), _random_text(rng)) for _ in range(100)]
    return cases


@pytest.mark.parametrize(("title", "summary", "body"), _cases())
def test_the_rendered_document_is_what_a_parse_of_the_note_gives(tmp_path: Path, title: str, summary: str, body: str):
    root = MemoryRoot(tmp_path / "memory", "global")
    path = root.path / "sessions" / "note.md"
    path.parent.mkdir(parents=True)
    info = SessionInfo("ses_" + "x" * 8, title, "/nowhere/project: x", "prj", None, 1_700_000_000_000, 1_700_000_360_000)
    text, document = note_document(info, Distilled(False, body, summary), info.time_updated)
    path.write_text(text, encoding="utf-8")
    data, st = path.read_bytes(), os.stat(path)

    parsed, parse_warnings = memory_from_bytes(path, root, data, st)
    taken, warnings = memory_from_document(document, path, root, content_hash(data), st.st_mtime)
    assert taken == parsed
    assert warnings == parse_warnings == []


@pytest.mark.parametrize(("title", "summary", "body"), _cases())
def test_a_workers_rendered_note_gives_the_rows_the_pass_would_make(tmp_path: Path, title: str, summary: str, body: str):
    """What a worker makes ahead (text, file name, statements, index row) is what the pass
    makes from the same answer, and the index takes its row (the fields match)."""
    root = MemoryRoot(tmp_path / "memory", "global")
    path = root.path / "sessions" / "note.md"
    info = SessionInfo("ses_" + "x" * 8, title, "/nowhere/project: x", "prj", None, 1_700_000_000_000, 1_700_000_360_000)
    distilled = Distilled(False, f"{body}\n\nLesson: keep the {title} cache warm before a deploy", summary)
    made = render(info, distilled, extract_memories=True)
    text, document = note_document(info, distilled, info.time_updated)
    assert (made.text, made.document, made.filename) == (text, document, note_filename(info))
    assert list(made.stated) == statements(text) and made.stated
    memory, _ = memory_from_document(document, path, root, content_hash(text.encode()), 0.0)
    assert made.index_text.fields == (memory.title, memory.description, tuple(memory.tags), memory.kind, memory.body)
    fresh = index_rows(memory, "", scrubbed=True)
    ahead = index_rows(memory, "", scrubbed=True, prepared=made.index_text)
    assert ahead == fresh and ahead[1] is made.index_text.row
    assert render(info, distilled, extract_memories=False).stated is None
