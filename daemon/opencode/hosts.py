"""Which OpenCode is on this machine, and whether it loaded memoryd's plugin.

`find_hosts` runs each `opencode` (and 2.x's legacy name `opencode2`) on PATH with
`--version`. `plugin_load` reads OpenCode's own log (`<data>/opencode/log/`): 2.x logs
`loading plugin … memoryd.js` and, when it skips one, `failed to load plugin …
PluginModule.LoadError …`; 1.x logs only the failure (`failed to load plugin … error=…`).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NAMES = ("opencode", "opencode2")
VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)")  # "1.18.33", "opencode v2.0.15"
LOG_TAIL = 4 << 20  # bytes of each log file read: the newest lines are at the end
LOG_FILES = 3  # 1.x starts a new log file per run


@dataclass(frozen=True)
class Host:
    """One OpenCode executable and the version it reports (None: it did not say)."""

    path: Path
    version: str | None

    @property
    def major(self) -> int | None:
        return int(self.version.split(".")[0]) if self.version else None


def find_hosts(env: Mapping[str, str] | None = None, timeout: float = 5.0) -> list[Host]:
    """The OpenCode executables on PATH, each once (symlinks resolved), with versions."""
    env = os.environ if env is None else env
    seen: dict[Path, Host] = {}
    for folder in (env.get("PATH") or os.defpath).split(os.pathsep):
        for name in NAMES:
            path = Path(folder or ".") / name
            if not (path.is_file() and os.access(path, os.X_OK)):
                continue
            real = path.resolve()
            if real not in seen:
                seen[real] = Host(path, _version(path, timeout))
    return list(seen.values())


def _version(path: Path, timeout: float) -> str | None:
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = VERSION.search(done.stdout + done.stderr)
    return ".".join(match.groups()) if match else None


def log_dir(env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's log folder: `$XDG_DATA_HOME/opencode/log`."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "opencode" / "log"


@dataclass(frozen=True)
class PluginLoad:
    """What OpenCode's log last said about the plugin file."""

    state: str  # "loaded", "failed" or "unknown" (no line names it)
    detail: str  # the log's reason for a failure, or its timestamp
    log: Path | None


def plugin_load(folder: Path, plugin: Path) -> PluginLoad:
    """The newest log line that names `plugin`: loaded (2.x says so), or failed and why."""
    logs = sorted(folder.glob("*.log"), key=lambda p: p.stat().st_mtime, reverse=True)[:LOG_FILES]
    for log in logs:
        for line in reversed(_tail(log).splitlines()):
            if plugin.name not in line or "plugin" not in line:
                continue
            stamp = _field(line, "timestamp")
            if "failed to load plugin" in line:
                reason = _field(line, "cause") or _field(line, "error") or line[-300:]
                return PluginLoad("failed", f"{reason} ({stamp})" if stamp else reason, log)
            if "loading plugin" in line:
                return PluginLoad("loaded", stamp, log)
    return PluginLoad("unknown", "", logs[0] if logs else None)


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - LOG_TAIL))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _field(line: str, name: str) -> str:
    """A `name=value` or `name="quoted value"` field of an OpenCode log line."""
    match = re.search(rf'\b{name}=("(?:[^"\\]|\\.)*"|\S+)', line)
    if not match:
        return ""
    value = match.group(1)
    return value[1:-1].replace('\\"', '"').replace("\\n", " ") if value.startswith('"') else value
