"""`memoryd mcp`: serve the memory tools over MCP (stdio), or print a client's config."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import click

from daemon.cli.app import AppContext

CLIENTS = ("opencode", "claude")


def memoryd_command(app: AppContext) -> list[str]:
    """The absolute command that runs this memoryd (its script, else `python -m daemon`)
    with this config: it survives a changed PATH and an unactivated venv."""
    from daemon.service.units import find_executable

    command = find_executable(sys.argv[0], shutil.which, sys.executable)
    if app.config_path is not None:
        command += ["--config", os.path.abspath(app.config_path)]
    return command


def server_command(app: AppContext, project: Path | None) -> list[str]:
    """Return the absolute command line that starts this memoryd's MCP server."""
    command = [*memoryd_command(app), "mcp"]
    if project is not None:
        command += ["--project", os.path.abspath(project)]
    return command


def opencode_config(command: list[str]) -> str:
    """Return the `opencode.json` snippet that registers the server."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {"memoryd": {"type": "local", "command": command, "enabled": True}},
    }
    return json.dumps(config, indent=2)


def claude_config(command: list[str]) -> str:
    """Return the `claude mcp add` line and the `.mcp.json` equivalent."""
    project_file = {"mcpServers": {"memoryd": {"type": "stdio", "command": command[0], "args": command[1:]}}}
    return "\n".join(
        [
            "# Claude Code, for every project (user scope):",
            shlex.join(["claude", "mcp", "add", "--scope", "user", "memoryd", "--", *command]),
            "",
            "# or for one repository only, in <repo>/.mcp.json (the path is this machine's):",
            json.dumps(project_file, indent=2),
        ]
    )


@click.command()
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="Serve the project containing DIR (default: the current directory's git worktree).",
)
@click.option(
    "--print-config",
    "client",
    type=click.Choice(CLIENTS),
    help="Print what registers memoryd with this client, then exit.",
)
@click.pass_obj
def mcp(app: AppContext, project: Path | None, client: str | None) -> None:
    """Serve memory tools to OpenCode, Claude Code and other MCP clients (stdio).

    Tools: recall, remember, forget, inspect and list_memories, with the same semantics
    as the commands of the same names. The project is the git worktree of the directory
    the client starts the server in; `memoryd run` need not be running. Logs go to
    memoryd's log file: stdout carries the protocol.

    \b
    Examples:
      memoryd mcp --print-config opencode   # the "mcp" entry for opencode.json
      memoryd mcp --print-config claude     # `claude mcp add …` and .mcp.json
      memoryd mcp --project ~/src/app       # for a client that starts servers elsewhere
    """
    if client is not None:
        command = server_command(app, project)
        if client == "opencode":
            click.echo(opencode_config(command))
            click.echo(
                "# Merge into ~/.config/opencode/opencode.json (every project) or a project's opencode.json.",
                err=True,
            )
        else:
            click.echo(claude_config(command))
        return

    from daemon.mcp import serve

    if sys.stdin.isatty():
        click.echo(
            "memoryd mcp speaks MCP on stdin/stdout and is meant to be started by a client; "
            "see `memoryd mcp --print-config opencode`. Ctrl-D ends it.",
            err=True,
        )
    app.setup_logging(stderr=False)
    serve(app.config, project or Path.cwd(), explicit_project=project is not None)
