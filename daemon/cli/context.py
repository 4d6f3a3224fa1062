"""`memoryd context`: exactly what an OpenCode session in a folder would be given.

The OpenCode plugin runs `memoryd context --json` once per session when no daemon
answers on its socket, so this command stays as light as `memoryd recall`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import click

from daemon.cli.app import AppContext
from daemon.cli.memory import _workspace, memory_errors


@click.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="The session's folder (default: the current one); its git worktree is the project.",
    metavar="DIR",
)
@click.option("--prompt", default="", help="The session's first prompt: adds the memories really about it, if any.")
@click.option("--json", "as_json", is_flag=True, help="Print what the plugin reads: block, generation, compaction text.")
@click.option("--session", default=None, metavar="ID", help="The asking OpenCode session: its own note is never in the block.")
@click.pass_obj
def context(app: AppContext, directory: Path | None, prompt: str, as_json: bool, session: str | None) -> None:
    """Show the memory block a new OpenCode session in DIR is given.

    The block holds the hard rules (project and global), the project's routing, an
    inventory (this project's lessons and gotchas and other curated memories, then
    machine-wide ones, then this project's recent sessions) and, with --prompt,
    previews of the memories really about it (none when nothing is). Only this
    project's memories and machine-wide ones: never another project's; with
    --session, never that session's own note. Fenced as reference data and
    byte-identical while the trees do not change. Budgets (about 800 tokens in all)
    and the per-project opt-out are in the config's [inject] section.

    \b
    Examples:
      memoryd context
      memoryd context --dir ~/src/shop --prompt "why does the deploy fail?"
      memoryd context --json | jq .chars
    """
    from daemon.memory.context import context_payload
    from daemon.memory.stable_store import StoredStable

    with memory_errors():
        ws = _workspace(app, directory, reading=True, option="--dir")
        with ws:
            now = datetime.now(UTC)
            kept = StoredStable(ws.index, ws.roots("all"), app.settings.inject, now)  # the prompt-free part, kept
            payload = context_payload(
                ws, app.settings.inject, directory or Path.cwd(), prompt, now, stable_cache=kept, session=session
            )
    if as_json:
        click.echo(json.dumps(payload, ensure_ascii=False))
    elif not payload["enabled"]:
        click.echo(f"No memory block: {payload['reason']}.")
    else:
        click.echo(payload["block"])
        click.echo(f"({payload['chars']} characters, generation {payload['generation']})", err=True)
