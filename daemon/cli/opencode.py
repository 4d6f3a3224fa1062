"""`memoryd opencode install|uninstall|status`: the OpenCode plugin and MCP entry.

Planning and file formats live in daemon.opencode.install; this module prints.
"""

from __future__ import annotations

import json

import click

from daemon.cli.app import EXIT_FAILED, AppContext


def _command(app: AppContext) -> list[str]:
    """How OpenCode starts this memoryd: the same absolute command `memoryd mcp --print-config` gives."""
    from daemon.cli.mcp import memoryd_command

    return memoryd_command(app)


@click.group()
def opencode() -> None:
    """Make memory arrive in every OpenCode session by itself.

    One install serves OpenCode 1.x and 2.x. `install` writes memoryd's plugin into
    OpenCode's global plugins/ folder and adds the `memoryd` MCP server (recall,
    remember, forget, inspect tools) to OpenCode's global opencode.json or
    opencode.jsonc (comments kept), merging into what is there. The plugin gives each
    session the block `memoryd context` shows (kept for the whole session), turns
    compaction into a save point, and tells the daemon when a turn ends so its note is
    written at once. `status` also names the OpenCode version(s) on PATH and what
    OpenCode's log says about loading the plugin.

    \b
    Examples:
      memoryd opencode install --dry-run
      memoryd opencode install
      memoryd opencode status
      memoryd opencode uninstall
    """


def _run(plan, dry_run: bool) -> None:  # noqa: ANN001 - daemon.opencode.install.Plan
    for line in plan.describe():
        click.echo(("would " if dry_run and not line.startswith(("unchanged", "/")) else "") + line)
    if not dry_run:
        plan.apply()
    if plan.manual:
        raise SystemExit(EXIT_FAILED)


@opencode.command()
@click.option("--dry-run", is_flag=True, help="Show what would be written; change nothing.")
@click.pass_obj
def install(app: AppContext, dry_run: bool) -> None:
    """Install the plugin and the MCP entry (safe to run again: it updates them)."""
    from daemon.opencode.install import config_dir, plan_install

    plan = plan_install(config_dir(), _command(app), app.paths.socket_file)
    _run(plan, dry_run)
    if not dry_run:
        click.echo("Done. New OpenCode sessions get memory; see it with `memoryd context`.")
        click.echo("Keep the daemon running (`memoryd service install`) so notes are written as sessions end.")


@opencode.command()
@click.option("--dry-run", is_flag=True, help="Show what would be removed; change nothing.")
def uninstall(dry_run: bool) -> None:
    """Remove memoryd's plugin and MCP entry from OpenCode (memories stay)."""
    from daemon.opencode.install import config_dir, plan_uninstall

    _run(plan_uninstall(config_dir()), dry_run)


@opencode.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """Say whether the plugin and MCP entry are installed, current and loaded, and by which OpenCode."""
    from daemon.opencode.hosts import find_hosts, log_dir, plugin_load
    from daemon.opencode.install import config_dir, describe_install, install_status

    state = install_status(config_dir())
    hosts = find_hosts()
    load = plugin_load(log_dir(), state.plugin)
    if as_json:
        click.echo(json.dumps({
            "plugin": str(state.plugin), "plugin_version": state.plugin_version,
            "current_version": state.current_version, "outdated": state.plugin_outdated,
            "mcp_registered": state.mcp_registered, "config": str(state.config),
            "opencode": [{"path": str(h.path), "version": h.version} for h in hosts],
            "plugin_load": {"state": load.state, "detail": load.detail, "log": str(load.log) if load.log else None},
        }))  # fmt: skip
        return
    for line in describe_install(state):
        click.echo(line)
    found = ", ".join(f"{h.version or 'unknown version'} ({h.path})" for h in hosts)
    click.echo(f"OpenCode: {found}" if hosts else "OpenCode: not found on PATH")
    if load.state == "failed":
        click.echo(f"plugin load: FAILED, OpenCode skipped it: {load.detail} (in {load.log})")
    elif load.state == "loaded":
        click.echo(f"plugin load: loaded ({load.detail}, {load.log})")
    else:
        click.echo("plugin load: no OpenCode log line names it yet (OpenCode 1.x logs only failures; "
                   "start a session and check again)")  # fmt: skip
    if not state.plugin_installed or state.plugin_outdated or not state.mcp_registered or load.state == "failed":
        raise SystemExit(EXIT_FAILED)
