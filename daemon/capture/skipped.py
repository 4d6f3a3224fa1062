"""The sessions capture skipped as junk, each with the reason, for a person to review."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from daemon.capture.distill.junk import junk_reason
from daemon.state import StateDB
from daemon.timefmt import iso

_LINE = re.compile(r"^\[(?P<role>user|assistant)(?P<tool> · tool [^\]]+)?\] ?(?P<text>.*)$")


@dataclass(frozen=True)
class Skipped:
    session_id: str
    title: str
    project: str
    judged: str  # ISO time of the verdict
    judged_by: str  # "extractive x2", "openai:qwen3:8b v2"
    reason: str
    asked: str  # the first request, shortened


def _explain(transcript: str, judged_by: str) -> tuple[str, str]:
    """(reason, first request) from the transcript the verdict was given on."""
    asked: list[str] = []
    said: list[str] = []
    tools = 0
    for line in transcript.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        if match.group("tool"):
            tools += 1
        elif match.group("role") == "user":
            asked.append(match.group("text"))
        else:
            said.append(match.group("text"))
    first = " ".join((asked[0] if asked else "").split())[:80]
    return junk_reason(asked, said, tools) or f"the model ({judged_by}) answered JUNK", first


def skipped_sessions(state: StateDB, transcripts_dir: Path, limit: int | None = None) -> list[Skipped]:
    """Junk sessions, newest verdict first, each with why and what was asked."""
    records = sorted(state.records("junk"), key=lambda r: (-r.time_done, r.session_id))
    out: list[Skipped] = []
    for record in records[:limit] if limit else records:
        judged_by = " ".join(x for x in (record.distiller, record.prompt_version) if x) or "unknown"
        try:
            transcript = (transcripts_dir / f"{record.session_id}.md").read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            reason, asked = "transcript no longer kept; `memoryd distill --session ID --force` judges it again", ""
        else:
            reason, asked = _explain(transcript, judged_by)
        out.append(Skipped(record.session_id, record.title, record.project_dir, iso(record.time_done) if record.time_done else "",
                           judged_by, reason, asked))
    return out
