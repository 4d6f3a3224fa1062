"""A labelled note-quality set (one JSON file, the format of the held-out writer) as Scenarios.

The JSON's tool parts become the parts OpenCode 1.18 writes: a bash call's exit status in
`state.metadata.exit` beside its output, a completed state for every call that ran, an
error state for one that failed to run (`"status": "error"`). The set's labels (outcome,
final_fix, cause, superseded, expected_failures, not_failures, next_steps) go into the
corpus's sessions.json for the bench to score against.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.capture.corpora import Scenario, text

_LABELS = ("lang", "outcome", "final_fix", "cause", "expected_failures", "not_failures", "next_steps")


class SetError(ValueError):
    """A set file that is not in the format: says which file and where."""


def _part(raw: dict, where: str) -> dict:
    kind = raw.get("type")
    if kind == "text":
        return text(str(raw.get("text", "")))
    if kind != "tool":
        raise SetError(f"{where}: part type {kind!r} is neither text nor tool")
    name = str(raw.get("tool") or "")
    if not name:
        raise SetError(f"{where}: tool part without a tool name")
    args = raw.get("input") if isinstance(raw.get("input"), dict) else {}
    if raw.get("status") == "error":
        state = {"status": "error", "input": args, "error": str(raw.get("error") or raw.get("output") or "")}
    else:
        output = str(raw.get("output", ""))
        state = {"status": "completed", "input": args, "output": output, "metadata": {"output": output}}
        if isinstance(raw.get("exit"), int):
            state["metadata"]["exit"] = raw["exit"]
        state["title"] = str(args.get("command") or args.get("filePath") or name)
    return {"type": "tool", "tool": name, "callID": f"call_{name}", "state": state}


def scenario_of(raw: dict, where: str) -> Scenario:
    """One labelled scenario as a Scenario (its labels kept for sessions.json)."""
    try:
        turns = [
            (str(turn["user"]), [[_part(p, f"{where} turn {n} message {m}") for p in message]
                                  for m, message in enumerate(turn["assistant"])])
            for n, turn in enumerate(raw["turns"])
        ]
        return Scenario(
            str(raw["name"]), str(raw.get("title", "")), str(raw["project"]), turns,
            facts=list(raw.get("facts", [])), superseded=list(raw.get("superseded", [])),
            labels={k: raw[k] for k in _LABELS if k in raw},
        )
    except (KeyError, TypeError) as exc:
        raise SetError(f"{where}: missing or malformed field {exc}") from exc


def load_set(path: Path) -> tuple[str, list[Scenario]]:
    """(the set's name, its scenarios) from one JSON file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SetError(f"{path}: not a readable JSON set ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise SetError(f"{path}: no `scenarios` list")
    name = str(data.get("name") or path.stem)
    return name, [scenario_of(s, f"{path.name} scenario {i}") for i, s in enumerate(data["scenarios"])]


def set_files(where: Path) -> list[Path]:
    """The JSON set files of a folder (sorted), or the one file named."""
    return sorted(where.glob("*.json")) if where.is_dir() else [where]
