"""memoryd in Claude Code: its hooks in `settings.json` and its MCP server in `.claude.json`.

Both live in `${CLAUDE_CONFIG_DIR:-~/.claude}` (`.claude.json` in the home folder when
CLAUDE_CONFIG_DIR is not set), and both are edited in place: every byte of the user's
own settings stays, and an uninstall gives back the file as the install found it
(`daemon.hooksettings`, `daemon.jsonc`). Claude Code needs no trust step for hooks in
user settings (CLAUDECODE.md).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from daemon import hooksettings, jsonc
from daemon.agentformats import OWN_SERVER
from daemon.installplan import Plan

AGENT = "claude"


def config_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME") or Path.home()) / ".claude")


def settings_file(env: Mapping[str, str]) -> Path:
    return config_dir(env) / "settings.json"


def mcp_file(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps user-scope MCP servers (`claude mcp add --scope user`)."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    return Path(env.get("HOME") or Path.home()) / ".claude.json"


def found(env: Mapping[str, str]) -> bool:
    return config_dir(env).is_dir() or shutil.which("claude", path=env.get("PATH")) is not None


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def mcp_entry(command: Sequence[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": command[0], "args": list(command[1:])}


def _servers(text: str | None) -> dict[str, Any]:
    data = jsonc.loads(text) if text and text.strip() else {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def plan_install(env: Mapping[str, str], hook_command: str, mcp_command: Sequence[str]) -> Plan:
    plan = Plan()
    hooksettings.plan_install(plan, settings_file(env), hook_command, "Claude Code")
    path, entry = mcp_file(env), mcp_entry(mcp_command)
    try:
        current = _read(path)
        if _servers(current).get(OWN_SERVER) == entry:
            plan.unchanged.append(f"MCP server '{OWN_SERVER}' in {path}")
        elif current is None or not current.strip():
            plan.writes[path] = json.dumps({"mcpServers": {OWN_SERVER: entry}}, indent=2) + "\n"
        else:
            plan.writes[path] = jsonc.set_member(current, ("mcpServers", OWN_SERVER), entry)
    except jsonc.JsoncError as exc:
        plan.manual.append(f"{path}: not rewritten ({exc}); run: claude mcp add --scope user {OWN_SERVER} -- "
                           + " ".join(mcp_command))  # fmt: skip
    return plan


def plan_uninstall(env: Mapping[str, str]) -> Plan:
    plan = Plan()
    hooksettings.plan_uninstall(plan, settings_file(env))
    path = mcp_file(env)
    current = _read(path)
    try:
        servers = _servers(current)
        if OWN_SERVER in servers and current is not None:
            rest = (jsonc.remove_first_member(current, (), "mcpServers") if list(servers) == [OWN_SERVER]
                    else jsonc.remove_first_member(current, ("mcpServers",), OWN_SERVER))  # fmt: skip
            if rest == hooksettings.EMPTY:
                plan.removals.append(path)
            else:
                plan.writes[path] = rest
    except jsonc.JsoncError as exc:
        plan.manual.append(f"{path}: not rewritten ({exc}); run: claude mcp remove --scope user {OWN_SERVER}")
    if not (plan.writes or plan.removals or plan.manual):
        plan.unchanged.append("memoryd is not installed in Claude Code")
    return plan


def install_status(env: Mapping[str, str]) -> dict[str, Any]:
    """Found, and what of memoryd is installed (hooks need no trust in Claude Code)."""
    settings = settings_file(env)
    try:
        events = sorted(hooksettings.installed(_read(settings)))
    except (jsonc.JsoncError, OSError):
        events = []
    try:
        mcp = OWN_SERVER in _servers(_read(mcp_file(env)))
    except (jsonc.JsoncError, OSError):
        mcp = False
    return {"found": found(env), "binary": shutil.which("claude", path=env.get("PATH")), "hooks": events,
            "hooks_trusted": bool(events), "mcp": mcp, "settings": str(settings)}  # fmt: skip
