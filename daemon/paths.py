"""Where memoryd reads and writes, resolved from the environment; and a cache of
validated settings so that quick read-only commands need not import pydantic.

No pydantic here: `memoryd recall` imports this module, not daemon.config. Its records
are NamedTuples, not dataclasses: a frozen dataclass costs ~1.4 ms to create at import
here (it `exec`s six methods), a NamedTuple ~0.25, and every quick command imports these eight.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from daemon.config import Settings


class Paths(NamedTuple):
    """Every place memoryd reads or writes, resolved once from the environment."""

    config_file: Path
    opencode_db: Path
    state_dir: Path
    global_root: Path
    opencode_memory_db: Path
    # Other agents' stores, read-only: `${CLAUDE_CONFIG_DIR:-~/.claude}` and `${CODEX_HOME:-~/.codex}`.
    claude_dir: Path | None = None
    codex_home: Path | None = None

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


class Config(NamedTuple):
    """The validated settings and the paths they resolve to: what most of memoryd needs,
    passed as one value (functions that need only one of the two take only that one)."""

    settings: Settings  # a QuickSettings when a quick command read it from the cache
    paths: Paths


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> Path:
    value = env.get(name)
    if value:
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / fallback


def default_config_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return _xdg(env, "XDG_CONFIG_HOME", ".config") / "memoryd" / "config.toml"


def resolve_paths(settings: Settings | QuickSettings, config_file: Path, env: Mapping[str, str] | None = None) -> Paths:
    """Return the paths for these settings, using XDG defaults where a setting is empty."""
    env = os.environ if env is None else env
    data = _xdg(env, "XDG_DATA_HOME", ".local/share")
    config = _xdg(env, "XDG_CONFIG_HOME", ".config")
    state = _xdg(env, "XDG_STATE_HOME", ".local/state")
    home = Path(env.get("HOME") or Path.home())
    db = settings.source.db or env.get("OPENCODE_DB") or str(data / "opencode" / "opencode.db")
    return Paths(
        config_file=config_file,
        opencode_db=Path(db).expanduser(),
        state_dir=state / "memoryd",
        global_root=Path(settings.memory.global_root or config / "opencode" / "memory").expanduser(),
        opencode_memory_db=Path(
            settings.sweep.opencode_memory_db or data / "opencode-memory" / "memory.db"
        ).expanduser(),
        claude_dir=Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude").expanduser(),
        codex_home=Path(env.get("CODEX_HOME") or home / ".codex").expanduser(),
    )


def foreign_owner_advice(env: Mapping[str, str]) -> str | None:
    """When folders memoryd writes (state, its config, the global tree, or folders above
    them in the home), or what is at their top, belong to another user (one `sudo -E
    memoryd …` leaves them root's): the one line that names them and the chown to run."""
    import pwd

    me = os.geteuid()
    home = Path(env.get("HOME") or Path.home())
    config = _xdg(env, "XDG_CONFIG_HOME", ".config")
    foreign: dict[Path, int] = {}  # the top-most folder to give back → its owner
    for target in (state_dir_of(env), config / "memoryd", config / "opencode" / "memory"):
        below = target.relative_to(home).parts if target.is_relative_to(home) else ()
        chain = [home.joinpath(*below[:n]) for n in range(1, len(below) + 1)] or [target]
        for folder in (p for p in chain if p.is_dir()):
            try:
                inside = [e.path for e in os.scandir(folder)] if folder == target else []
            except PermissionError:
                inside = []
            owners = [uid for uid in map(_owner, (folder, *inside)) if uid not in (None, me)]
            if owners:
                foreign.setdefault(folder, owners[0])
                break  # a chown -R of this folder covers what is below it
    if not foreign:
        return None
    user, owner = _user_name(pwd, me), _user_name(pwd, next(iter(foreign.values())))
    folders = " ".join(map(str, foreign))
    return (f"{folders} belong{'s' if len(foreign) == 1 else ''} to {owner}, not to {user} (left by a "
            f"`sudo memoryd …`?): memoryd cannot use {'it' if len(foreign) == 1 else 'them'}. "
            f"Give {'it' if len(foreign) == 1 else 'them'} back with: sudo chown -R {user}: {folders}")


def _owner(path: str | Path) -> int | None:
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def _user_name(pwd, uid: int) -> str:  # noqa: ANN001 - the pwd module, imported on use
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


# -- the settings cache -------------------------------------------------------------------

CACHE_FILE = "settings.json"
_ENV_KEYS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "OPENCODE_DB", "CLAUDE_CONFIG_DIR", "CODEX_HOME")


def state_dir_of(env: Mapping[str, str]) -> Path:
    return _xdg(env, "XDG_STATE_HOME", ".local/state") / "memoryd"


def file_identity(path: Path | str | None) -> list[int] | None:
    """A file's mtime, size and inode, for a cache keyed by it; None when it is missing."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino] if st else None


def settings_fingerprint(config_file: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Everything the validated settings depend on: the file's identity, the environment,
    and memoryd's own settings schema (the config module's file)."""

    return {
        "config": str(config_file),
        "config_stat": file_identity(config_file),
        "schema_stat": file_identity(Path(__file__).with_name("config.py")),
        "env": {k: v for k, v in sorted(env.items()) if k.startswith("MEMORYD_") or k in _ENV_KEYS},
    }


class QuickSource(NamedTuple):
    db: str
    busy_timeout_ms: int


class QuickMemory(NamedTuple):
    global_root: str
    project_roots: tuple[str, ...]
    discover_projects: bool
    max_file_bytes: int
    follow_outside_links: bool


class QuickSweep(NamedTuple):
    opencode_memory_db: str


class QuickInject(NamedTuple):
    enabled: bool
    inventory_chars: int
    recall_k: int
    recall_chars: int
    routing_chars: int
    block_tokens: int
    skip_projects: tuple[str, ...]
    plugin_timeout_ms: int


class QuickLog(NamedTuple):
    level: str
    max_bytes: int
    backups: int


_QUICK_SECTIONS: dict[str, Any] = {
    "source": QuickSource, "memory": QuickMemory, "sweep": QuickSweep, "inject": QuickInject, "log": QuickLog,
}  # fmt: skip


class QuickSettings(NamedTuple):
    """What the quick read-only commands (recall, show, list, context) read of `Settings`:
    the same sections and names, validated values, frozen. A test keeps it in step."""

    source: QuickSource
    memory: QuickMemory
    sweep: QuickSweep
    inject: QuickInject
    log: QuickLog

    @staticmethod
    def values_of(dump: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The part of `Settings.model_dump(mode="json")` these sections hold (all the cache keeps)."""
        return {name: {f: dump[name][f] for f in kind._fields} for name, kind in _QUICK_SECTIONS.items()}

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> QuickSettings:
        def frozen(value: Any) -> Any:
            return tuple(value) if isinstance(value, list) else value

        return cls(**{
            name: kind(**{f: frozen(values[name][f]) for f in kind._fields})
            for name, kind in _QUICK_SECTIONS.items()
        })  # fmt: skip


def read_cached_settings(config_file: Path, env: Mapping[str, str]) -> Config | None:
    """Return the configuration from the cache if nothing it depends on changed, else None.

    Its settings are a QuickSettings (what quick commands read), not a whole `Settings`.
    """
    try:
        cached = json.loads((state_dir_of(env) / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("fingerprint") != settings_fingerprint(config_file, env):
        return None
    try:
        settings = QuickSettings.from_values(cached["settings"])
    except (KeyError, TypeError):  # written by another release: validated again, and rewritten
        return None
    return Config(settings, resolve_paths(settings, config_file, env))  # type: ignore[arg-type]


def write_cached_settings(dump: Mapping[str, Any], config_file: Path, env: Mapping[str, str]) -> None:
    """Remember what quick commands read of validated settings (`Settings.model_dump(mode="json")`)
    for the next one; written only when it changed."""
    from daemon.diskfull import DiskFull
    from daemon.files import write_if_changed

    data = {"fingerprint": settings_fingerprint(config_file, env), "settings": QuickSettings.values_of(dump)}
    try:
        write_if_changed(state_dir_of(env) / CACHE_FILE, json.dumps(data, sort_keys=True), durable=False)
    except (OSError, DiskFull):
        pass  # a cache only: a read-only or full state folder just means slower quick commands
