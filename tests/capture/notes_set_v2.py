"""A labelled note-quality set (tests/capture/notes_set.py) as the database OpenCode 2.0.15 writes.

The schema is the recorded one (tests/fixtures/opencode-2.0.15/schema.sql); each session is a
`session_v2` row and its `session_message` rows in `seq` order: the user's prompt stored as
`opencode run "…"` stores it (a JSON string literal), one assistant row per model step with its
text and tool calls (`shell` for bash, the result in `state.content`, the exit status in
`state.metadata.exit`), an `idle` row at the end of each turn.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.capture.corpora import T0, Scenario

SCHEMA = Path(__file__).resolve().parent.parent / "fixtures" / "opencode-2.0.15" / "schema.sql"
_V2_TOOLS = {"bash": "shell", "task": "subagent"}


def _tool(part: dict, call: str) -> dict:
    state = part["state"]
    item = {"type": "tool", "id": call, "name": _V2_TOOLS.get(part["tool"], part["tool"]), "executed": True,
            "state": {"status": state["status"], "input": state.get("input", {})}}
    if state["status"] == "error":
        item["state"]["error"] = {"type": "tool.execution", "message": state.get("error", "")}
    else:
        item["state"]["content"] = [{"type": "text", "text": state.get("output", "")}]
        metadata = {k: v for k, v in state.get("metadata", {}).items() if k != "output"}
        item["state"]["metadata"] = {"status": "completed", "truncated": False, **metadata}
    return item


def _content(parts: list[dict], sid: str, step: str) -> list[dict]:
    out = []
    for n, part in enumerate(parts):
        if part["type"] == "text":
            out.append({"type": "text", "text": part["text"]})
        elif part["type"] == "tool":
            out.append(_tool(part, f"call_{sid}_{step}_{n}"))
    return out


def write_v2_corpus(folder: Path, name: str, scenarios: list[Scenario]) -> Path:
    """Write `folder/name/{opencode.db,sessions.json}` as OpenCode 2 would hold these scenarios."""
    out = folder / name
    out.mkdir(parents=True, exist_ok=True)
    db = out / "opencode.db"
    conn = sqlite3.connect(db)
    sessions: dict[str, dict] = {}
    with conn:
        conn.executescript(SCHEMA.read_text())
        clock = T0
        for number, scenario in enumerate(scenarios):
            sid = f"ses_{name.rsplit('-', 1)[-1]}{number:03d}v2synthetic"
            clock += 60_000
            rows: list[tuple[str, str, int, dict]] = []
            for turn, (request, replies) in enumerate(scenario.turns):
                clock += 1000
                rows.append((f"msg_{sid}_{turn}_u", "user", clock, {"time": {"created": clock}, "text": json.dumps(request),
                                                                    "files": []}))
                for step, parts in enumerate(replies):
                    clock += 1000
                    rows.append((f"msg_{sid}_{turn}_{step}_a", "assistant", clock,
                                 {"time": {"created": clock, "completed": clock}, "agent": "build",
                                  "content": _content(parts, sid, f"{turn}_{step}"), "finish": "stop"}))
                clock += 10
                rows.append((f"msg_{sid}_{turn}_idle", "idle", clock, {"time": {"created": clock}, "outcome": "succeeded"}))
            conn.execute(
                "INSERT INTO session_v2 (id, project_id, slug, directory, path, title, version, time_created, time_updated,"
                " time_idle, idle_outcome, resume_attempts) VALUES (?, 'global', ?, ?, '', ?, '2.0.15', ?, ?, ?, 'succeeded', 0)",
                (sid, sid[-8:].lower(), scenario.project, scenario.title, clock - 60_000, clock, clock))
            for seq, (row_id, kind, at, data) in enumerate(rows, start=1):
                conn.execute("INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?)", (row_id, sid, kind, seq, at, at, json.dumps(data)))
            sessions[scenario.name] = {"session": sid, "children": [], "project": scenario.project,
                                       "facts": scenario.facts, "absent": scenario.absent,
                                       "superseded": scenario.superseded, "forbidden": [], "junk": scenario.junk,
                                       **scenario.labels}
    conn.close()
    (out / "sessions.json").write_text(json.dumps(sessions, ensure_ascii=False, indent=1))
    return out
