"""Serving the viewer: a loopback socket, uvicorn on an event loop of its own.

`memoryd ui` asks the running daemon to start it (one thread, started on that first
request: a daemon nobody opens the viewer of runs no server at all), or serves it in the
foreground when no daemon runs. The daemon's viewer stops after IDLE_STOP_S without a
request (uvicorn wakes ten times a second while it serves: ~2 ms of CPU a second), and
the next `memoryd ui` starts it again, on the same port when that is free.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from daemon.ui.security import TOKEN_PARAM, load_secret, loopback_host

if TYPE_CHECKING:
    import uvicorn

    from daemon.config import Config
    from daemon.ui.viewer import Viewer

log = logging.getLogger("memoryd.ui")
IDLE_STOP_S = 30 * 60


def bind_loopback(host: str, port: int) -> socket.socket:
    """A listening socket on a loopback address (NotLoopback for any other)."""
    address = loopback_host(host)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(64)
        sock.set_inheritable(False)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(port: int, secret: str, path: str = "/") -> str:
    """The address `memoryd ui` opens: it carries the secret this once."""
    return f"http://127.0.0.1:{port}{path}?{TOKEN_PARAM}={secret}"


def _server(viewer: Viewer, sock: socket.socket, idle_stop_s: float | None = None) -> uvicorn.Server:
    """uvicorn serving the viewer on `sock`; with `idle_stop_s`, it ends once that long unused."""
    import uvicorn

    from daemon.ui.app import make_app

    class Server(uvicorn.Server):
        async def on_tick(self, counter: int) -> bool:
            if await super().on_tick(counter):
                return True
            return idle_stop_s is not None and time.monotonic() - viewer.last_request > idle_stop_s

    viewer.port = sock.getsockname()[1]
    config = uvicorn.Config(
        make_app(viewer), log_level="warning", access_log=False, lifespan="off", server_header=False,
        date_header=False, proxy_headers=False, timeout_keep_alive=5,
    )  # fmt: skip
    return Server(config)


class RunningViewer:
    """A viewer served on a thread of its own until `close()`."""

    def __init__(self, viewer: Viewer, sock: socket.socket, idle_stop_s: float | None = None) -> None:
        self.viewer = viewer
        self.sock = sock
        self.server = _server(viewer, sock, idle_stop_s)
        self.port = viewer.port
        self._thread = threading.Thread(target=self._run, name="memoryd-ui", daemon=True)
        self._started = threading.Event()
        self._thread.start()
        self._started.wait(10)

    def _run(self) -> None:
        async def serve() -> None:
            self._started.set()
            await self.server.serve(sockets=[self.sock])

        try:
            asyncio.run(serve())
        finally:
            self._started.set()
            self.viewer.close()

    @property
    def alive(self) -> bool:
        """False once it stopped (asked to, or idle for too long)."""
        return self._thread.is_alive()

    @property
    def url(self) -> str:
        return url_of(self.port, self.viewer.secret)

    def close(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10)
        self.sock.close()


def start_viewer(
    config: Callable[[], Config],
    *,
    daemon: bool,
    host: str = "127.0.0.1",
    port: int = 0,
    idle_stop_s: float | None = None,
) -> RunningViewer:
    """Bind and serve a viewer on its own thread (the daemon's, and the tests')."""
    from daemon.ui.viewer import Viewer

    sock = bind_loopback(host, port)
    viewer = Viewer(config, load_secret(config().paths.state_dir), daemon=daemon)
    return RunningViewer(viewer, sock, idle_stop_s)


def daemon_viewer(config: Callable[[], Config], port: int = 0) -> RunningViewer:
    """What `memoryd run` starts when `memoryd ui` asks: trusting the daemon's index, on
    `port` again if it is free (an open tab keeps working), stopping when long unused."""
    try:
        return start_viewer(config, daemon=True, port=port, idle_stop_s=IDLE_STOP_S)
    except OSError:
        if not port:
            raise
        return start_viewer(config, daemon=True, idle_stop_s=IDLE_STOP_S)


def serve_foreground(viewer: Viewer, sock: socket.socket, ready: Callable[[str], None]) -> None:
    """Serve until Ctrl-C (standalone `memoryd ui`); `ready` gets the URL once listening."""
    server = _server(viewer, sock)

    async def serve() -> None:
        ready(url_of(viewer.port, viewer.secret))
        await server.serve(sockets=[sock])

    try:
        asyncio.run(serve())
    finally:
        viewer.close()
        sock.close()
