"""Claude Code's transcripts as a session source, read-only (facts: CLAUDECODE.md).

`<config>/projects/<slug>/<session>.jsonl` is one session; a resumed or compacted session
appends to the same file, so it keeps its one note. A subagent's transcript
(`<slug>/<session>/subagents/agent-*.jsonl`) never gets a note of its own: its result
reaches the parent as a `<task-notification>`, and a change to it only makes the parent
looked at again. The project is the records' `cwd`, never the slug (which is lossy).

What is kept of a line: the user's prompts (not the harness's echoes: `formats.tsv`),
tool results, assistant text and tool calls (one API message is several lines sharing
`message.id`: one message here), and where the context was compacted. Attachments (hook
output, CLAUDE.md/AGENTS.md contents, environment, skills) and bookkeeping lines are
dropped as they are read, and with them everything memoryd injected. A compaction's
summary is dropped too: it retells the turns before it, which are still in the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from daemon.agentformats import Formats, build_rows, iso_ms, session_info, title_of, user_part
from daemon.jsonlfiles import JsonlSource, SessionFile, Stat
from daemon.source import SessionInfo, SessionRows

AGENT = "claude"
FORMATS = Formats(Path(__file__).with_name("formats.tsv"))
TITLE_TYPES = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
CONVERSATION = ("prompt", "result", "text", "tool")


def projects_dir(config_dir: Path) -> Path:
    return config_dir / "projects"


def keep(record: dict) -> dict | None:
    """What a transcript line holds for capture (None: nothing)."""
    kind = record.get("type")
    base = {"ts": iso_ms(record.get("timestamp")), "cwd": record.get("cwd") or ""}
    if record.get("isSidechain"):
        return None
    if kind == "user":
        return _user(record, base)
    if kind == "assistant":
        return _assistant(record, base)
    if kind == "system" and record.get("subtype") == "compact_boundary":
        return {**base, "k": "compact"}
    if kind in TITLE_TYPES and isinstance(record.get(TITLE_TYPES[kind]), str):
        return {**base, "k": "title", "text": record[TITLE_TYPES[kind]]}
    return {**base, "k": "time"} if base["ts"] else None


def _user(record: dict, base: dict) -> dict | None:
    if record.get("isCompactSummary"):
        return {**base, "k": "time"}  # retells what is above it: not read again
    content = record.get("message", {}).get("content")
    if isinstance(content, list):
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            return {**base, "k": "result", "items": [(b.get("tool_use_id"), b.get("content"), bool(b.get("is_error"))) for b in results]}
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    if not isinstance(content, str) or record.get("isMeta"):
        return {**base, "k": "time"}
    action = FORMATS.echo(content)
    if action == "drop":
        return {**base, "k": "time"}
    if action == "mention":
        return {**base, "k": "mention", "text": content}
    text = FORMATS.strip(content)
    return {**base, "k": "prompt", "text": text} if text else {**base, "k": "time"}


def _assistant(record: dict, base: dict) -> dict | None:
    message = record.get("message", {})
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    kept = []
    for block in blocks:
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            kept.append(("text", block["text"]))
        elif block.get("type") == "tool_use":
            kept.append(("tool", (block.get("id"), str(block.get("name", "?")), block.get("input", {}))))
        elif block.get("type") in ("thinking", "redacted_thinking"):
            kept.append(("reasoning", ""))
    if not kept:
        return {**base, "k": "time"}
    return {**base, "k": "assistant", "mid": message.get("id") or record.get("uuid"), "blocks": kept,
            "stop": message.get("stop_reason")}  # fmt: skip


class ClaudeCodeReader(JsonlSource):
    """Every session under `<config>/projects` (`path`): a `SessionSource`."""

    agent = AGENT
    record_keeper = staticmethod(keep)
    version_pattern = re.compile(rb'"version":"([^"]+)"')
    version_at_end = True

    def listing(self) -> dict[Path, SessionFile]:
        files: dict[Path, SessionFile] = {}
        if not self.path.is_dir():
            return files
        for slug in self.path.iterdir():
            if not slug.is_dir():
                continue
            for path in slug.glob("*.jsonl"):
                files[path] = SessionFile(path.stem)
            for path in slug.glob("*/subagents/*.jsonl"):
                files[path] = SessionFile(path.parent.parent.name, main=False)
        return files

    def info_of(self, path: Path, session_id: str, records: list[Any], stat: Stat) -> SessionInfo | None:
        prompts = [r["text"] for r in records if r["k"] == "prompt"]
        if not prompts:
            return None  # no conversation yet (the file opens with bookkeeping)
        times = [r["ts"] for r in records if r["ts"]]
        titles = [r["text"] for r in records if r["k"] == "title" and r["text"].strip()]
        cwd = next((r["cwd"] for r in records if r["cwd"]), "")
        talk = [r for r in records if r["k"] in (*CONVERSATION, "assistant")]
        last = talk[-1] if talk else None
        ended = bool(last and last["k"] == "assistant" and last["stop"] == "end_turn")
        title = titles[-1] if titles else title_of(prompts[0])
        return session_info(AGENT, session_id, title, cwd, times, stat[3] // 1_000_000, len(talk), ended)

    def rows_of(self, info: SessionInfo, records: list[Any]) -> SessionRows:
        results = {}
        for r in records:
            if r["k"] == "result":
                results.update({use_id: (content, error) for use_id, content, error in r["items"]})
        return build_rows(info, _parts(records, results))


def _parts(records: list[dict], results: dict) -> list[tuple[str, str, int, dict]]:
    parts = []
    for n, r in enumerate(records):
        when = r["ts"] or 0
        if (user := user_part(r, n)) is not None:
            parts.append(user)
        elif r["k"] == "compact":
            parts.append((f"c{n}", "assistant", when, {"type": "compaction"}))
        elif r["k"] == "assistant":
            for kind, value in r["blocks"]:
                if kind == "text":
                    part = {"type": "text", "text": value}
                elif kind == "reasoning":
                    part = {"type": "reasoning", "text": ""}
                else:
                    use_id, name, arguments = value
                    output, error = results.get(use_id, ("", False))
                    part = FORMATS.tool_part(name, arguments, output, error)
                parts.append((f"a{r['mid']}", "assistant", when, part))
    return parts
