"""`memoryd install|uninstall [--agent …] [--dry-run]`: wire memoryd into every agent found.

OpenCode gets its plugin and MCP entry (`memoryd opencode install`, still there); Claude
Code and Codex get their hooks and MCP server (`daemon.claudecode.install`,
`daemon.codex.install`). Each agent's settings keep every byte of the user's own entries,
and an uninstall gives back the files as the install found them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import click

from daemon.cli.app import EXIT_FAILED, AppContext

AGENTS = ("opencode", "claude", "codex")
NAMES = {"opencode": "OpenCode", "claude": "Claude Code", "codex": "Codex"}


def _found(agent: str, env: dict[str, str]) -> bool:
    if agent == "opencode":
        from daemon.opencode.install import config_dir

        return config_dir(env).is_dir() or shutil.which("opencode", path=env.get("PATH")) is not None
    if agent == "claude":
        from daemon.claudecode.install import found
    else:
        from daemon.codex.install import found
    return found(env)


def _plan(app: AppContext, agent: str, env: dict[str, str], remove: bool):  # noqa: ANN202 - a Plan
    from daemon.cli.mcp import memoryd_command
    from daemon.hooksettings import hook_command

    config = os.path.abspath(app.config_path) if app.config_path is not None else None
    if agent == "opencode":
        from daemon.opencode.install import config_dir, plan_install, plan_uninstall

        return plan_uninstall(config_dir(env)) if remove else plan_install(config_dir(env), memoryd_command(app), app.paths.socket_file)
    # The MCP server behind its front, which answers the handshake at once (daemon.mcpfront).
    mcp = [sys.executable, "-m", "daemon.mcpfront", *(["--config", config] if config else [])]
    if agent == "claude":
        from daemon.claudecode import install as claude

        return claude.plan_uninstall(env) if remove else claude.plan_install(env, hook_command(sys.executable, agent, config), mcp)
    from daemon.codex import install as codex

    return codex.plan_uninstall(env, mcp) if remove else codex.plan_install(env, hook_command(sys.executable, agent, config), mcp)


def _run(app: AppContext, agents: tuple[str, ...], dry_run: bool, remove: bool) -> None:
    env = dict(os.environ)
    chosen = agents or tuple(a for a in AGENTS if _found(a, env))
    if not chosen:
        click.echo("No agent found (OpenCode, Claude Code, Codex): nothing to do. Name one with --agent.")
        return
    failed = False
    for agent in chosen:
        plan = _plan(app, agent, env, remove)
        if agent != "opencode" and not remove:
            plan.steps.append(("keep memoryd's MCP handshake ready (answered at once: daemon.mcpfront)", _prime(app)))
        click.echo(f"{NAMES[agent]}:")
        for line in plan.describe():
            click.echo("  " + ("would " if dry_run and not line.startswith(("unchanged", "/")) else "") + line)
        if not dry_run:
            plan.apply()
        failed = failed or bool(plan.manual)
    if failed:
        raise SystemExit(EXIT_FAILED)


def _prime(app: AppContext):  # noqa: ANN202 - the step
    def step() -> None:
        from daemon.mcpfront import prime

        config = os.path.abspath(app.config_path) if app.config_path is not None else None
        try:
            prime([sys.executable, "-m", "daemon.mcpfront", *(["--config", config] if config else [])])
        except (OSError, subprocess.SubprocessError) as exc:  # the front learns it from the first client instead
            click.echo(f"  (the MCP handshake is kept from the first session instead: {exc})")

    return step


_agent = click.option("--agent", "agents", multiple=True, type=click.Choice(AGENTS),
                      help="Only this agent (repeatable); default: every agent found.")  # fmt: skip
_dry = click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")


@click.command()
@_agent
@_dry
@click.pass_obj
def install(app: AppContext, agents: tuple[str, ...], dry_run: bool) -> None:
    """Give every agent found memory: OpenCode's plugin, Claude Code's and Codex's hooks, and
    memoryd's MCP server for each (safe to run again: it updates them).

    \b
    Examples:
      memoryd install --dry-run
      memoryd install --agent claude --agent codex
    """
    _run(app, agents, dry_run, remove=False)


@click.command()
@_agent
@_dry
@click.pass_obj
def uninstall(app: AppContext, agents: tuple[str, ...], dry_run: bool) -> None:
    """Take memoryd out of every agent found (memories stay)."""
    _run(app, agents, dry_run, remove=True)
