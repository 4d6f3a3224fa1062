"""Pure: a model's raw answer → a note body with canonical sections, JUNK, or an error.

Models wrap, decorate and think aloud. What is accepted: optional `<think>` blocks
(removed), an optional code fence around the note, headings at any level or in bold
(normalised to `## `), text before the first heading (dropped). What is refused (a
DistillError, so the attempt counts as failed and no note is written): nothing left,
a refusal, no known section heading, or too little content under the headings.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from daemon.capture.distill.base import SECTIONS, DistillError
from daemon.scrub import redact

MIN_NOTE_CHARS = 20  # content under the headings; less than this is not a note
SUMMARY_CHARS = 160

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
# Small models decorate the one-word answer (`JUNK`, **JUNK**, JUNK.); anything with
# more words than that is not the reserved answer.
_JUNK = re.compile(r"^[`*_\"'\s]*JUNK[`*_\"'.!\s]*$")
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s*)?(?:\*\*|__)?(?P<name>[^*_#\n]+?)(?:\*\*|__)?\s*:?\s*#*\s*$")
_REFUSAL = re.compile(
    r"^(?:I'?m sorry|I am sorry|Sorry,|I can(?:no|')t|I cannot|I won'?t|I will not|I am unable|I'm unable"
    r"|As an AI|Unfortunately,? I)",
    re.IGNORECASE,
)
_EMPTY_CONTENT = {"", "none", "none.", "n/a", "-", "nothing", "nothing.", "not applicable"}
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


class Note(NamedTuple):
    """A parsed answer: junk, or a body of `## ` sections with a one-line summary."""

    junk: bool
    body: str = ""
    summary: str = ""


def _key(heading: str) -> str:
    # "Outcome/Current State", "decisions and rationale", "Follow ups" all match.
    return "".join(w for w in re.findall(r"[a-z]+", heading.lower()) if w != "and")


_SECTION_BY_KEY = {_key(name): name for name in SECTIONS}


def strip_reasoning(text: str) -> str:
    """Return `text` without `<think>…</think>` blocks (and thinking left unclosed)."""
    text = _THINK_BLOCK.sub("", text)
    # A chat template that opens <think> inside the prompt leaves only the closing tag.
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    # An unclosed <think> means the answer ran out while thinking: nothing after it is a note.
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip()


def _unfence(text: str) -> str:
    """Return the note inside a code fence that wraps it (with or without a preamble)."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if _section_name(line)), None)
    if first is None or not lines or lines[-1].strip() != "```":
        return text
    opening = [i for i in range(first) if lines[i].lstrip().startswith("```")]
    return "\n".join(lines[opening[-1] + 1 : -1]).strip() if opening else text


def _section_name(line: str) -> str | None:
    match = _HEADING.match(line)
    if not match or not (line.lstrip().startswith("#") or line.strip().startswith(("**", "__"))):
        return None
    return _SECTION_BY_KEY.get(_key(match.group("name")))


def split_sections(text: str) -> tuple[str, dict[str, str]]:
    """Return (text before the first known heading, section name → content) in SECTIONS order."""
    preamble: list[str] = []
    found: dict[str, list[str]] = {}
    current: list[str] = preamble
    for line in text.splitlines():
        name = _section_name(line)
        if name is not None:
            current = found.setdefault(name, [])  # a repeated heading continues its section
        else:
            current.append(line)
    sections = {name: "\n".join(found[name]).strip() for name in SECTIONS if name in found}
    return "\n".join(preamble).strip(), sections


def _has_content(content: str) -> bool:
    # Models fill a section they have nothing for with "- None" rather than leave it out.
    return _LIST_MARK.sub("", content).strip().lower() not in _EMPTY_CONTENT


def _first_line(content: str) -> str:
    for line in content.splitlines():
        line = " ".join(_LIST_MARK.sub("", line).replace("**", "").split())
        if line:
            return line
    return ""


def summarize(sections: dict[str, str]) -> str:
    """Return one line for the frontmatter: the outcome's first sentence, else a first line.

    The outcome says what the session achieved; the first section often restates the ask.
    """
    line = _first_line(sections.get("Outcome / Current State", ""))
    if line:
        line = re.split(r"(?<=[.!?])\s+|(?<=[。！？])", line, maxsplit=1)[0]
    else:
        line = next((first for first in map(_first_line, sections.values()) if first), "")
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def read_note(raw: str, source: str) -> Note:
    """Return the note in a model's answer, or raise DistillError saying what was wrong.

    `source` names the server in error messages. The body is scrubbed again.
    """
    text = _unfence(strip_reasoning(raw))
    if _JUNK.match(text):
        return Note(junk=True)
    if not text:
        raise DistillError(f"model server {source} returned an empty note")
    preamble, found = split_sections(text)
    excerpt = redact(" ".join(text.split())[:80])
    if not found and _REFUSAL.match(preamble):
        raise DistillError(f"model server {source}: the model refused to write a note ({excerpt!r})")
    if not found:
        raise DistillError(f"model server {source} returned no note section heading ({excerpt!r})")
    sections = {name: content for name, content in found.items() if _has_content(content)}
    if sum(len(c) for c in sections.values()) < MIN_NOTE_CHARS:
        raise DistillError(f"model server {source} returned a note too short to keep ({excerpt!r})")
    body = "\n".join(f"## {name}\n\n{content}\n" for name, content in sections.items())
    clean = {name: redact(content) for name, content in sections.items()}
    return Note(junk=False, body=redact(body), summary=summarize(clean))
