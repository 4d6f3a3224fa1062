"""Where memoryd reads and writes, resolved from the environment; and a cache of
validated settings so that quick read-only commands need not import pydantic.

No pydantic here: `memoryd recall` imports this module, not daemon.config.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.config import Settings


@dataclass(frozen=True)
class Paths:
    """Every place memoryd reads or writes, resolved once from the environment."""

    config_file: Path
    opencode_db: Path
    state_dir: Path
    global_root: Path
    opencode_memory_db: Path

    @property
    def state_db(self) -> Path:
        return self.state_dir / "state.db"

    @property
    def index_db(self) -> Path:
        return self.state_dir / "index.db"

    @property
    def transcripts_dir(self) -> Path:
        return self.state_dir / "transcripts"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "memoryd.log"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "memoryd.lock"

    @property
    def socket_file(self) -> Path:
        """Where `memoryd run` answers the OpenCode plugin (context, idle sessions)."""
        return self.state_dir / "memoryd.sock"


@dataclass(frozen=True)
class Config:
    """The validated settings and the paths they resolve to: what most of memoryd needs,
    passed as one value (functions that need only one of the two take only that one)."""

    settings: Settings
    paths: Paths


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> Path:
    value = env.get(name)
    if value:
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / fallback


def default_config_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return _xdg(env, "XDG_CONFIG_HOME", ".config") / "memoryd" / "config.toml"


def resolve_paths(settings: Any, config_file: Path, env: Mapping[str, str] | None = None) -> Paths:
    """Return the paths for these settings, using XDG defaults where a setting is empty."""
    env = os.environ if env is None else env
    data = _xdg(env, "XDG_DATA_HOME", ".local/share")
    config = _xdg(env, "XDG_CONFIG_HOME", ".config")
    state = _xdg(env, "XDG_STATE_HOME", ".local/state")
    db = settings.source.db or env.get("OPENCODE_DB") or str(data / "opencode" / "opencode.db")
    return Paths(
        config_file=config_file,
        opencode_db=Path(db).expanduser(),
        state_dir=state / "memoryd",
        global_root=Path(settings.memory.global_root or config / "opencode" / "memory").expanduser(),
        opencode_memory_db=Path(
            settings.sweep.opencode_memory_db or data / "opencode-memory" / "memory.db"
        ).expanduser(),
    )




# -- the settings cache -------------------------------------------------------------------

CACHE_FILE = "settings.json"
_ENV_KEYS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "OPENCODE_DB")


def state_dir_of(env: Mapping[str, str]) -> Path:
    return _xdg(env, "XDG_STATE_HOME", ".local/state") / "memoryd"


def settings_fingerprint(config_file: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Everything the validated settings depend on: the file's identity, the environment,
    and memoryd's own settings schema (the config module's file)."""

    def stat(path: Path) -> list[int] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return [st.st_mtime_ns, st.st_size, st.st_ino]

    return {
        "config": str(config_file),
        "config_stat": stat(config_file),
        "schema_stat": stat(Path(__file__).with_name("config.py")),
        "env": {k: v for k, v in sorted(env.items()) if k.startswith("MEMORYD_") or k in _ENV_KEYS},
    }


def _namespace(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{k: _namespace(v) for k, v in value.items()})
    return value


def read_cached_settings(config_file: Path, env: Mapping[str, str]) -> Config | None:
    """Return the configuration from the cache if nothing it depends on changed, else None.

    The settings come back as plain attribute namespaces with the validated values.
    """
    try:
        cached = json.loads((state_dir_of(env) / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("fingerprint") != settings_fingerprint(config_file, env):
        return None
    settings = _namespace(cached.get("settings"))
    return Config(settings, resolve_paths(settings, config_file, env))


def write_cached_settings(values: dict[str, Any], config_file: Path, env: Mapping[str, str]) -> None:
    """Remember validated settings for the next quick command (only when they changed)."""
    from daemon.diskfull import DiskFull
    from daemon.files import write_if_changed

    data = {"fingerprint": settings_fingerprint(config_file, env), "settings": values}
    try:
        write_if_changed(state_dir_of(env) / CACHE_FILE, json.dumps(data, sort_keys=True), durable=False)
    except (OSError, DiskFull):
        pass  # a cache only: a read-only or full state folder just means slower quick commands
