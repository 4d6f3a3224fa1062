"""Install memoryd into OpenCode: the plugin file and the `memoryd` MCP server entry.

One install serves OpenCode 1.x and 2.x: the plugin file (one default export for both)
goes to the global `plugins/` folder, which both load; the MCP entry, in the 1.x shape
(`"mcp": {"memoryd": {"type": "local", …}}`, which 2.x translates), goes to the global
`opencode.json` or `opencode.jsonc`, the only names 2.x reads (a 1.x-only `config.json` is
left alone; a new `opencode.json` is made beside it). An `opencode.jsonc` keeps its
comments: only the bytes of memoryd's member change. A config that does not parse is never
rewritten: the snippet to add is printed instead. Everything is planned first
(`plan_install`, `plan_uninstall`), so `--dry-run` shows exactly what `apply` would do.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from daemon import __version__
from daemon.files import atomic_write_text
from daemon import jsonc

PLUGIN_NAME = "memoryd.js"
SERVER_NAME = "memoryd"
CONFIG_NAMES = ("opencode.json", "opencode.jsonc")  # the global config names both 1.x and 2.x read
LEGACY_NAMES = ("config.json",)  # read by 1.x only
VERSION_MARK = "// memoryd-plugin-version: "
SCHEMA = "https://opencode.ai/config.json"


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's global config folder: `$XDG_CONFIG_HOME/opencode`."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "opencode"


def _template() -> str:
    return resources.files("daemon.opencode").joinpath("plugin", PLUGIN_NAME).read_text(encoding="utf-8")


def plugin_version() -> str:
    """The package version plus a hash of the plugin's template: any change shows."""
    digest = hashlib.sha256(_template().encode()).hexdigest()[:8]
    return f"{__version__}+{digest}"


def render_plugin(command: Sequence[str], socket: Path) -> str:
    """The plugin file for this memoryd: its command and its daemon's socket filled in."""
    return (
        _template()
        .replace("__MEMORYD_PLUGIN_VERSION__", plugin_version())
        .replace("__MEMORYD_SOCKET__", json.dumps(str(socket)))
        .replace("__MEMORYD_COMMAND__", json.dumps(list(command)))
    )


def installed_version(text: str) -> str | None:
    """The version line of an installed plugin file, or None if memoryd did not write it."""
    for line in text.splitlines()[:5]:
        if line.startswith(VERSION_MARK):
            return line[len(VERSION_MARK) :].strip()
    return None


def mcp_entry(command: Sequence[str]) -> dict[str, Any]:
    return {"type": "local", "command": [*command, "mcp"], "enabled": True}


@dataclass
class ConfigFile:
    """OpenCode's global config as memoryd finds it."""

    path: Path
    exists: bool
    data: dict[str, Any] | None  # None: it does not parse
    problem: str = ""
    text: str = ""  # as written (JSONC is edited in place)
    commented: bool = False  # JSONC with comments or trailing commas: edit the text, never re-dump


def read_config(folder: Path) -> ConfigFile:
    """The global config file memoryd writes to (the first of `CONFIG_NAMES`), parsed."""
    for name in CONFIG_NAMES:
        path = folder / name
        if path.exists():
            return _parse(path)
    return ConfigFile(folder / CONFIG_NAMES[0], False, {"$schema": SCHEMA})


def _parse(path: Path) -> ConfigFile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ConfigFile(path, True, None, f"cannot read it: {exc}")
    commented = False
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        try:
            data, commented = jsonc.loads(text), True
        except jsonc.JsoncError:
            return ConfigFile(path, True, None, f"it is not valid JSON or JSONC ({exc})", text)
    if not isinstance(data, dict):
        return ConfigFile(path, True, None, "its top level is not an object", text)
    return ConfigFile(path, True, data, "", text, commented)


def legacy_configs(folder: Path) -> list[Path]:
    """Global config files only OpenCode 1.x reads (2.x reads `opencode.json(c)` only)."""
    return [folder / name for name in LEGACY_NAMES if (folder / name).exists()]


def _with_entry(config: ConfigFile, entry: dict[str, Any]) -> str:
    """The config's new text with memoryd's MCP entry set (comments kept in JSONC)."""
    if not config.commented:
        merged = dict(config.data or {})
        servers = merged.get("mcp")
        merged["mcp"] = {**(servers if isinstance(servers, dict) else {}), SERVER_NAME: entry}
        return _dump(merged)
    text = jsonc.set_member(config.text, ("mcp", SERVER_NAME), entry)
    if (jsonc.loads(text).get("mcp") or {}).get(SERVER_NAME) != entry:  # never write what we cannot read back
        raise jsonc.JsoncError("the edited file does not read back")
    return text


@dataclass
class Plan:
    """What install or uninstall would do; `apply()` does it."""

    writes: dict[Path, str] = field(default_factory=dict)  # path → new content
    removals: list[Path] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)  # what the user must do by hand

    def describe(self) -> list[str]:
        lines = [f"write {path}" for path in self.writes]
        lines += [f"remove {path}" for path in self.removals]
        lines += [f"unchanged: {what}" for what in self.unchanged]
        return lines + self.manual

    def apply(self) -> None:
        for path, text in self.writes.items():
            mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
            atomic_write_text(path, text, mode=mode)
        for path in self.removals:
            path.unlink(missing_ok=True)


def _dump(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _snippet(command: Sequence[str]) -> str:
    return json.dumps({"mcp": {SERVER_NAME: mcp_entry(command)}}, indent=2)


def plan_install(folder: Path, command: Sequence[str], socket: Path) -> Plan:
    """Plan writing the plugin and merging the MCP entry into OpenCode's config."""
    plan = Plan()
    plugin = folder / "plugins" / PLUGIN_NAME
    text = render_plugin(command, socket)
    current = plugin.read_text(encoding="utf-8") if plugin.exists() else None
    if current is not None and installed_version(current) is None:
        plan.manual.append(f"{plugin} exists and was not written by memoryd: left alone; move it away and install again")
    elif current == text:
        plan.unchanged.append(f"plugin {plugin}")
    else:
        plan.writes[plugin] = text
    config = read_config(folder)
    entry = mcp_entry(command)

    def manual(problem: str) -> str:
        return f"{config.path}: not rewritten ({problem}). Add this MCP server to it by hand:\n{_snippet(command)}"

    if config.data is None:
        plan.manual.append(manual(config.problem))
    elif (config.data.get("mcp") or {}).get(SERVER_NAME) == entry:
        plan.unchanged.append(f"MCP server '{SERVER_NAME}' in {config.path}")
    else:
        try:
            plan.writes[config.path] = _with_entry(config, entry)
        except jsonc.JsoncError as exc:
            plan.manual.append(manual(f"cannot edit its JSONC safely: {exc}"))
    return plan


def plan_uninstall(folder: Path) -> Plan:
    """Plan removing the plugin (only memoryd's) and the MCP entry."""
    plan = Plan()
    plugin = folder / "plugins" / PLUGIN_NAME
    if plugin.exists():
        if installed_version(plugin.read_text(encoding="utf-8")) is None:
            plan.manual.append(f"{plugin} was not written by memoryd: left alone")
        else:
            plan.removals.append(plugin)
    config = read_config(folder)
    servers = (config.data or {}).get("mcp")
    if config.data is None and config.exists:
        plan.manual.append(f"{config.path}: not rewritten ({config.problem}); remove mcp.{SERVER_NAME} by hand if present")
    elif config.commented and isinstance(servers, dict) and SERVER_NAME in servers:
        plan.manual.append(f"{config.path} has comments: remove mcp.{SERVER_NAME} from it by hand")
    elif isinstance(servers, dict) and SERVER_NAME in servers:
        merged = dict(config.data or {})
        rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
        if rest:
            merged["mcp"] = rest
        else:
            del merged["mcp"]
        plan.writes[config.path] = _dump(merged)
    if not plan.removals and not plan.writes and not plan.manual:
        plan.unchanged.append("memoryd is not installed in OpenCode")
    return plan


@dataclass(frozen=True)
class InstallStatus:
    plugin: Path
    plugin_version: str | None  # None: not installed (or not memoryd's)
    current_version: str
    mcp_registered: bool
    config: Path

    @property
    def plugin_installed(self) -> bool:
        return self.plugin_version is not None

    @property
    def plugin_outdated(self) -> bool:
        return self.plugin_installed and self.plugin_version != self.current_version


def install_status(folder: Path) -> InstallStatus:
    plugin = folder / "plugins" / PLUGIN_NAME
    try:
        version = installed_version(plugin.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        version = None
    config = read_config(folder)
    registered = SERVER_NAME in ((config.data or {}).get("mcp") or {})
    return InstallStatus(plugin, version, plugin_version(), registered, config.path)


def describe_install(state: InstallStatus) -> list[str]:
    """Lines for `opencode status` and `memoryd status`, each saying what to do."""
    if not state.plugin_installed:
        plugin = f"plugin: not installed ({state.plugin}); run `memoryd opencode install`"
    elif state.plugin_outdated:
        plugin = (
            f"plugin: {state.plugin_version} is older than this memoryd ({state.current_version}); "
            "run `memoryd opencode install`"
        )
    else:
        plugin = f"plugin: installed, current ({state.plugin})"
    mcp = (
        f"MCP server: registered in {state.config}"
        if state.mcp_registered
        else f"MCP server: not in {state.config}; run `memoryd opencode install`"
    )
    return [plugin, mcp]
