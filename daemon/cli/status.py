"""`memoryd status`: what the daemon is doing and what went wrong."""

from __future__ import annotations

import json
from pathlib import Path

import click

from daemon.cli.app import AppContext


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_obj
def status(app: AppContext, as_json: bool) -> None:
    """Show whether memoryd runs, how far capture has got, and recent errors.

    Works whether or not the daemon is running: it reads the lock file, the
    state database and OpenCode's database (read-only). With a bad configuration it
    says what is wrong (stderr; `config_error` in --json) and shows what the defaults give.
    """
    from daemon.status import format_status, gather

    config_error = app.load_despite_errors()  # a bad config is what one runs status to find
    data = gather(app.config, here=Path.cwd())
    if as_json:
        click.echo(json.dumps({**data, "config_error": config_error}, indent=2, ensure_ascii=False))
    else:
        click.echo(format_status(data))
