"""The default distiller: no model, no network. It picks facts out of the transcript.

Each section is filled from evidence in the entries: what the user asked, the last
thing the assistant said, sentences with decision/lesson wording, failed tools and
error-looking output, paths and commands from tool inputs, follow-up wording.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from daemon.capture.distill.base import SECTIONS, Distilled, Entry, Transcript
from daemon.capture.distill.junk import obviously_junk

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+")
_DECISION = re.compile(
    r"\b(decision|decided|decide|we will|always|never|instead of|rather than|chose|choose|prefer|"
    r"convention|policy|must|should use|because|so that)\b|约定|决定|一律|因为|而不是|必须|常に|決定",
    re.IGNORECASE,
)
_FINDING = re.compile(
    r"\b(found|root cause|turns out|is configured|is defined|lives in|is set|lesson|gotcha|learned|"
    r"does not exist|doesn't exist|never committed|caused by|the reason|stopped on|exceeded)\b|发现|原因|原来",
    re.IGNORECASE,
)
_FIX = re.compile(r"\b(fix|fixed|fixes|workaround|resolved|solved|now uses|now reads|changed)\b|修复|已修改|改用", re.I)
_FOLLOWUP = re.compile(
    r"\b(follow-?up|todo|next step|remaining|still need|later|rotate|should (?:also|now)|consider)\b|待办|后续|下一步",
    re.IGNORECASE,
)
_ERROR_LINE = re.compile(
    r"(\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bERR_[A-Z0-9_]+\b|\bE[A-Z]{3,}\b:|Traceback|\bfatal:|\bpanic:|"
    r"\bFAILED\b|\bfailed\b|\bnot found\b|\bdenied\b|\btimed out\b)"
)
_TASK_RESULT = re.compile(r"</?task[^>]*>|</?task_result>")
_FILE_KEYS = ("filePath", "path", "file")
_MAX_ITEMS = 8
_ITEM_CHARS = 300


def _sentences(text: str) -> list[str]:
    return [s.strip(" -*`") for s in _SENTENCE_END.split(text) if s and len(s.strip()) > 3]


def _short(text: str, limit: int = _ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(items: Iterable[str], limit: int = _MAX_ITEMS) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
        if len(seen) >= limit:
            break
    return seen


def _relative(path: str, directory: str) -> str:
    if directory and path.startswith(directory.rstrip("/") + "/"):
        return os.path.relpath(path, directory)
    return path


def _texts(entries: Iterable[Entry], role: str) -> list[str]:
    return [e.text for e in entries if e.kind == "text" and e.role == role]


class ExtractiveDistiller:
    """Builds the note's sections from the transcript's own words."""

    name = "extractive"
    concurrency = 1

    def distill(self, transcript: Transcript) -> Distilled:
        if obviously_junk(transcript):
            return Distilled(junk=True, distiller=self.name)
        entries = transcript.entries
        directory = transcript.session.directory
        asked = _texts(entries, "user")
        said = _texts(entries, "assistant")
        tools = [e for e in entries if e.kind == "tool"]

        sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
        worked = sections["What Was Worked On"]
        if transcript.session.title:
            worked.append(_short(transcript.session.title))
        worked += [_short(t.strip('"'), 500) for t in asked[:4]]

        if said:
            sections["Outcome / Current State"].append(_short(said[-1], 700))

        assistant_sentences = [s for t in said for s in _sentences(t)]
        # Subagent results (the `task` tool's output) are findings in their own right.
        subagent = [_TASK_RESULT.sub("", t.output).strip() for t in tools if t.tool == "task" and t.output]
        sections["Findings & Learnings"] = _unique(
            [*(_short(s) for s in assistant_sentences if _FINDING.search(s)), *(_short(r) for r in subagent if r)]
        )
        sections["Decisions & Rationale"] = _unique(
            _short(s) for s in assistant_sentences if _DECISION.search(s) and not _FINDING.search(s)
        )

        problems: list[str] = []
        for tool in tools:
            if tool.status == "error":
                target = next((tool.input[k] for k in _FILE_KEYS if k in tool.input), tool.input.get("command", ""))
                problems.append(_short(f"`{tool.tool}` {target} failed: {tool.error}".replace(" ` ", " ")))
        for tool in tools:
            for line in (tool.output or "").splitlines():
                if _ERROR_LINE.search(line):
                    problems.append(_short(f"`{tool.tool}` output: {line.strip()}", 240))
        problems += [_short(s) for s in assistant_sentences if _FIX.search(s) or _ERROR_LINE.search(s)]
        user_problems = [s for t in asked for s in _sentences(t) if _ERROR_LINE.search(s)]
        sections["Problems & Fixes"] = _unique([*(_short(s.strip('"')) for s in user_problems), *problems])

        files: dict[str, list[str]] = {}  # path → how it was touched, in order
        commands: list[str] = []
        for tool in tools:
            for key in _FILE_KEYS:
                if key in tool.input:
                    files.setdefault(_relative(tool.input[key], directory), []).append(tool.tool)
            if tool.tool == "bash" and "command" in tool.input:
                commands.append(f"`{_short(tool.input['command'], 200)}`")
            elif tool.tool in ("grep", "glob") and "pattern" in tool.input:
                commands.append(f"{tool.tool} `{_short(tool.input['pattern'], 120)}`")
            elif tool.tool == "task":
                commands.append(f"subagent: {_short(tool.input.get('description', ''), 120)}")
        for entry in entries:
            if entry.kind == "mention" and entry.text.startswith("changed files: "):
                for changed in entry.text.removeprefix("changed files: ").split(","):
                    files.setdefault(_relative(changed.strip(), directory), []).append("changed")
        file_lines = [f"`{path}` ({', '.join(_unique(how))})" for path, how in files.items()]
        sections["Files, Systems & Commands"] = [*file_lines[:12], *_unique(commands, 10)]

        tail = said[-2:]
        sections["Follow-ups"] = _unique(_short(s) for t in tail for s in _sentences(t) if _FOLLOWUP.search(s))

        body = render_sections(sections)
        summary = _short((asked[0] if asked else transcript.session.title).strip('"'), 160)
        return Distilled(junk=False, body=body, summary=summary, distiller=self.name)

    def close(self) -> None:
        """Nothing to release."""


def render_sections(sections: dict[str, list[str]]) -> str:
    """Markdown `## Section` blocks in the canonical order; empty ones omitted."""
    out = []
    for name in SECTIONS:
        items = sections.get(name) or []
        if not items:
            continue
        if name == "Outcome / Current State" and len(items) == 1:
            out.append(f"## {name}\n\n{items[0]}\n")
        else:
            out.append(f"## {name}\n\n" + "\n".join(f"- {item}" for item in items) + "\n")
    return "\n".join(out)
