"""Small synthetic corpora in real SQLite databases shaped like OpenCode 1.18's.

Each corpus is a folder with `opencode.db` (the fixture's schema, its sessions removed,
new ones written the way OpenCode writes them) and `sessions.json` (scenario → session
id, project, the facts a note must keep, junk or not), the layout bench/bench_notes.py
and the tests read. Sessions are scripted as turns: a user request, then assistant steps
of text and tool calls.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from tests.capture.helpers import add_message

FIXTURE_DB = Path(__file__).resolve().parent.parent / "fixtures" / "opencode-1.18.33" / "opencode.db"
T0 = 1_790_000_000_000  # ms: 2026-09, well before the tests' clock
PROJECT_ID = "global"


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool(name: str, args: dict, output: str = "", status: str = "completed", error: str = "", **state) -> dict:
    body = {"status": status, "input": args, "output": output, **state}
    if status == "error":
        body = {"status": "error", "input": args, "error": error}
    return {"type": "tool", "tool": name, "callID": f"call_{name}", "state": body}


def patch(*files: str) -> dict:
    return {"type": "patch", "hash": "0" * 40, "files": list(files)}


@dataclass
class Scenario:
    """One session: a title, a project folder, turns, and the facts its note must keep."""

    name: str
    title: str
    project: str
    turns: list[tuple[str, list[list[dict]]]]  # (request, assistant messages: each a list of parts)
    facts: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # strings a good note leaves out
    # Fragments of claims the session later withdraws: never an outcome, cause or fix.
    superseded: list[str] = field(default_factory=list)
    children: list[Scenario] = field(default_factory=list)
    junk: bool = False
    # A labelled set's other fields (outcome, final_fix, cause, expected_failures, …), passed on as they are.
    labels: dict = field(default_factory=dict)


def empty_db(path: Path) -> Path:
    """A copy of the fixture database with every session removed: the real schema, no rows."""
    shutil.copy(FIXTURE_DB, path)
    conn = sqlite3.connect(path)
    with conn:
        for table in ("part", "message", "session"):
            conn.execute(f"DELETE FROM {table}")
    conn.execute("VACUUM")
    conn.close()
    return path


def add_session(db: Path, sid: str, title: str, directory: str, at_ms: int, parent_id: str | None = None) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created,"
            " time_updated) VALUES (?, ?, ?, ?, ?, ?, '1.18.33', ?, ?)",
            (sid, PROJECT_ID, parent_id, sid[-8:].lower(), directory, title, at_ms, at_ms),
        )
    conn.close()


def write_scenario(db: Path, scenario: Scenario, sid: str, at_ms: int, parent_id: str | None = None) -> int:
    """Write one scenario's session (and its subagent sessions); return the next free time."""
    add_session(db, sid, scenario.title, scenario.project, at_ms, parent_id)
    clock = at_ms
    for number, (request, replies) in enumerate(scenario.turns):
        clock += 1000
        add_message(db, sid, f"msg_{sid}_{number}_u", "user", [(f"prt_{sid}_{number}_u", text(request))], clock)
        for step, parts in enumerate(replies):
            clock += 1000
            rows = [(f"prt_{sid}_{number}_{step}_{i:03d}", part) for i, part in enumerate(parts)]
            add_message(db, sid, f"msg_{sid}_{number}_{step}_a", "assistant", rows, clock)
    for number, child in enumerate(scenario.children):
        clock = write_scenario(db, child, f"{sid}c{number}", clock + 1000, parent_id=sid)
    return clock


def build_corpus(folder: Path, name: str, scenarios: list[Scenario]) -> Path:
    """Write `folder/name/{opencode.db,sessions.json}` for these scenarios; return the folder."""
    out = folder / name
    out.mkdir(parents=True, exist_ok=True)
    db = empty_db(out / "opencode.db")
    clock = T0
    sessions: dict[str, dict] = {}
    for number, scenario in enumerate(scenarios):
        sid = f"ses_{name.rsplit('-', 1)[-1]}{number:03d}synthetic"
        clock = write_scenario(db, scenario, sid, clock + 60_000)
        sessions[scenario.name] = {
            "session": sid,
            "children": [f"{sid}c{i}" for i in range(len(scenario.children))],
            "project": scenario.project,
            "facts": scenario.facts,
            "absent": scenario.absent,
            "superseded": scenario.superseded,
            "forbidden": [],
            "junk": scenario.junk,
            **scenario.labels,
        }
    (out / "sessions.json").write_text(json.dumps(sessions, ensure_ascii=False, indent=1))
    return out


def multiturn_corpora() -> dict[str, list[Scenario]]:
    """The longer multi-turn sessions (superseded attempts, blocked endings, long tool logs), by corpus."""
    from tests.capture import corpus_multiturn_cjk as cjk
    from tests.capture import corpus_multiturn_en as en
    from tests.capture import corpus_multiturn_heldout as heldout
    from tests.capture import corpus_multiturn_probe as probe
    from tests.capture import corpus_multiturn_replies as replies

    return {"multiturn-en": en.ENGLISH, "multiturn-zh": cjk.CHINESE, "multiturn-ja": cjk.JAPANESE,
            "multiturn-ko": cjk.KOREAN, "multiturn-probe": probe.PROBES, "multiturn-heldout": heldout.HELDOUT,
            "multiturn-replies": replies.REPLIES}


def build_all(folder: Path, multiturn: bool = False) -> list[Path]:
    """Every synthetic corpus (or only the multi-turn ones), built under `folder`."""
    from tests.capture.corpus_scenarios import CORPORA

    chosen = multiturn_corpora() if multiturn else CORPORA
    return [build_corpus(folder, name, scenarios) for name, scenarios in chosen.items()]
