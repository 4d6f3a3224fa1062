"""`memoryd run`: the daemon in the foreground, as the service units start it."""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from daemon.cli.app import EXIT_USAGE, AppContext, fail

if TYPE_CHECKING:
    from daemon.config import Config
    from daemon.ui.server import RunningViewer


@click.command()
@click.pass_obj
def run(app: AppContext) -> None:
    """Run the daemon in the foreground until SIGTERM or Ctrl-C.

    It watches OpenCode's database and turns each session into a note once it has
    been quiet for capture.settle_seconds; keeps index.md, ROOT.md and the search
    index in step with your memory trees; sweeps expired memories on schedule.
    It costs nothing while nothing changes.

    \b
    Usually started by the login service: `memoryd service install`.
    Ctrl-C (or SIGTERM) stops it cleanly; a second Ctrl-C forces it.
    SIGHUP reloads the configuration. Logs: `memoryd logs -f`.
    """
    from daemon.service.units import LAUNCHD_LABEL

    # launchd names the job it started in XPC_SERVICE_NAME (a Terminal has "0" there).
    under_launchd = os.environ.get("XPC_SERVICE_NAME") == LAUNCHD_LABEL
    try:
        _run(app, under_launchd)
    except SystemExit as exc:
        if under_launchd and exc.code == EXIT_USAGE:
            # launchd's KeepAlive cannot exempt one exit status (systemd's unit has
            # RestartPreventExitStatus=2): a bad configuration or a memoryd already
            # running would be restarted every 30 s forever. Exit 0: launchd stops here.
            click.echo("memoryd: not restarting under launchd: fix the problem above, then "
                       f"`launchctl kickstart gui/{os.getuid()}/{LAUNCHD_LABEL}`", err=True)
            raise SystemExit(0) from exc
        raise


def _viewer(config: Callable[[], Config], port: int) -> RunningViewer:
    """The viewer the daemon starts when `memoryd ui` asks (imported only then)."""
    from daemon.ui.server import daemon_viewer

    return daemon_viewer(config, port)


def _run(app: AppContext, under_launchd: bool) -> None:
    from daemon.service.lock import AlreadyRunning
    from daemon.service.loop import Daemon

    app.make_state_private()  # a state folder left 0755 is tightened before anything starts

    # launchd sends stderr to a file nothing rotates: there, log to memoryd.log only.
    # Under systemd, stderr is the journal.
    app.setup_logging(stderr=not under_launchd)
    # `kill -USR1 <pid>` prints every thread's stack to stderr: for "it seems stuck" reports.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    daemon = Daemon(app.config, app.config_path, ui_factory=_viewer)
    try:
        code = daemon.run()
    except AlreadyRunning as exc:
        fail(str(exc), EXIT_USAGE)
    if daemon.abandoned:
        # A worker stuck in a model call would keep the process (and its lock) alive
        # until the call times out: end now; the kernel drops the lock with the process.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)
