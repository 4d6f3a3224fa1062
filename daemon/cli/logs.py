"""`memoryd logs`: the JSON log file, readable, filtered, and followed like `tail -F`."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from daemon.cli.app import EXIT_FAILED, fail

DEFAULT_LAST = 50
_COLORS = {"warning": "yellow", "error": "red", "critical": "red", "debug": "bright_black"}


@click.command(
    epilog="Under systemd the same JSON lines also go to the journal: "
    "`journalctl --user -u memoryd -f`. Under launchd, output from before logging "
    "starts (a crash at start-up) is in launchd.log next to memoryd.log."
)
@click.option("-f", "--follow", is_flag=True, help="Keep printing new lines as they are written (Ctrl-C stops).")
@click.option(
    "--since",
    metavar="WHEN",
    help="Only entries since WHEN: a duration back from now (30s, 10m, 1h30m, 2d, 2w, 6mo, 1y; "
    "m = minutes, mo = months) or an ISO time (local if no zone).",
)
@click.option(
    "--level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    help="Only entries at this level or above.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON lines instead of readable ones.")
@click.option(
    "-n",
    "--lines",
    "last",
    type=click.IntRange(min=0),
    help=f"Show the last N entries first (default {DEFAULT_LAST}, or all of them with --since; 0 with -f: only new ones).",
)
@click.pass_obj
def logs(obj, follow: bool, since: str | None, level: str | None, as_json: bool, last: int | None) -> None:
    """Show memoryd's log: time, level, event, then key=value details.

    Lines that are not JSON (rare: output from outside the logger) are shown as they are
    and never filtered out.
    """
    from daemon.logs import entry_matches, follow_log, format_entry, parse_log_line, parse_since, read_log

    obj.load_despite_errors()  # the log is where one looks when the config is bad
    path = obj.paths.log_file
    try:
        moment = parse_since(since, datetime.now(UTC)) if since else None
    except ValueError as exc:
        fail(f"--since: {exc}")
    if last is None:
        last = None if moment is not None else DEFAULT_LAST

    def show(entry) -> None:
        if as_json:
            click.echo(entry.line)
            return
        click.echo(click.style(format_entry(entry), fg=_COLORS.get(entry.level or "")))

    entries, position = read_log(path, since=moment, min_level=level, last=last)
    if not path.exists() and not entries:
        missing = f"no log at {path} yet: memoryd has not run with this configuration"
        if not follow:
            fail(f"{missing}. Start it with `memoryd run` or `memoryd service install`.", EXIT_FAILED)
        click.echo(f"memoryd: {missing}; waiting for it to appear (Ctrl-C stops).", err=True)
    for entry in entries:
        show(entry)
    if not follow:
        return
    try:
        for line in follow_log(path, start=position):
            entry = parse_log_line(line)
            if entry_matches(entry, moment, level):
                show(entry)
    except KeyboardInterrupt:
        # Ctrl-C is how following ends: no traceback, a clean exit.
        return
