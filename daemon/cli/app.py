"""The CLI app: what every command shares through click's context object (AppContext:
settings, paths, logging) and the exit codes."""

from __future__ import annotations

import logging
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from daemon.config import Config, Paths, Settings

EXIT_OK = 0
EXIT_FAILED = 1  # the command ran but some of its work failed
EXIT_USAGE = 2  # bad usage or configuration: nothing was done


class AppContext:
    """Loads settings on first use so `--help` never needs a valid config."""

    def __init__(self, config_path: Path | None) -> None:
        self.config_path = config_path
        self.quick = False  # set by read-only commands that may use the settings cache

    @cached_property
    def config(self) -> Config:
        if self.quick:
            # Settings validated by an earlier quick command, if nothing they depend on
            # has changed since: no pydantic import, half of `memoryd recall`'s time.
            from daemon.paths import default_config_file, read_cached_settings

            cached = read_cached_settings(Path(self.config_path or default_config_file()), os.environ)
            if cached is not None:
                return cached
        from daemon.config import Config, ConfigError, load_settings

        try:
            settings, paths = load_settings(self.config_path)
        except ConfigError as exc:
            click.echo(f"memoryd: configuration error\n{exc}", err=True)
            raise SystemExit(EXIT_USAGE) from exc
        if self.quick:
            from daemon.paths import write_cached_settings

            write_cached_settings(settings.model_dump(mode="json"), paths.config_file, os.environ)
        return Config(settings, paths)

    def load_despite_errors(self) -> str | None:
        """For the commands one runs to find out what is wrong (status, logs, service
        status): on a bad configuration, go on with the defaults and say so on stderr.

        Returns the configuration error, or None when the configuration is valid.
        """
        from daemon.config import Config, ConfigError, Settings, load_settings, resolve_paths
        from daemon.paths import default_config_file

        try:
            self.__dict__["config"] = Config(*load_settings(self.config_path))
            return None
        except ConfigError as exc:
            # Defaults only: neither the file nor the MEMORYD_… variables (either may be bad).
            settings = Settings.model_construct()
            paths = resolve_paths(settings, Path(self.config_path or default_config_file()))
            self.__dict__["config"] = Config(settings, paths)
            click.echo(f"memoryd: configuration error (showing what the defaults give)\n{exc}", err=True)
            return str(exc)

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def paths(self) -> Paths:
        return self.config.paths

    def make_state_private(self) -> None:
        """Tighten a state folder an older release or a loose umask left readable."""
        from daemon.files import tighten_private_tree

        for entry in tighten_private_tree(self.paths.state_dir):
            click.echo(f"memoryd: warning: cannot make private (not yours?): {entry}", err=True)

    def setup_logging(self, stderr: bool = True, to_file: bool = True) -> None:
        """Log to the state folder's file and (by default) stderr."""
        from daemon.logs import setup_logging

        log = self.settings.log
        setup_logging(
            level=log.level,
            log_file=self.paths.log_file if to_file else None,
            max_bytes=log.max_bytes,
            backups=log.backups,
            stderr=stderr,
        )


# Attributes every LogRecord has; anything else came in through `extra=` and is a field.
_RECORD_KEYS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class _CliLogFormatter(logging.Formatter):
    """`memoryd: warning: memory.file_problem path=… reason=…` for quick commands.

    Commands that set up structlog (run, distill) replace this handler.
    """

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={v}" for k, v in vars(record).items() if k not in _RECORD_KEYS)
        return f"memoryd: {record.levelname.lower()}: {record.getMessage()} {fields}".rstrip()


def install_cli_logging() -> None:
    """Warnings from the memory modules reach stderr readable, with their fields."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(_CliLogFormatter())
        handler.setLevel(logging.WARNING)
        root.addHandler(handler)


def fail(message: str, code: int = EXIT_USAGE) -> None:
    """Print `message` for a person and exit with `code`."""
    click.echo(f"memoryd: {message}", err=True)
    raise SystemExit(code)
