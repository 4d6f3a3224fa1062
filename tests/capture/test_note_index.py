"""A note is indexed from the Document it was rendered with: exactly what parsing its file gives."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from daemon.capture.distill.base import Distilled
from daemon.capture.notes import note_document
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
