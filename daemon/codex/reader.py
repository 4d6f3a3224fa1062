"""Codex CLI's rollouts as a session source, read-only (facts: CODEX.md).

`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl` is one thread; a resumed
thread appends to its file, so it keeps its one note. A subagent (spawn_agent) has its own
rollout whose `session_meta` names its parent: it is a child session, so it never gets a
note of its own and a change to it makes its parent looked at again. Archived rollouts
(`archived_sessions/`) are read the same way. Titles come from `state_5.sqlite` when
Codex indexed the thread (`daemon.codex.threads`).

Text lives in `response_item` records (0.169 writes no `user_message` events). Kept: the
user's messages (not the harness's: `formats.tsv`), assistant text, tool calls with their
outputs. Every developer-role message is dropped (the base prompt, skills, and hook
context, where memoryd's own injection is stored).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from daemon.agentformats import Formats, build_rows, iso_ms, session_info, title_of, user_part
from daemon.codex.threads import ThreadTitles
from daemon.jsonlfiles import JsonlSource, SessionFile, Stat
from daemon.source import SessionInfo, SessionRows

AGENT = "codex"
FORMATS = Formats(Path(__file__).with_name("formats.tsv"))
FOLDERS = ("sessions", "archived_sessions")
TURN_EVENTS = {"task_started": False, "turn_started": False, "task_complete": True, "turn_complete": True}


def keep(record: dict) -> dict | None:
    """What a rollout line holds for capture (None: nothing)."""
    kind, payload = record.get("type"), record.get("payload")
    base = {"ts": iso_ms(record.get("timestamp")), "k": "time"}
    if not isinstance(payload, dict):
        return base if base["ts"] else None
    if kind == "session_meta":
        spawn = payload.get("source", {}).get("subagent", {}) if isinstance(payload.get("source"), dict) else {}
        spawn = spawn.get("thread_spawn", {}) if isinstance(spawn, dict) else {}
        parent = payload.get("parent_thread_id") or (spawn.get("parent_thread_id") if isinstance(spawn, dict) else None)
        return {**base, "k": "meta", "cwd": payload.get("cwd") or "", "parent": parent,
                "ts": iso_ms(payload.get("timestamp")) or base["ts"]}  # fmt: skip
    if kind == "event_msg" and payload.get("type") in TURN_EVENTS:
        return {**base, "k": "turn", "done": TURN_EVENTS[payload["type"]]}
    if kind == "response_item":
        return _item(payload, base)
    return base if base["ts"] else None


def _item(payload: dict, base: dict) -> dict:
    ptype = payload.get("type")
    if ptype == "message":
        return _message(payload, base)
    if ptype in ("function_call", "custom_tool_call"):
        name, space = str(payload.get("name", "?")), payload.get("namespace")
        if isinstance(space, str) and space.startswith("mcp__"):
            name = f"{space}__{name}"
        raw = payload.get("arguments", payload.get("input", ""))
        try:
            arguments = json.loads(raw) if isinstance(raw, str) and raw.lstrip().startswith("{") else raw
        except ValueError:
            arguments = raw
        return {**base, "k": "call", "id": payload.get("call_id"), "name": name, "args": arguments}
    if ptype in ("function_call_output", "custom_tool_call_output"):
        return {**base, "k": "output", "id": payload.get("call_id"), "output": payload.get("output")}
    if ptype == "reasoning":
        return {**base, "k": "reasoning"}
    return base


def _message(payload: dict, base: dict) -> dict:
    role = payload.get("role")
    blocks = payload.get("content") if isinstance(payload.get("content"), list) else []
    text = "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("text"))
    if role == "assistant" and text.strip():
        return {**base, "k": "text", "text": text}
    if role != "user" or not text.strip():
        return base  # developer: base instructions, skills, hook context (memoryd's own)
    action = FORMATS.echo(text)
    if action == "drop":
        return base
    if action == "mention":
        return {**base, "k": "mention", "text": text}
    return {**base, "k": "prompt", "text": FORMATS.strip(text)}


def thread_id(path: Path) -> str:
    """The thread id a rollout's name ends with (`rollout-<time>-<uuid>.jsonl`)."""
    return path.stem[-36:]


class CodexReader(JsonlSource):
    """Every rollout under `$CODEX_HOME` (`path`): a `SessionSource`."""

    agent = AGENT
    record_keeper = staticmethod(keep)
    version_pattern = re.compile(rb'"cli_version":"([^"]+)"')
    version_at_end = False

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.titles = ThreadTitles(path)

    def listing(self) -> dict[Path, SessionFile]:
        files: dict[Path, SessionFile] = {}
        for folder in FOLDERS:
            root = self.path / folder
            if root.is_dir():
                files.update({p: SessionFile(thread_id(p)) for p in root.rglob("rollout-*.jsonl")})
        return files

    def info_of(self, path: Path, session_id: str, records: list[Any], stat: Stat) -> SessionInfo | None:
        meta = next((r for r in records if r["k"] == "meta"), None)
        prompts = [r["text"] for r in records if r["k"] == "prompt"]
        if meta is None or not prompts:
            return None  # not a thread's rollout, or nothing said in it yet
        times = [r["ts"] for r in records if r["ts"]]
        turns = [r["done"] for r in records if r["k"] == "turn"]
        talk = [r for r in records if r["k"] in ("prompt", "text", "call")]
        title = self.titles.get(session_id) or title_of(prompts[0])
        ended = bool(turns and turns[-1])
        return session_info(AGENT, session_id, title, meta["cwd"], times, stat[3] // 1_000_000, len(talk), ended,
                            meta["parent"] or None)  # fmt: skip

    def rows_of(self, info: SessionInfo, records: list[Any]) -> SessionRows:
        outputs = {r["id"]: r["output"] for r in records if r["k"] == "output"}
        parts = []
        for n, r in enumerate(records):
            when = r["ts"] or 0
            if (user := user_part(r, n)) is not None:
                parts.append(user)
            elif r["k"] == "text":
                parts.append((f"a{n}", "assistant", when, {"type": "text", "text": r["text"]}))
            elif r["k"] == "call":
                output = outputs.get(r["id"], "")
                parts.append((f"a{n}", "assistant", when, FORMATS.tool_part(r["name"], r["args"], output, False)))
            elif r["k"] == "reasoning":
                parts.append((f"a{n}", "assistant", when, {"type": "reasoning", "text": ""}))
        return build_rows(info, parts)

