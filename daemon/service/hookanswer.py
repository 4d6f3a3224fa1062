"""The daemon's answers to Claude Code's and Codex's hooks (`POST /hook` on its socket).

- SessionStart (startup, resume, compact): the session's block, with a line on how this
  agent calls memoryd's tools. Built once per session and kept (`daemon.hookstore`): a
  resumed or compacted session gets the very same bytes, whatever changed since.
- UserPromptSubmit: for the session's first prompt only, the memories really about it
  (none when nothing is); every later prompt gets nothing.
- Stop, SubagentStop, SessionEnd: nothing to say; the session is looked at now (capture
  never waits for this: the file watcher finds the session anyway).

Every answer stays under the agents' 10,000-character cap (they truncate past it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon import hookstore
from daemon.claudecode import inject as claude_inject
from daemon.codex import inject as codex_inject
from daemon.memory.context import FENCE, RELEVANT_HEADING

TOOLS = {"claude": claude_inject.TOOLS, "codex": codex_inject.TOOLS}
MAX_CHARS = 9_900  # both agents keep 9,990 characters whole and cut 10,010 (CLAUDECODE.md, CODEX.md)
IDLE_EVENTS = frozenset({"Stop", "SubagentStop", "SessionEnd"})


def relevant_part(block: str) -> str:
    """The "relevant to the first prompt" section of a block, fenced; "" when it has none."""
    head, found, rest = block.partition(RELEVANT_HEADING)
    if not found:
        return ""
    body = rest.split(f"</{FENCE}>", 1)[0].strip()
    return f"<{FENCE}>\n{RELEVANT_HEADING}\n{body}\n</{FENCE}>" if body else ""


def bounded(text: str) -> str:
    """`text` within MAX_CHARS, cut at a line so the fence still closes."""
    if len(text) <= MAX_CHARS:
        return text
    closing = f"\n</{FENCE}>"
    cut = text[: MAX_CHARS - len(closing)].rsplit("\n", 1)[0]
    return cut + (closing if f"<{FENCE}>" in cut else "")


class HookAnswers:
    """Answers one hook call from the block builder (`context`) and the session records."""

    def __init__(
        self,
        state_dir: Callable[[], Path],
        context: Callable[[str | None, str, str | None], dict[str, Any]],
        idle: Callable[[str], None],
    ) -> None:
        self.state_dir = state_dir
        self.context = context
        self.idle = idle

    def answer(self, agent: str, event: str, session: str, cwd: str | None, prompt: str) -> str:
        """The additional context for this hook call ("" for none)."""
        if agent not in TOOLS:
            raise ValueError(f"unknown agent {agent!r}: one of {', '.join(TOOLS)}")
        if event in IDLE_EVENTS:
            self.idle(session)
            return ""
        if event == "SessionStart":
            return self.session_block(agent, session, cwd)
        if event == "UserPromptSubmit":
            return self.first_prompt(agent, session, cwd, prompt)
        return ""

    def session_block(self, agent: str, session: str, cwd: str | None) -> str:
        record = hookstore.load(self.state_dir(), agent, session)
        if isinstance(record.get("block"), str):
            return record["block"]  # byte-identical across the session's turns
        payload = self.context(cwd, "", session)
        block = bounded(f"{TOOLS[agent]}\n\n{payload['block']}") if payload.get("enabled") else ""
        hookstore.save(self.state_dir(), agent, session, {**record, "block": block})
        if cwd:
            hookstore.save_for_folder(self.state_dir(), agent, cwd, block)
        return block

    def first_prompt(self, agent: str, session: str, cwd: str | None, prompt: str) -> str:
        record = hookstore.load(self.state_dir(), agent, session)
        if record.get("prompted"):
            return ""  # later prompts add nothing
        payload = self.context(cwd, prompt, session) if prompt.strip() else {}
        text = bounded(relevant_part(payload.get("block", ""))) if payload.get("enabled") else ""
        hookstore.save(self.state_dir(), agent, session, {**record, "prompted": True})
        return text
