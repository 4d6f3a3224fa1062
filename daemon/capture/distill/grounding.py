"""Pure: keep a model's note to what the transcript shows.

A path or a command in a model-written note must occur in the transcript the model was
given; a line (or, in prose, the sentence) naming one that does not is dropped. Paths
inside a memory tree are memoryd's own writes and are dropped from the note too. When
the tools say the session ended unresolved (its last check failed after the last edit),
the Outcome opens with that check, whatever the model wrote: the tools win.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from daemon.capture.distill.base import DistillError
from daemon.capture.distill.evidence import UNRESOLVED, Evidence
from daemon.capture.distill.output import split_sections, summarize
from daemon.capture.distill.touched import is_memory_path

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{1,9}$")
# A path in prose: slash-separated names, not a URL's tail nor "and/or".
_PROSE_PATH = re.compile(r"(?<![\w:/.@-])(?:~/|\.{1,2}/|/)?(?:[\w.@-]+/)+[\w.@-]+")
_COMMAND_START = re.compile(r"^[a-z][\w.+-]*(?:\s|$)")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass
class Grounded:
    body: str
    dropped: list[str] = field(default_factory=list)  # the paths and commands not in the transcript


def _normal(text: str) -> str:
    return " ".join(text.replace('"', "'").split())


def _is_path(token: str) -> bool:
    """Clearly a path: rooted, or ending in a file name, or three components deep."""
    return token.startswith(("/", "~/", "./", "../")) or bool(_EXTENSION.search(token)) or token.count("/") >= 2


def _claims(text: str) -> list[str]:
    """The paths and commands a piece of note text names."""
    found: list[str] = []
    for span in _CODE_SPAN.findall(text):
        span = span.strip()
        if " " in span and _COMMAND_START.match(span):
            found.append(span)  # a command
        elif " " not in span and ("/" in span and _is_path(span) or _EXTENSION.search(span)) and "://" not in span:
            found.append(span)  # a path or file name
    prose = _URL.sub(" ", _CODE_SPAN.sub(" ", text))
    for match in _PROSE_PATH.finditer(prose):
        token = match.group(0).rstrip(".,;:")
        if _is_path(token):
            found.append(token)
    return found


class Checker:
    """Answers whether a path or command occurs in one transcript."""

    def __init__(self, transcript_text: str, directory: str = "") -> None:
        self.text = _normal(transcript_text)
        self.directory = directory.rstrip("/")

    def occurs(self, claim: str) -> bool:
        claim = _normal(claim)
        if claim in self.text:
            return True
        if self.directory and claim.startswith(self.directory + "/"):
            return claim[len(self.directory) + 1 :] in self.text
        return claim.lstrip("./") in self.text if claim.startswith("./") else False

    def invented(self, text: str) -> list[str]:
        return [c for c in _claims(text) if is_memory_path(c) or not self.occurs(c)]


def _ground_line(line: str, checker: Checker, dropped: list[str]) -> str | None:
    """The line with what it may keep: a list item goes whole; prose loses the sentence."""
    bad = checker.invented(line)
    if not bad:
        return line
    dropped.extend(bad)
    if re.match(r"\s*(?:[-*+]|\d+[.)])\s", line) or line.lstrip().startswith("#"):
        return None
    kept = [s for s in _SENTENCE.split(line) if not checker.invented(s)]
    return " ".join(kept) if kept else None


def ground(body: str, transcript_text: str, directory: str = "") -> Grounded:
    """Drop what names a path or command the transcript does not show (or a memory-tree path)."""
    checker = Checker(transcript_text, directory)
    dropped: list[str] = []
    lines: list[str] = []
    in_code = False
    for line in body.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
        if in_code or line.startswith("## ") or not line.strip():
            lines.append(line)
            continue
        kept = _ground_line(line, checker, dropped)
        if kept is not None:
            lines.append(kept)
    return Grounded(_drop_empty_sections("\n".join(lines)), list(dict.fromkeys(dropped)))


def _drop_empty_sections(body: str) -> str:
    parts = re.split(r"(?m)^(?=## )", body)
    kept = [p for p in parts if p.strip() and (not p.startswith("## ") or p.split("\n", 1)[-1].strip())]
    return "\n".join(p.rstrip("\n") + "\n" for p in kept).strip() + "\n"


_OUTCOME = "## Outcome / Current State"


def checked_against(body: str, evidence: Evidence) -> tuple[str, str]:
    """(the body, the line it was flagged with or ""): an unresolved ending's failing check opens the Outcome
    unless the model's Outcome already names that check."""
    outcome, proof = evidence.outcome()
    if outcome != UNRESOLVED or proof is None:
        return body, ""
    _, sections = split_sections(body)
    if proof.command in sections.get("Outcome / Current State", ""):
        return body, ""
    flag = f"{proof.stated()} (the last run, after the last change)"
    if _OUTCOME in body:
        return body.replace(_OUTCOME + "\n\n", f"{_OUTCOME}\n\n{flag}\n\n", 1), flag
    return f"{_OUTCOME}\n\n{flag}\n\n{body}", flag


class Checked(NamedTuple):
    body: str
    summary: str
    dropped: list[str]  # the paths and commands not in the transcript
    flagged: str  # the failing check the Outcome now opens with, or ""


def grounded_note(body: str, transcript_text: str, directory: str, evidence: Evidence | None = None) -> Checked:
    """A model's note body kept to the transcript and checked against the tools' evidence."""
    result = ground(body, transcript_text, directory)
    checked, flag = checked_against(result.body, evidence) if evidence is not None else (result.body, "")
    _, sections = split_sections(checked)
    if not sections:
        raise DistillError("the model's note named only paths and commands the session does not show")
    return Checked(checked, summarize(sections), result.dropped, flag)
