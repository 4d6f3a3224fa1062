"""The labelled lessons, gotchas and decisions a session note states: pure text work.

`daemon.capture.lessons` keeps the memories they become in step with the notes; what a
note states is read here, where a worker process can read it too (it needs no index).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.capture.distill import cues
from daemon.capture.distill.turns import blocks
from daemon.memory.checks import MAX_TITLE
from daemon.memory.clip import clip_text
from daemon.memory.frontmatter import MemoryFileError, split_document
from daemon.memory.roots import canonical_project

_CONTEXT = "Context: "
# A title that leans on what came before it ("load them with …", "它会…"): the statement
# alone does not say what it is about, so the session's title is put before it.
_DANGLING = re.compile(
    r"^(?:\S+\s+){0,3}?(?:them|it|its|they|these|those|this|that)\b|^\S{0,6}(?:它|这个|那个|これ|それ|あれ|이것|그것)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Statement:
    kind: str  # lesson | gotcha | decision
    title: str  # the memory's title: the statement, shortened, standing alone
    text: str  # the whole statement


@dataclass(frozen=True)
class NoteFacts:
    """What a note says about itself that its memories carry: its title and project."""

    title: str = ""
    project: str = ""  # canonical worktree; "" unknown

    @property
    def context(self) -> str:
        """One line saying what the memory is about: the session it came from, and its project."""
        name = Path(self.project).name if self.project else ""
        where = f" (project {name})" if name else ""
        return f"{_CONTEXT}{self.title}{where}." if self.title else ""


def note_facts(note_text: str) -> NoteFacts:
    """The title and project of a note ("" for what it does not say)."""
    try:
        fields = split_document(note_text).fields if note_text.startswith("---\n") else {}
    except MemoryFileError:
        return NoteFacts()
    return facts_of(fields)


def facts_of(fields: Mapping[str, Any]) -> NoteFacts:
    """The title and project of a note from its frontmatter's fields."""
    title = " ".join(str(fields.get("title") or "").split())
    return NoteFacts(title, canonical_project(str(fields.get("project") or "")))


def statements(note_text: str, facts: NoteFacts | None = None) -> list[Statement]:
    """The labelled lessons, gotchas and decisions of a note, once each (`facts`: the
    note's, when its writer knows them: its frontmatter is not parsed again)."""
    body = note_text
    if note_text.startswith("---\n"):
        end = note_text.find("\n---\n", 4)
        body = note_text[end + 5 :] if end >= 0 else note_text
    if not cues.may_hold_memory_label(body):
        return []
    subject = (facts or note_facts(note_text)).title
    found: dict[tuple[str, str], Statement] = {}
    for block in blocks(body):
        labelled = cues.label_of(block)
        if not labelled or labelled[0] not in cues.MEMORY_KINDS:
            continue
        kind, text = labelled
        text = " ".join(text.strip(" *_").split())
        if len(text) < 8:
            continue
        title = _title(text, subject)
        found.setdefault((kind, title.casefold()), Statement(kind, title, text))
    return list(found.values())


def _title(text: str, subject: str = "") -> str:
    """The statement's first sentence, standing alone: a fragment that says "them" or "it"
    without its subject gets the session's title before it. Cut at a word, never inside one."""
    first = re.split(r"(?<=[.!?])\s+|(?<=[。！？])", text, maxsplit=1)[0].rstrip(".。")
    if subject and _DANGLING.match(first) and subject.casefold() not in first.casefold():
        first = f"{subject.rstrip('.:')}: {first}"
    return clip_text(first, MAX_TITLE - 1)
