"""memoryd's hooks in an agent's hooks file: Claude Code's settings.json and Codex's
hooks.json share one shape, `{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command",
"command", "timeout"}]}]}}`.

memoryd's group is added to each event it needs, after the user's own (Codex trusts a hook
by its place: theirs keep theirs), and everything else in the file keeps its bytes.
`remove` undoes `add` byte for byte on a file not edited since; on one edited since, it
still takes out only memoryd's groups. A group is memoryd's when one of its commands runs
`daemon.hook` (what `hook_command` writes).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daemon import jsonc
from daemon.installplan import Plan

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
MARK = "daemon.hook"
TIMEOUT_S = 3  # the command gives up after 1.8 s itself; Codex clamps SessionEnd hooks to 3 s


def hook_command(python: str, agent: str, config: str | None = None) -> str:
    """The shell command a hook runs: this memoryd's interpreter, the tiny hook entry point."""
    words = [python, "-m", MARK, agent] + (["--config", config] if config else [])
    return shlex.join(words)


def group(command: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_S}]}


def is_ours(entry: object) -> bool:
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    return isinstance(hooks, list) and any(isinstance(h, dict) and MARK in str(h.get("command", "")).split() for h in hooks)


def _hooks(text: str | None) -> dict[str, Any]:
    data = jsonc.loads(text) if text and text.strip() else {}
    if not isinstance(data, dict):
        raise jsonc.JsoncError("the top level is not an object")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise jsonc.JsoncError("'hooks' is not an object")
    return hooks


def installed(text: str | None) -> dict[str, dict[str, Any]]:
    """memoryd's group per event found in the file."""
    found = {}
    for event, entries in _hooks(text).items():
        for entry in entries if isinstance(entries, list) else []:
            if is_ours(entry):
                found[event] = entry
    return found


def add(text: str | None, groups: Mapping[str, dict[str, Any]]) -> str:
    """The file's text with memoryd's `groups` added (None or blank: a new file)."""
    wanted = {event: [groups[event]] for event in EVENTS if event in groups}
    if not text or not text.strip():
        return json.dumps({"hooks": wanted}, indent=2) + "\n"
    data = jsonc.loads(text)
    if "hooks" not in data:
        return jsonc.set_member(text, ("hooks",), wanted)
    hooks = _hooks(text)
    for event in EVENTS:
        if event not in groups:
            continue
        if isinstance(hooks.get(event), list):
            text = jsonc.append_element(text, ("hooks", event), groups[event], indent="  ")
        else:
            text = jsonc.set_member(text, ("hooks", event), [groups[event]])
    return text


def remove(text: str) -> str:
    """The file's text without memoryd's groups (as `add` found it, when it was not edited since)."""
    hooks = _hooks(text)
    ours_only = [e for e, entries in hooks.items() if isinstance(entries, list) and entries and all(map(is_ours, entries))]
    made_whole = [e for e in EVENTS if e in ours_only] == ours_only and len(ours_only) > 1  # in order: one member
    if ours_only and len(ours_only) == len(hooks) and made_whole:
        return jsonc.remove_first_member(text, (), "hooks")  # add made the whole member (events in order)
    for event in reversed(EVENTS):  # set_member put each new event first: undone last-first
        if event in ours_only:
            text = jsonc.remove_first_member(text, ("hooks",), event)
    for event, entries in _hooks(text).items():
        while isinstance(entries, list) and entries and is_ours(entries[-1]):
            text = jsonc.remove_last_element(text, ("hooks", event))
            entries = _hooks(text)[event]
        if isinstance(entries, list) and any(map(is_ours, entries)):
            raise jsonc.JsoncError(f"memoryd's hook under {event} is not the last: remove it by hand")
    return text


EMPTY = "{\n}\n"  # what `remove` leaves of a file `add` created: the file goes


def install_text(text: str | None, command: str) -> str | None:
    """The hooks file's new text with memoryd's hooks running `command`; None when they are there already."""
    found = installed(text)
    if set(found) == set(EVENTS) and all(set(commands_of(g)) == {command} for g in found.values()):
        return None
    base = remove(text) if found and text else text
    return add(None if base == EMPTY else base, {event: group(command) for event in EVENTS})


def uninstall_text(text: str | None) -> str | None:
    """The hooks file's text without memoryd's hooks: "" when the file should go (memoryd
    made it), None when there is nothing of memoryd's in it."""
    if text is None or not installed(text):
        return None
    rest = remove(text)
    return "" if rest == EMPTY else rest


def commands_of(entry: dict[str, Any]) -> list[str]:
    return [str(h.get("command", "")) for h in entry.get("hooks", []) if isinstance(h, dict)]


def plan_install(plan: Plan, path: Path, command: str, label: str) -> bool:
    """Plan memoryd's hooks into the hooks file at `path`; False when it cannot be edited."""
    try:
        text = install_text(path.read_text(encoding="utf-8") if path.exists() else None, command)
    except jsonc.JsoncError as exc:
        plan.manual.append(f"{path}: not rewritten ({exc}); add memoryd's hooks by hand: {command}")
        return False
    if text is None:
        plan.unchanged.append(f"{label} hooks in {path}")
    else:
        plan.writes[path] = text
    return True


def plan_uninstall(plan: Plan, path: Path) -> None:
    """Plan memoryd's hooks out of the hooks file at `path` (the file goes if memoryd made it)."""
    try:
        text = uninstall_text(path.read_text(encoding="utf-8") if path.exists() else None)
    except jsonc.JsoncError as exc:
        plan.manual.append(f"{path}: not rewritten ({exc}); remove memoryd's hooks by hand")
        return
    if text == "":
        plan.removals.append(path)
    elif text is not None:
        plan.writes[path] = text
