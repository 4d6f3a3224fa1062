"""Settings (TOML file + MEMORYD_ env) and the paths memoryd reads and writes.

Precedence, highest first: constructor arguments, `MEMORYD_…` environment variables
(nested keys joined with `__`), the TOML file, defaults. Every field is documented in
`config.example.toml`; a test keeps the two in step.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

# Paths live in a module without pydantic (quick commands import it alone); re-exported.
from daemon.paths import Config, Paths, default_config_file, resolve_paths

__all__ = ["Config", "ConfigError", "Paths", "Settings", "default_config_file", "load_settings", "resolve_paths"]


class ConfigError(Exception):
    """A configuration file or value that memoryd cannot use; the message says where."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SourceSettings(_Section):
    db: str = Field("", description="Path to opencode.db; empty: $OPENCODE_DB, else $XDG_DATA_HOME/opencode/opencode.db")
    busy_timeout_ms: int = Field(5000, ge=0, description="How long a read waits while OpenCode holds a write lock")


class CaptureSettings(_Section):
    settle_seconds: float = Field(30, ge=0, description="A session is distilled once no row moved for this long")
    overlap_ms: int = Field(5000, ge=0, description="Unused: new rows are found by commit order (kept so older config files load)")
    transcript_chars: int = Field(18000, ge=1000, description="Whole-transcript budget")
    transcript_head_chars: int = Field(6000, ge=0, description="Kept from the start; the rest of the budget comes from the end")
    part_text_chars: int = Field(4000, ge=100, description="Cap per text part")
    tool_input_chars: int = Field(600, ge=50, description="Cap per tool input")
    tool_output_chars: int = Field(1500, ge=50, description="Cap per tool output")
    reasoning_hint_chars: int = Field(0, ge=0, le=200, description="Reasoning kept as a hint of at most this many characters (0: only a marker)")
    max_failed_passes: int = Field(3, ge=1, description="Failed passes on the same transcript before a session is marked failed")
    transcript_days: int = Field(14, ge=0, description="Days a transcript (the scrubbed model input) is kept; 0 keeps none; "
        "with the extractive distiller, none is written for a session quiet longer than this")
    workers: int = Field(
        0, ge=0, le=16,
        description="Processes building transcripts and extractive notes when a pass has 100+ sessions to read; 0: one per core (at most 4), 1: none",
    )  # fmt: skip


class NotesSettings(_Section):
    target: Literal["auto", "project", "global"] = Field("auto", description="Where notes go")
    category: str = Field("sessions", min_length=1, description="Category folder for session notes")
    extract_memories: bool = Field(
        True, description="Save a note's Lesson: / Gotcha: / Decision: lines as memories of their own"
    )


class LLMSettings(_Section):
    provider: Literal["extractive", "openai", "anthropic"] = Field(
        "extractive", description="Distiller: extractive (no model), openai (any /chat/completions server), anthropic"
    )
    base_url: str = Field(
        "", description="Model server URL; empty: https://api.openai.com/v1 or https://api.anthropic.com"
    )
    model: str = Field("", description="Model name as the server knows it, e.g. qwen3:8b; recorded per note")
    api_key_env: str = Field(
        "", description="Name of the environment variable holding the API key (never the key itself)"
    )
    timeout_s: float = Field(120, gt=0, description="Seconds to wait for one answer")
    max_output_tokens: int = Field(1200, ge=64, description="Output cap per call")
    temperature: float = Field(0.2, ge=0, le=2, description="Sampling temperature")
    concurrency: int = Field(2, ge=1, le=32, description="Parallel model calls (and pooled connections)")
    extra_headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers sent on every call")
    disable_thinking: bool = Field(
        False, description="Send chat_template_kwargs.enable_thinking=false (openai provider, reasoning models)"
    )
    max_retries: int = Field(3, ge=0, le=10, description="Retries per call within one pass (5xx, 429, malformed answers; an unanswered request once)")
    daily_token_budget: int = Field(0, ge=0, description="Tokens per local day, 0: unlimited")
    daily_call_budget: int = Field(0, ge=0, description="Calls per local day, 0: unlimited")
    fallback: Literal["none", "extractive"] = Field(
        "none", description="When the budget is spent: wait (none) or write extractive notes, upgraded later"
    )


class MemorySettings(_Section):
    global_root: str = Field("", description="Global memory tree; empty: $XDG_CONFIG_HOME/opencode/memory")
    project_roots: list[str] = Field(default_factory=list, description="Extra project worktrees")
    discover_projects: bool = Field(True, description="Find projects from OpenCode sessions")
    max_file_bytes: int = Field(
        1_048_576, ge=4096, description="A larger memory file is indexed by its head only, and reported"
    )
    follow_outside_links: bool = Field(
        False, description="Use a project's .memory that is a link to a folder outside the project (off: not followed, reported)"
    )


class SweepSettings(_Section):
    interval_minutes: float = Field(60, gt=0, description="How often the sweep runs")
    keep_expired_days: int = Field(
        30, ge=0, description="Days an expired file stays in .expired/ (deleted once two sweeps a real day apart agree)"
    )
    opencode_memory_db: str = Field("", description="opencode-memory store; empty: $XDG_DATA_HOME/opencode-memory/memory.db")


class WatchSettings(_Section):
    poll: bool = Field(False, description="Poll instead of file-system events")
    poll_interval_s: float = Field(5, gt=0, description="Polling period")
    debounce_ms: int = Field(200, ge=0, description="Burst window")
    reconcile_minutes: float = Field(10, gt=0, description="Full watermark pass period")


class ServiceSettings(_Section):
    shutdown_timeout_s: float = Field(10, gt=0, description="Grace period on SIGTERM")
    watchdog_s: float = Field(0, ge=0, description="Keep-alive period; 0: from WATCHDOG_USEC")


class InjectSettings(_Section):
    enabled: bool = Field(True, description="Give every OpenCode session its memory block (the plugin asks; false: nothing is injected)")
    inventory_chars: int = Field(1000, ge=0, le=20000, description="Budget of the memory inventory, in characters")
    recall_k: int = Field(3, ge=0, le=20, description="At most this many memories shown for the first prompt, only those really about it (0: none)")
    recall_chars: int = Field(900, ge=0, le=20000, description="Budget of those previews, in characters")
    routing_chars: int = Field(400, ge=0, le=20000, description="Budget of the project's routing table (scenarios the prompt names first), in characters")
    block_tokens: int = Field(800, ge=100, le=20000, description="Budget of the whole block, in tokens (estimated: ~4 ASCII characters or 1 other character each)")
    skip_projects: list[str] = Field(
        default_factory=list, description="Worktrees whose sessions get no memory block (~ expands)"
    )
    plugin_timeout_ms: int = Field(
        800, ge=50, le=10000, description="How long the OpenCode plugin waits for the daemon before going on without memory"
    )


class LogSettings(_Section):
    level: Literal["debug", "info", "warning", "error"] = Field("info", description="Log level")
    max_bytes: int = Field(5_000_000, ge=10_000, description="Rotate the log file at this size")
    backups: int = Field(3, ge=0, description="Rotated files kept")


class CogneeSinkSettings(_Section):
    url: str = Field("", description="Cognee server, e.g. http://127.0.0.1:8000; empty: no delivery")
    dataset: str = Field("opencode_kb", min_length=1, description="Dataset the notes go to")
    token_env: str = Field("", description="Variable holding a bearer token (never the token itself)")
    api_key_env: str = Field("", description="Variable holding a Cognee API key, sent as X-Api-Key")
    username_env: str = Field("", description="Variable holding the login e-mail (with password_env: log in)")
    password_env: str = Field("", description="Variable holding the login password")
    cognify: Literal["batch", "schedule", "never"] = Field(
        "batch", description="Ask Cognee to cognify after each delivered batch, on a schedule, or never"
    )
    cognify_interval_minutes: float = Field(60, gt=0, description="Period of the schedule (cognify = schedule)")
    include_memories: bool = Field(False, description="Deliver every memory file too, not only session notes")
    batch_size: int = Field(50, ge=1, le=500, description="Documents per add request")
    timeout_s: float = Field(60, gt=0, description="Seconds to wait for one request")
    max_backoff_s: float = Field(600, ge=1, description="Longest wait between retries while the server fails")


class SinksSettings(_Section):
    cognee: CogneeSinkSettings = Field(default_factory=CogneeSinkSettings)


class Settings(BaseSettings):
    """All of memoryd's settings."""

    model_config = SettingsConfigDict(
        env_prefix="MEMORYD_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    source: SourceSettings = Field(default_factory=SourceSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)
    notes: NotesSettings = Field(default_factory=NotesSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    sweep: SweepSettings = Field(default_factory=SweepSettings)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    inject: InjectSettings = Field(default_factory=InjectSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    sinks: SinksSettings = Field(default_factory=SinksSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The file sits below the environment so MEMORYD_… always wins.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))


SEE_EXAMPLE = "`memoryd config example` prints every key with its meaning and default."
ENV_PREFIX = "MEMORYD_"

# The file alone, validated without the environment (Settings would read MEMORYD_… too,
# and an error from a variable would then be blamed on the file).
_FileSettings = create_model(
    "FileSettings",
    __config__=ConfigDict(extra="forbid"),
    **{name: (field.annotation, field) for name, field in Settings.model_fields.items()},
)


def env_name(loc: tuple[object, ...]) -> str:
    """The variable that sets a key: ('llm', 'timeout_s') → MEMORYD_LLM__TIMEOUT_S."""
    return ENV_PREFIX + "__".join(str(part) for part in loc).upper()


def _describe(error: ValidationError, origin: Path | None) -> str:
    """One line per problem, naming the file and key, or the environment variable."""
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"])
        if origin is None:
            name = env_name(item["loc"])
            if item["type"] == "extra_forbidden":
                lines.append(f"environment variable {name}: no such setting")
            else:
                lines.append(f"environment variable {name}: {item['msg']} (got {item.get('input')!r})")
        elif item["type"] == "extra_forbidden":
            lines.append(f"{origin}: unknown key '{key}'")
        else:
            lines.append(f"{origin}: key '{key}': {item['msg']} (got {item.get('input')!r})")
    return "\n".join(lines) + "\n" + SEE_EXAMPLE


def _describe_env_parse(error: SettingsError, env: dict[str, str]) -> str:
    """A variable pydantic-settings could not even parse (a dict field given non-JSON)."""
    match = re.search(r'field "(\w+)"', str(error))
    section = ENV_PREFIX + (match.group(1).upper() if match else "")
    names = sorted(k for k in env if k.upper().startswith(section)) or [f"{ENV_PREFIX}…"]
    return f"environment variable {', '.join(names)}: cannot be read ({error})\n{SEE_EXAMPLE}"


def load_settings(config_file: Path | None = None) -> tuple[Settings, Paths]:
    """Load settings from the TOML file (if present) and the MEMORYD_ environment.

    An explicitly given file must exist; the default one may be absent.
    Raises ConfigError naming the file and key on any problem.
    """
    explicit = config_file is not None
    path = Path(config_file) if explicit else default_config_file()
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    elif explicit:
        raise ConfigError(f"{path}: config file not found")

    # Validate the file on its own first, so that an error names the file, not the env.
    try:
        _FileSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path)) from exc
    bound = type(
        "Settings",
        (Settings,),
        {"model_config": {**Settings.model_config, "toml_file": path if data else None}},
    )
    try:
        settings = bound()
    except ValidationError as exc:
        raise ConfigError(_describe(exc, None)) from exc
    except SettingsError as exc:
        raise ConfigError(_describe_env_parse(exc, dict(os.environ))) from exc
    return settings, resolve_paths(settings, path)
