"""Pure: a session's entries as turns (one user request and what followed), and sentences.

A turn starts at a user's text and runs to the next one. Its *conclusion* is the last
thing the assistant said in it: where an agent states what it did for that request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from daemon.capture.distill.base import Entry
from daemon.capture.distill.memo import per_session

# Sentence ends: Latin punctuation before a space (not after "e.g." and the like), CJK
# punctuation anywhere. Semicolons do not end a sentence: "X now reads Y; never
# hard-code Z" is one statement, and cutting it leaves a fragment.
# The cheap look-behind first: the others are asked only after a `.`, `!` or `?`.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<![\s(]e\.g\.)(?<![\s(]i\.e\.)(?<!\svs\.)(?<!\setc\.)(?<!\scf\.)(?<!\.\.\.)\s+|(?<=[。！？])"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_BOLD = re.compile(r"\*\*([^\s/*](?:[^*]*?[^\s*])?)\*\*")  # **bold**, not a glob's **/
_BOLD_ONLY = re.compile(r"^(?:[-*+]\s+)?\*\*[^*]+\*\*\s*[:：]?$")
_CJK_STOP = re.compile(r"[。！？]")
_MARKUP = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)+")
_TITLE = re.compile(r"^#{1,6}\s+[^.。!！?？:：]*$")
_KEY_PUNCT = re.compile(r"[\s`*_\"'“”‘’()\[\]<>.,;:!?。，、；：！？「」『』（）…-]+")


@dataclass
class Turn:
    """One user request and the work that answered it."""

    asked: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    tools: list[Entry] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    steps: list[Entry] = field(default_factory=list)  # the assistant's texts and tool calls, in order

    @property
    def conclusion(self) -> str:
        return self.said[-1] if self.said else ""


def split_turns(entries: tuple[Entry, ...] | list[Entry]) -> list[Turn]:
    """Group entries into turns; work before the first request forms a turn of its own."""
    turns: list[Turn] = []
    current: Turn | None = None
    for entry in entries:
        if entry.kind == "text" and entry.role == "user":
            if current is None or current.said or current.tools:
                current = Turn()
                turns.append(current)
            current.asked.append(entry.text.strip())
            continue
        if current is None:
            current = Turn()
            turns.append(current)
        if entry.kind == "text":
            current.said.append(entry.text)
            current.steps.append(entry)
        elif entry.kind == "tool":
            current.tools.append(entry)
            current.steps.append(entry)
        elif entry.kind == "mention":
            current.mentions.append(entry.text)
    return turns


def weight(text: str) -> int:
    """Length in Latin-equivalent characters: a CJK character carries about a word."""
    return len(text) + 3 * len(_CJK.findall(text))


def is_statement(sentence: str, min_weight: int = 16) -> bool:
    """A sentence that can stand alone: long enough, not a heading or a lead-in."""
    return weight(sentence) >= min_weight and not sentence.endswith((":", "："))


def blocks(text: str) -> list[str]:
    """Paragraphs and list items, hard-wrapped lines joined; code blocks and tables skipped."""
    out: list[str] = []
    in_code = False
    joinable = False  # the previous line was prose that a wrapped line continues
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code, joinable = not in_code, False
            continue
        if in_code or line.startswith("|") or not line:
            joinable = False
            continue
        if _TITLE.match(line):  # "## Summary", "## What was done": a heading names what follows, it states nothing
            joinable = False
            continue
        if _BOLD_ONLY.match(line):  # "**Cause**" on its own line names what follows, like a heading: no sentence
            joinable = False
            continue
        markup = _MARKUP.match(line)
        starts_item = markup is not None
        if markup:  # anchored at the start: its one match is all `_MARKUP.sub("", line)` takes away
            line = line[markup.end() :]
        if "**" in line:  # (a template substitution costs a microsecond even where nothing matches)
            line = _BOLD.sub(r"\1", line)
        if joinable and not starts_item and out:
            glue = "" if _CJK.search(out[-1][-1:]) and _CJK.search(line[:1]) else " "
            out[-1] += glue + line
        else:
            out.append(line)
        joinable = not line.endswith(":")
    return out


def sentences(text: str, min_weight: int = 16, lead_ins: bool = False) -> list[str]:
    """Split text into statements, markup stripped; code blocks are skipped.

    With `lead_ins`, a sentence that introduces what follows ("still runs twice, the log:") is kept:
    in a request it is often the point, the pasted log after it being only the evidence.
    """
    return list(_sentences(text, min_weight, lead_ins))


@per_session
def _sentences(text: str, min_weight: int, lead_ins: bool) -> tuple[str, ...]:
    out: list[str] = []
    for block in blocks(text):
        for piece in _SENTENCE_END.split(block):
            piece = " ".join(piece.split()).strip("*").strip()
            if piece and (is_statement(piece, min_weight) or (lead_ins and weight(piece) >= min_weight)):
                out.append(piece)
    return tuple(out)


@per_session
def key(text: str) -> str:
    """What makes two statements the same: case, spaces and punctuation ignored."""
    return _KEY_PUNCT.sub(" ", text.casefold()).strip()


def _glue(previous: str) -> str:
    """What joins a statement to the next: nothing after CJK punctuation, "; " after a bare list item."""
    if _CJK_STOP.search(previous[-1:]) or previous[-1:] in "：；":
        return ""
    return " " if previous[-1:] in ".!?;:)" else "; "


def clip_sentences(parts: list[str], limit: int) -> str:
    """Whole sentences joined up to `limit` characters; one over-long sentence is cut at a word."""
    kept: list[str] = []
    used = 0
    for part in parts:
        if used + len(part) + 1 > limit and kept:
            break
        kept.append(part)
        used += len(part) + 1
    text = "".join(k if not i else _glue(kept[i - 1]) + k for i, k in enumerate(kept))
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(",;:") + "…"
