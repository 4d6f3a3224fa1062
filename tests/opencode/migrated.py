"""A database real OpenCode 2.0.15 migrated from the real 1.18.33 fixture, then used by both.

:func:`build` copies the 1.18.33 fixture into a fake home and drives the real binaries
with a scripted model:

1. OpenCode 2 runs native sessions there (its first start copies every 1.x session into
   ``session_v2``/``session_message``): shell, read, edit, write, a failed read, a
   subagent, a text file attached with ``--file``, and a compaction through
   ``opencode serve``'s API;
2. OpenCode 2 continues a migrated 1.x session (``--session``);
3. OpenCode 1.18.33 writes a new session after the migration (1.x tables only).

What each session must keep is returned as a :class:`Built`.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import OPENCODE_FIXTURE
from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import OpenCodeHome, make_worktree, opencode_binary
from tests.e2e.opencode2 import OpenCode2Home, serve, v2_scenario
from tests.e2e.test_opencode_harness import load_scenario

NATIVE = ("deploy-pnpm", "missing-file", "cjk-deploy", "subagent-search")
CONTINUED = "big-log"  # a migrated session continued in 2.0
CONTINUED_PROMPT = "Raise the deadline to 90s in worker.toml"
CONTINUED_ANSWER = "Decision: WORKER_DEADLINE_S is now 90s in worker.toml, so batch 4001 fits."
ATTACH_PROMPT = "Which port does the staging proxy use? See the attached notes"
ATTACHED = {"notes.txt": "staging proxy listens on PORT=8421 behind haproxy\n"}
ATTACH_ANSWER = "The staging proxy uses PORT=8421 (from notes.txt), behind haproxy."
SUMMARY = """## Objective
- Find the staging proxy port.

## Requirements
- (none)

## Decisions
- Keep haproxy in front of the staging proxy.

## Work State
### Completed
- Read notes.txt: PORT=8421.

### Active
- (none)

### Blocked
- (none)

## Next Move
1. (none)

## Relevant Files
- `notes.txt`: the staging proxy notes

## Important Context
- COMPACTED-FACT-5521: the proxy port came from notes.txt.
"""
V1_PROMPT = "Pin Node to version 22 for this repo"
V1_ANSWER = "Decision: .nvmrc now pins Node 22 so CI and laptops agree."


@dataclass
class Built:
    db: Path
    root: Path  # the projects' folder
    before: Path  # the 1.x database as it was before OpenCode 2 first started on it
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)  # scenario → id, facts, forbidden, family
    continued: str = ""
    v1_after: str = ""


def _move_projects(db: Path, root: Path) -> None:
    """Point the copy's 1.x sessions at folders under `root` (OpenCode 2 opens a continued
    session's folder, and the fixture's `/home/dev/src/...` does not exist here)."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE session SET directory = replace(directory, '/home/dev/src', ?)", (str(root),))
        for (directory,) in conn.execute("SELECT DISTINCT directory FROM session").fetchall():
            Path(directory).mkdir(parents=True, exist_ok=True)
    conn.close()


def _facts(scenario: dict[str, Any]) -> list[str]:
    """The facts of a scenario's first turn (its follow-ups' own facts left out)."""
    later = {f for followup in scenario.get("followups", []) for f in followup.get("facts", [])}
    return [f for f in scenario["facts"] if f not in later]


def build(workdir: Path) -> Built:
    """Build the database under `workdir` (needs both real binaries; see the module doc)."""
    root = (workdir / "src").resolve()
    with ScriptedModel() as model:
        home = OpenCode2Home(workdir / "home", model.url)
        home.db_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(OPENCODE_FIXTURE / "opencode.db", home.db_path)
        _move_projects(home.db_path, root)
        built = Built(home.db_path, root, workdir / "before.db")
        shutil.copy(home.db_path, built.before)
        for name in NATIVE:
            scenario = v2_scenario(load_scenario(name))
            model.add_scenario(scenario, root)
            worktree = make_worktree(root / scenario["project"], scenario["files"])
            sid = home.run(scenario["prompt"], worktree)
            built.sessions[name] = {"session": sid, "facts": _facts(scenario), "forbidden": scenario.get("forbidden", [])}
        built.sessions["attached"] = _attached_and_compacted(home, model, root)
        built.continued = _continue_migrated(home, model, root)
        built.v1_after = _v1_session(workdir, model, root)
    assert not model.errors, model.errors
    conn = sqlite3.connect(built.db)  # our copy: fold the WAL in, so a file copy holds every row
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return built


def _attached_and_compacted(home: OpenCode2Home, model: ScriptedModel, root: Path) -> dict[str, Any]:
    worktree = make_worktree(root / "proxy", ATTACHED)
    model.add_session(ATTACH_PROMPT, [{"text": ATTACH_ANSWER}], "Staging proxy port")
    model.add_session("You MUST use this format for your response", [{"text": SUMMARY}], "Staging proxy port")
    sid = home.run(ATTACH_PROMPT, worktree, extra_args=["--file", str(worktree / "notes.txt")])
    with serve(home, worktree) as server:
        server.post(f"/api/session/{sid}/compact", {})
        _wait_for_compaction(home, sid)
    return {"session": sid, "facts": ["notes.txt", "PORT=8421", "COMPACTED-FACT-5521"], "forbidden": []}


def _wait_for_compaction(home: OpenCode2Home, sid: str, timeout: float = 90.0) -> None:
    """Compaction runs in the server after the API answers: wait for its row and the idle after it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        types = [(m["type"], m["data"].get("status")) for m in home.messages(sid)]
        if ("compaction", "completed") in types and types[-1][0] == "idle":
            return
        time.sleep(0.5)
    raise RuntimeError(f"no completed compaction in {sid} after {timeout:.0f}s: {types}")


def _continue_migrated(home: OpenCode2Home, model: ScriptedModel, root: Path) -> str:
    import json

    sid = json.loads((OPENCODE_FIXTURE / "sessions.json").read_text())[CONTINUED]["session"]
    model.add_session(CONTINUED_PROMPT, [{"text": CONTINUED_ANSWER}])
    home.run(CONTINUED_PROMPT, root / "worker", session=sid)
    return sid


def _v1_session(workdir: Path, model: ScriptedModel, root: Path) -> str:
    binary = opencode_binary()
    if binary is None:
        raise RuntimeError("OpenCode 1.18.33 is not installed: run .ci/install-opencode")
    worktree = make_worktree(root / "node-app", {".nvmrc": "20\n"})
    write = {"name": "write", "args": {"filePath": str(worktree / ".nvmrc"), "content": "22\n"}}
    model.add_session(V1_PROMPT, [{"text": "Pinning Node.", "tools": [write]}, {"text": V1_ANSWER}], "Pin Node 22")
    home = OpenCodeHome(workdir / "home", model.url, binary=binary)
    return home.run(V1_PROMPT, worktree)


def record(built: Built, out: Path) -> None:
    """Write the native 2.0 sessions (rows and schema) of `built` to `out` (the recorded fixture).

    Paths under the build's project folder become `/home/dev/src`, as in the 1.x fixture.
    """
    import json

    conn = sqlite3.connect(f"file:{built.db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    roots = [v["session"] for v in built.sessions.values()]
    marks = ",".join("?" * len(roots))
    sessions = [dict(r) for r in conn.execute(
        f"SELECT * FROM session_v2 WHERE id IN ({marks}) OR parent_id IN ({marks}) ORDER BY time_created", roots + roots
    )]  # fmt: skip
    ids = [s["id"] for s in sessions]
    rows = [dict(r) for r in conn.execute(
        f"SELECT * FROM session_message WHERE session_id IN ({','.join('?' * len(ids))}) ORDER BY session_id, seq", ids
    )]  # fmt: skip
    schema = [r[0] for r in conn.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name IN ('session_v2', 'session_message') AND sql IS NOT NULL "
        "ORDER BY type DESC, name"
    )]  # fmt: skip
    conn.close()
    text = json.dumps({"session_v2": sessions, "session_message": rows}, ensure_ascii=False, indent=1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rows.json").write_text(text.replace(str(built.root), "/home/dev/src") + "\n")
    (out / "schema.sql").write_text(";\n".join(schema) + ";\n")
    meta = {name: {**v, "facts": v["facts"], "forbidden": v["forbidden"]} for name, v in built.sessions.items()}
    (out / "sessions.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":  # python -m tests.opencode.migrated tests/fixtures/opencode-2.0.15
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        record(build(Path(tmp)), Path(sys.argv[1]))
