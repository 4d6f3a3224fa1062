"""`memoryd config`: the example configuration (shipped in the package), and a check."""

from __future__ import annotations

from importlib.resources import files

import click

from daemon.cli.app import EXIT_USAGE, AppContext, fail


@click.group()
def config() -> None:
    """Print the example configuration, or check yours."""


@config.command()
def example() -> None:
    """Print config.example.toml: every key, its meaning and its default.

    \b
    Examples:
      memoryd config example > ~/.config/memoryd/config.toml
      memoryd config example | less
    """
    click.echo(files("daemon").joinpath("config.example.toml").read_text(encoding="utf-8"), nl=False)


@config.command()
@click.pass_obj
def check(app: AppContext) -> None:
    """Load the config file and the MEMORYD_… variables; say where they are, or what is wrong.

    Exit status 0 when they are valid, 2 when not.
    """
    from daemon.config import ConfigError, load_settings

    try:
        _settings, paths = load_settings(app.config_path)
    except ConfigError as exc:
        fail(f"configuration error\n{exc}", EXIT_USAGE)
    found = "" if paths.config_file.exists() else " (not there: defaults apply)"
    click.echo(f"config file: {paths.config_file}{found}")
    click.echo("configuration is valid")
