"""memoryd in Codex: its hooks in `$CODEX_HOME/hooks.json`, their trust and its MCP server
in `config.toml`.

Codex skips an untrusted hook silently, and trust is per content hash (CODEX.md), so the
installer trusts memoryd's hooks through Codex's own `app-server` after every edit of
them, and writes the MCP server with it too (Codex's editor keeps the file's formatting;
deleting the keys again gives back the file as it was). hooks.json is edited in place
(`daemon.hooksettings`): memoryd's group goes after the user's, whose trust keys
(`<file>:<event>:<group>:<hook>`) therefore stay. Without a `codex` binary, the hooks are
written and left for the user to trust (`memoryd status` says so), and the MCP table is
appended to config.toml as text.
"""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from daemon import hooksettings, jsonc
from daemon.agentformats import OWN_SERVER
from daemon.codex.appserver import AppServer, AppServerError, trust_key
from daemon.installplan import Plan

AGENT = "codex"
MCP_KEY = f"mcp_servers.{OWN_SERVER}"


def codex_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("CODEX_HOME") or Path(env.get("HOME") or Path.home()) / ".codex")


def codex_binary(env: Mapping[str, str]) -> str | None:
    return env.get("MEMORYD_CODEX_BIN") or shutil.which("codex", path=env.get("PATH"))


def found(env: Mapping[str, str]) -> bool:
    return codex_home(env).is_dir() or codex_binary(env) is not None


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def mcp_table(command: Sequence[str]) -> dict[str, Any]:
    return {"command": command[0], "args": list(command[1:])}


def _toml(text: str | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError:
        return {}


def _appended(command: Sequence[str]) -> str:
    """The MCP table as text, for a config.toml edited without Codex."""
    quote = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731 - TOML basic strings
    return f"\n[{MCP_KEY}]\ncommand = {quote(command[0])}\nargs = [{', '.join(quote(a) for a in command[1:])}]\n"


def _ours(hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [h for h in hooks if hooksettings.MARK in str(h.get("command", "")).split()]


def _trust_and_register(env: Mapping[str, str], codex: str, table: dict[str, Any] | None) -> None:
    """Trust memoryd's hooks as they are now (and set the MCP table) through Codex itself."""
    with AppServer(codex, env) as server:
        edits: list[tuple[str, Any]] = [
            (trust_key(h["key"]), {"trusted_hash": h["currentHash"]})
            for h in _ours(server.hooks(Path(env.get("HOME") or Path.home())))
            if h.get("trustStatus") != "trusted" and h.get("currentHash")
        ]
        if table is not None:
            edits.append((MCP_KEY, table))
        server.write(edits)


def plan_install(env: Mapping[str, str], hook_command: str, mcp_command: Sequence[str]) -> Plan:
    plan, home = Plan(), codex_home(env)
    hooks_file, config = home / "hooks.json", home / "config.toml"
    codex = codex_binary(env)
    if not hooksettings.plan_install(plan, hooks_file, hook_command, "Codex"):
        return plan
    current = _read(config)
    table = mcp_table(mcp_command)
    existing = _toml(current).get("mcp_servers", {}).get(OWN_SERVER)
    wanted = None if existing == table else table
    if existing is not None and existing != table and codex is None:
        plan.manual.append(f"{config} has another [{MCP_KEY}]: left alone")
        wanted = None
    if existing == table:
        plan.unchanged.append(f"MCP server '{OWN_SERVER}' in {config}")
    if codex is not None:
        plan.steps.append((f"trust memoryd's hooks{' and add its MCP server' if wanted else ''} with {codex} app-server",
                           lambda: _trust_and_register(env, codex, wanted)))  # fmt: skip
    else:
        if wanted is not None and existing is None:
            plan.writes[config] = (current or "") + _appended(mcp_command)
        plan.manual.append("Codex runs hooks only once trusted, and no `codex` is on PATH: open `codex`, review "
                           "memoryd's hooks with /hooks, or install again with codex on PATH")  # fmt: skip
    return plan


def _untrust_and_unregister(env: Mapping[str, str], codex: str, table: bool) -> None:
    with AppServer(codex, env) as server:
        edits: list[tuple[str, Any]] = [(trust_key(h["key"]), None) for h in _ours(server.hooks(Path(env.get("HOME") or Path.home())))
                                        if h.get("trustStatus") == "trusted"]  # fmt: skip
        if table:
            edits.append((MCP_KEY, None))
        server.write(edits)


def plan_uninstall(env: Mapping[str, str], command: Sequence[str] | None = None) -> Plan:
    """Take memoryd's trust and MCP table out (through Codex, before its hooks go: their
    keys are read from it), then its hooks from hooks.json."""
    plan, home = Plan(), codex_home(env)
    hooks_file, config = home / "hooks.json", home / "config.toml"
    codex = codex_binary(env)
    current = _read(config)
    registered = OWN_SERVER in _toml(current).get("mcp_servers", {})
    if codex is not None:
        plan.steps.append((f"untrust memoryd's hooks{' and remove its MCP server' if registered else ''} with {codex} app-server",
                           lambda: _untrust_and_unregister(env, codex, registered)))  # fmt: skip
    elif registered and command is not None and current and _appended(command) in current:
        plan.writes[config] = current.replace(_appended(command), "", 1)
    elif registered:
        plan.manual.append(f"{config}: remove [{MCP_KEY}] and memoryd's [hooks.state] entries by hand (no `codex` on PATH)")
    hooksettings.plan_uninstall(plan, hooks_file)
    plan.steps_first = True  # Codex is asked while memoryd's hooks are still in hooks.json
    if not (plan.writes or plan.removals or plan.steps or plan.manual):
        plan.unchanged.append("memoryd is not installed in Codex")
    return plan


def install_status(env: Mapping[str, str]) -> dict[str, Any]:
    """Found, hooks installed, hooks trusted (asked of Codex when it is on PATH), MCP server."""
    home = codex_home(env)
    try:
        events = sorted(hooksettings.installed(_read(home / "hooks.json")))
    except (jsonc.JsoncError, OSError):
        events = []
    trusted: bool | None = None
    codex = codex_binary(env)
    if events and codex is not None:
        try:
            with AppServer(codex, env) as server:
                ours = _ours(server.hooks(Path(env.get("HOME") or Path.home())))
            trusted = bool(ours) and all(h.get("trustStatus") == "trusted" for h in ours)
        except AppServerError:
            trusted = None
    mcp = OWN_SERVER in _toml(_read(home / "config.toml")).get("mcp_servers", {})
    return {"found": found(env), "binary": codex, "hooks": events, "hooks_trusted": trusted, "mcp": mcp,
            "settings": str(home / "hooks.json")}  # fmt: skip
