"""What two agents' transcripts have in common, read from each agent's `formats.tsv`.

Claude Code and Codex CLI store the user's words beside text the harness added (hook
context, AGENTS.md/CLAUDE.md contents, environment context, command echoes). Which is
which is format knowledge, kept in a data file beside each reader (`formats.tsv`: rows
`echo`, `strip`, `tool`, `input`), not in code. This module reads those files and builds
the rows `daemon.capture.transcript` reads (OpenCode 1.x's message and part shapes).

memoryd's own text never becomes a part: what its hooks injected is not a user turn
(the readers drop those records), and what its MCP tools answered is left out of the tool
part (`OWN_TOOL_PREFIX`), so no note, index or lesson learns memoryd's echo.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path

from daemon.source import MessageRow, PartRow, SessionInfo, SessionRows

OWN_SERVER = "memoryd"  # the MCP server name `memoryd install` registers
OWN_TOOL_PREFIX = f"mcp__{OWN_SERVER}__"
OWN_OUTPUT = "(memoryd's own answer: not kept)"
TITLE_CHARS = 80


@functools.lru_cache(maxsize=8)
def _rows(path: Path) -> tuple[tuple[str, ...], ...]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(tuple(cell.strip() for cell in line.split("\t")))
    return tuple(out)


class Formats:
    """One agent's `formats.tsv`."""

    def __init__(self, path: Path) -> None:
        rows = _rows(path)
        self.echo_prefixes = tuple((r[1], r[2]) for r in rows if r[0] == "echo" and len(r) > 2)
        tags = [re.escape(r[1]) for r in rows if r[0] == "strip" and len(r) > 1]
        self._strip = re.compile(rf"<({'|'.join(tags)})>.*?</\1>\s*", re.S) if tags else None
        self.tools = {r[1]: r[2] for r in rows if r[0] == "tool" and len(r) > 2}
        self.inputs = {r[1]: r[2] for r in rows if r[0] == "input" and len(r) > 2}

    def echo(self, text: str) -> str | None:
        """"drop" or "mention" when user-role `text` is the harness's, not the user's; else None."""
        head = text.lstrip()
        for prefix, action in self.echo_prefixes:
            if head.startswith(prefix):
                return action
        return None

    def strip(self, text: str) -> str:
        """`text` without the wrapped blocks the harness adds inside user text."""
        return self._strip.sub("", text).strip() if self._strip else text.strip()

    def tool_part(self, name: str, arguments: object, output: object, error: bool) -> dict:
        """A tool call as OpenCode's `tool` part (its name and input keys as OpenCode's)."""
        args = arguments if isinstance(arguments, dict) else {"value": arguments}
        args = {self.inputs.get(k, k): v for k, v in args.items()}
        own = name.startswith(OWN_TOOL_PREFIX)
        text = OWN_OUTPUT if own else flat_text(output)
        state = {"status": "error" if error else "completed", "input": args}
        state["error" if error and not own else "output"] = text
        return {"type": "tool", "tool": self.tools.get(name, name.lower() if name.isalpha() else name), "state": state}


def flat_text(value: object) -> str:
    """Text of a tool output: a string, or the text blocks of a list of content blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(b.get("text", "")) for b in value if isinstance(b, dict) and b.get("text"))
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def mention_of(text: str, limit: int = 300) -> dict:
    """A harness note (a subagent's result arriving) as a one-line mention part: the
    text of its `<result>` when it has one, else the note without its tags."""
    found = re.search(r"<result>(.*?)</result>", text, re.S)
    inner = found.group(1) if found else re.sub(r"<[^>]+>", " ", text)
    return {"type": "mention", "text": ("subagent: " + " ".join(inner.split()))[:limit]}


def title_of(prompt: str) -> str:
    """A session title from its first prompt: its first line, clipped."""
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def session_info(
    agent: str, session_id: str, title: str, directory: str, times: list[int], fallback_ms: int,
    talk: int, ended: bool, parent: str | None = None,
) -> SessionInfo:
    """A JSONL session as a `SessionInfo`: created and updated from its records' times (the
    file's mtime when none has one)."""
    return SessionInfo(
        id=session_id, title=title, directory=directory, project_id="", parent_id=parent,
        time_created=min(times, default=fallback_ms), time_updated=max(times, default=fallback_ms),
        message_count=talk, family=agent, ended=ended, agent=agent,
    )  # fmt: skip


def user_part(record: dict, n: int) -> tuple[str, str, int, dict] | None:
    """A kept user record (`prompt` or `mention`) as a part for `build_rows`, else None."""
    if record["k"] == "prompt":
        return (f"u{n}", "user", record["ts"] or 0, {"type": "text", "text": record["text"]})
    if record["k"] == "mention":
        return (f"u{n}", "user", record["ts"] or 0, mention_of(record["text"]))
    return None


def build_rows(info: SessionInfo, parts: Iterable[tuple[str, str, int, dict]]) -> SessionRows:
    """SessionRows from (message key, role, time ms, part) in transcript order: consecutive
    parts with one key are one message (Claude Code's lines of one `message.id`)."""
    messages: list[MessageRow] = []
    out: list[PartRow] = []
    last = None
    for key, role, when, part in parts:
        if key != last or not messages:
            messages.append(MessageRow(f"m{len(messages):06d}", when, {"role": role}))
            last = key
        out.append(PartRow(f"p{len(out):06d}", messages[-1].id, part))
    return SessionRows(info, messages, out)


def iso_ms(stamp: object) -> int | None:
    """Epoch ms of an ISO timestamp (`2026-12-04T18:10:07.040Z`); None when it is not one."""
    from datetime import datetime

    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None
