"""Pure: a session's entries as turns (one user request and what followed), and sentences.

A turn starts at a user's text and runs to the next one. Its *conclusion* is the last
thing the assistant said in it: where an agent states what it did for that request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from daemon.capture.distill.base import Entry

# Sentence ends: Latin punctuation before a space, CJK punctuation anywhere, line breaks.
# Semicolons do not end a sentence: "X now reads Y; never hard-code Z" is one statement.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z\s])|(?<=[。！？])|\n+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_MARKUP = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)+")
_KEY_PUNCT = re.compile(r"[\s`*_\"'“”‘’()\[\]<>.,;:!?。，、；：！？「」『』（）…-]+")


@dataclass
class Turn:
    """One user request and the work that answered it."""

    asked: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    tools: list[Entry] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)

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
            current.asked.append(entry.text.strip().strip('"'))
            continue
        if current is None:
            current = Turn()
            turns.append(current)
        if entry.kind == "text":
            current.said.append(entry.text)
        elif entry.kind == "tool":
            current.tools.append(entry)
        elif entry.kind == "mention":
            current.mentions.append(entry.text)
    return turns


def weight(text: str) -> int:
    """Length in Latin-equivalent characters: a CJK character carries about a word."""
    return len(text) + 3 * len(_CJK.findall(text))


def is_statement(sentence: str) -> bool:
    """A sentence that can stand alone: long enough, not a heading, not a dangling clause."""
    if weight(sentence) < 16 or sentence.endswith(":") or sentence.endswith("："):
        return False
    if _CJK.search(sentence[:1]):
        return True
    first = sentence.lstrip("`*_\"'(")[:1]
    # A lower-case start is a clause cut from something larger ("never hard-code the key.")
    # unless it is code or a path ("config.py does not exist…").
    return not first.islower() or bool(re.match(r"[\w./-]+\.\w+|`", sentence))


def sentences(text: str) -> list[str]:
    """Split text into statements, markup stripped; code blocks are skipped."""
    out: list[str] = []
    in_code = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or line.strip().startswith("|"):
            continue
        for piece in _SENTENCE_END.split(_MARKUP.sub("", line.strip())):
            piece = piece.strip().strip("*").strip()
            if piece and is_statement(piece):
                out.append(piece)
    return out


def key(text: str) -> str:
    """What makes two statements the same: case, spaces and punctuation ignored."""
    return _KEY_PUNCT.sub(" ", text.casefold()).strip()


def clip_sentences(parts: list[str], limit: int) -> str:
    """Whole sentences joined up to `limit` characters; one over-long sentence is cut at a word."""
    kept: list[str] = []
    used = 0
    for part in parts:
        if used + len(part) + 1 > limit and kept:
            break
        kept.append(part)
        used += len(part) + 1
    text = " ".join(kept)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(",;:") + "…"
