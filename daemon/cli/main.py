"""Entry point: a click group whose commands are imported only when used.

Lazy imports keep `memoryd recall` fast: starting the CLI must not import httpx,
watchdog or the MCP SDK.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from daemon import __version__

# command name -> "module:attribute"; each module holds one command or group.
COMMANDS: dict[str, str] = {
    "run": "daemon.cli.run:run",
    "distill": "daemon.cli.distill:distill",
    "status": "daemon.cli.status:status",
    "recall": "daemon.cli.memory:recall",
    "remember": "daemon.cli.memory:remember",
    "forget": "daemon.cli.memory:forget",
    "inspect": "daemon.cli.memory:inspect",
    "list": "daemon.cli.memory:list_memories",
    "context": "daemon.cli.context:context",
    "opencode": "daemon.cli.opencode:opencode",
    "install": "daemon.cli.install:install",
    "uninstall": "daemon.cli.install:uninstall",
    "compile": "daemon.cli.tree:compile_cmd",
    "sweep": "daemon.cli.tree:sweep",
    "reindex": "daemon.cli.tree:reindex",
    "scrub": "daemon.cli.scrub:scrub",
    "service": "daemon.cli.service:service",
    "logs": "daemon.cli.logs:logs",
    "mcp": "daemon.cli.mcp:mcp",
    "config": "daemon.cli.config:config",
    "sink": "daemon.cli.sink:sink",
}

# One line each for `memoryd --help`, so listing commands imports nothing.
SUMMARIES: dict[str, str] = {
    "run": "Run the daemon in the foreground (what the service starts).",
    "distill": "Turn new or changed OpenCode sessions into notes, once.",
    "status": "Show what memoryd is doing and what went wrong.",
    "recall": "Search memories.",
    "remember": "Save a memory (a decision, fact, gotcha, lesson…).",
    "forget": "Delete a memory by id, or by query within your scope.",
    "inspect": "Show one memory, or the inventory a session sees.",
    "list": "List memories, newest first.",
    "context": "Show the memory block an OpenCode session in a folder is given.",
    "opencode": "Install, remove or check the OpenCode plugin and MCP entry.",
    "install": "Wire memoryd into every agent found (OpenCode, Claude Code, Codex).",
    "uninstall": "Take memoryd out of every agent found (memories stay).",
    "compile": "Recompile index.md and ROOT.md now.",
    "sweep": "Move expired memories out of the trees now.",
    "reindex": "Rebuild the search index from the trees.",
    "scrub": "Apply the current secret rules again to everything stored.",
    "service": "Install, remove or check the login service.",
    "logs": "Show (and follow) memoryd's log.",
    "mcp": "Serve memory tools to OpenCode and other MCP clients (stdio).",
    "config": "Print the example configuration, or check yours.",
    "sink": "Deliver notes to a Cognee server; show the outbox.",
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The top-level help lists summaries without importing every command.
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARIES[name]) for name in COMMANDS])


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Start with `memoryd distill`, then `memoryd service install`. "
    "Configuration: ~/.config/memoryd/config.toml (`memoryd config example` prints every key).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="MEMORYD_CONFIG",
    help="Config file (default: $XDG_CONFIG_HOME/memoryd/config.toml).",
)
@click.version_option(__version__, prog_name="memoryd")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None) -> None:
    """memoryd keeps what your OpenCode sessions learned.

    It turns every OpenCode session into a short Markdown note, keeps your memory
    trees compiled and searchable, and lets you and your agents recall them.
    """
    import os

    from daemon.cli.app import AppContext, install_cli_logging

    # Whatever memoryd creates (SQLite files and their -wal/-shm, logs, folders) is
    # private whatever the user's umask; restored when the command ends (tests run many).
    previous = os.umask(0o077)
    ctx.call_on_close(lambda: os.umask(previous))
    install_cli_logging()
    ctx.obj = AppContext(config_path)


def main() -> None:
    try:
        cli(prog_name="memoryd")
    except Exception as exc:
        # A full disk can surface anywhere memoryd writes: one line that says so and
        # names the file, whatever the command, never a traceback.
        import os

        from daemon.diskfull import find_disk_full
        from daemon.paths import foreign_owner_advice, state_dir_of

        full = find_disk_full(exc, state_dir_of(os.environ))
        # So can a folder of memoryd's that another user owns: the path and the chown.
        advice = str(full) if full is not None else foreign_owner_advice(os.environ)
        if advice is None:
            raise
        click.echo(f"memoryd: {advice}", err=True)
        raise SystemExit(1) from None
