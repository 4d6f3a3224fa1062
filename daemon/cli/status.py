"""`memoryd status`: what the daemon is doing and what went wrong."""

from __future__ import annotations

import json

import click

from daemon.cli.context import AppContext


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_obj
def status(app: AppContext, as_json: bool) -> None:
    """Show whether memoryd runs, how far capture has got, and recent errors.

    Works whether or not the daemon is running: it reads the lock file, the
    state database and OpenCode's database (read-only).
    """
    from daemon.status import format_status, gather

    data = gather(app.settings, app.paths)
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else format_status(data))
