"""`memoryd ui`: open the local viewer in the browser (the daemon's, or one served here)."""

from __future__ import annotations

import click

from daemon.cli.app import EXIT_FAILED, AppContext, fail


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on (127.0.0.1 or ::1).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port (default: any free one).")
@click.option("--no-browser", is_flag=True, help="Print the address instead of opening a browser.")
@click.option("--standalone", is_flag=True, help="Serve the viewer from this command even when the daemon runs.")
@click.pass_obj
def ui(app: AppContext, host: str, port: int, no_browser: bool, standalone: bool) -> None:
    """Open the viewer: sessions, memories, search, and what each session was given.

    The running daemon serves it (started on this first request); without a daemon
    this command serves it until Ctrl-C. It listens on this machine's loopback
    interface only, and the address it opens carries this install's secret once (then
    a cookie does): other users and sites cannot read or change your memories.

    \b
    Examples:
      memoryd ui
      memoryd ui --no-browser          # print the address (it holds the secret)
      memoryd ui --standalone --port 8765
    """
    from daemon.ui.security import NotLoopback, load_secret, loopback_host

    try:
        loopback_host(host)
    except NotLoopback as exc:
        fail(str(exc))
    app.make_state_private()
    secret = load_secret(app.paths.state_dir)
    custom = host != "127.0.0.1" or port != 0
    if not standalone and not custom:
        daemon_port = _daemon_viewer(app)
        if daemon_port is not None:
            from daemon.ui.server import url_of

            _open(url_of(daemon_port, secret), no_browser, "the daemon serves it")
            return
    _serve_here(app, host, port, no_browser)


def _daemon_viewer(app: AppContext) -> int | None:
    """The port of the running daemon's viewer (started now if need be), or None without one."""
    from daemon.service.context_server import request
    from daemon.service.lock import read_lock

    info = read_lock(app.paths.lock_file)
    if not (info and info.alive and app.paths.socket_file.exists()):
        return None
    try:
        status, data = request(app.paths.socket_file, "POST", "/ui", timeout=10.0)
    except (OSError, ValueError) as exc:
        click.echo(f"memoryd: the daemon did not answer ({exc}): serving the viewer here instead", err=True)
        return None
    if status != 200 or not isinstance(data.get("port"), int):
        click.echo(f"memoryd: the daemon serves no viewer ({data.get('error', status)}): serving it here", err=True)
        return None
    return data["port"]


def _open(url: str, no_browser: bool, who: str) -> None:
    click.echo(f"memoryd viewer ({who}): {url}")
    if not no_browser:
        import webbrowser

        if not webbrowser.open(url):
            click.echo("memoryd: no browser found: open the address above yourself", err=True)


def _serve_here(app: AppContext, host: str, port: int, no_browser: bool) -> None:
    from daemon.ui.viewer import Viewer
    from daemon.ui.security import load_secret
    from daemon.ui.server import bind_loopback, serve_foreground

    try:
        sock = bind_loopback(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_FAILED)
    config = app.config
    viewer = Viewer(lambda: config, load_secret(app.paths.state_dir), daemon=False)
    click.echo("No daemon runs: serving the viewer from here until Ctrl-C.", err=True)
    try:
        serve_foreground(viewer, sock, lambda url: _open(url, no_browser, "standalone"))
    except KeyboardInterrupt:
        click.echo("Viewer stopped.", err=True)
