"""The daemon's unix socket: HTTP/JSON for the OpenCode plugin, in the state folder (0600).

    GET  /context?dir=DIR&prompt=TEXT&session=ID   the session block (see daemon.memory.context);
                                         `session` (optional): the asking session, whose
                                         own note is never previewed
    POST /idle   {"session_id": "ses_…"}  OpenCode says a session went idle: note it now
    POST /hook   {"agent", "event", "session_id", "cwd", "prompt"}   a Claude Code or Codex
                                         hook: {"context": TEXT} (`daemon.service.hookanswer`)
    GET  /health                         {"ok": true, "pid": …}

Requests are answered by a few kept threads (`socket_pool`: no thread started per
request) from the search index, never through the worker's queue, so a long capture pass
cannot stall a session's start. Answers are cached until the index changes (any commit, by any thread or
process, moves SQLite's `data_version` on a connection that never writes), which keeps a
repeated request well under a millisecond.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from daemon.config import Config
from daemon.logs import get_logger
from daemon.service.socket_pool import AcceptPool, Deadlines

CACHE_ENTRIES = 256
WARM_FOLDERS = 8  # folders whose blocks are rebuilt as soon as a tree changes
MAX_BODY = 64 * 1024  # an idle notice is a few dozen bytes
MAX_PROMPT = 8000  # only the start of a prompt is searched anyway
SESSION_ID_CHARS = 200
MAX_DIR = 4096  # PATH_MAX: a longer dir is no folder
# A whole request (request line, headers, body), however slowly it trickles in: the
# per-read timeout alone lets a client that sends a byte every few seconds stay forever.
REQUEST_DEADLINE_S = 10.0
LISTEN_QUEUE = 128  # many sessions starting at once must not see EAGAIN
# How long a thread holds the GIL while another waits for it (Python's default: 5 ms).
# A context answer gives the GIL up at every SQLite step; beside a busy worker thread (a
# capture pass) each waits up to this long to win it back. Measured at 100k memories, a
# 13-word prompt's answer p50: ~80 ms at 1 ms, ~30 at 0.5, 15-22 at 0.2. The busy thread
# loses ~7 % while answers are served, nothing otherwise (a backfill's rate did not move).
SWITCH_INTERVAL_S = 0.0002


_REQUESTS_LOG = logging.getLogger("memoryd.socket")  # the stdlib logger under ContextServer.log


class _Server:
    """The listening socket and the workers answering it (see `socket_pool`)."""

    def __init__(self, path: Path, context_server: ContextServer) -> None:
        self.context_server = context_server
        self.deadlines = Deadlines()
        self.address = str(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.address)
            listener.listen(LISTEN_QUEUE)
        except OSError:
            listener.close()
            raise
        self.pool = AcceptPool(listener, self.answer, self.finish)

    def answer(self, conn: socket.socket) -> None:
        """One connection, on a pool worker: the handler reads, answers and logs."""
        try:
            _Handler(conn, "unix", self)
        except Exception:  # noqa: BLE001 - one bad request must not end the worker
            self.handle_error()

    def finish(self, conn: socket.socket) -> None:
        """The answer is complete: the client sees its end."""
        try:
            conn.shutdown(socket.SHUT_WR)
        except OSError as exc:  # the client went away first
            self.context_server.log.debug("socket.client_gone", error=f"{type(exc).__name__}: {exc}")

    def handle_error(self) -> None:
        """A request that ended badly: a line in the log, never a traceback on stderr."""
        exc = sys.exc_info()[1]
        log = self.context_server.log
        if isinstance(exc, OSError):  # the client went away, or its deadline passed
            log.debug("socket.client_gone", error=f"{type(exc).__name__}: {exc}")
        else:
            log.warning("socket.request_failed", error=f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        self.pool.close(self.address)
        self.deadlines.stop()


class ContextServer:
    """Serves context and idle notices on `paths.socket_file` until `close()`."""

    def __init__(
        self,
        config: Callable[[], Config],
        on_idle: Callable[[str], None],
    ) -> None:
        self._config = config  # the daemon's current one (a reload replaces it)
        self._on_idle = on_idle
        self.log = get_logger("memoryd.socket")
        self._index_db: Any = None  # one read connection, used under `_build` only
        self._lock = threading.Lock()
        self._build = threading.Lock()
        self._cache: OrderedDict[tuple, dict[str, Any]] = OrderedDict()
        self._cache_version: int | None = None
        self._stable: dict[tuple[str, ...], Any] = {}  # prompt-free parts per set of roots
        self._recent: OrderedDict[str | None, None] = OrderedDict()  # folders served lately
        self._probe: sqlite3.Connection | None = None
        from daemon.memory.workspace import WorkspaceCache  # not at import: `memoryd status` imports `request`

        self._workspaces = WorkspaceCache()  # folder → its trees, checked by a few stats
        self._probe_path: Path | None = None
        self.deadline_s = REQUEST_DEADLINE_S
        self._server: _Server | None = None
        self.path: Path | None = None

    # -- life cycle ---------------------------------------------------------------

    def start(self, path: Path) -> bool:
        """Listen on `path` (mode 0600); False, with a warning, when that cannot be done."""
        try:
            if path.is_socket():
                path.unlink()  # left by a daemon that died: the instance lock says none runs
            old_umask = os.umask(0o177)  # the socket is born 0600: no window for others
            try:
                server = _Server(path, self)
            finally:
                os.umask(old_umask)
        except OSError as exc:
            self.log.warning(
                "socket.unavailable", path=str(path), error=str(exc),
                hint="sessions still get memory: the plugin runs `memoryd context` instead",
            )
            return False
        self._server, self.path = server, path
        server.pool.start()
        self.log.info("socket.listening", path=str(path))
        return True

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None
        with self._build:
            if self._index_db is not None:
                self._index_db.close()
                self._index_db = None
            if self._probe is not None:
                self._probe.close()
                self._probe = None

    # -- answers ------------------------------------------------------------------

    def _index(self, config: Config) -> Any:
        """The search index, opened once (request threads are new for every request);
        call with `_build` held."""
        from daemon.memory.index import open_index

        if self._index_db is None or self._index_db.db_path != config.paths.index_db:
            if self._index_db is not None:
                self._index_db.close()
            self._index_db = open_index(config)
        return self._index_db

    def _version(self, db_path: Path) -> int:
        """The index's change counter, read on a connection that never writes, so that
        every commit, by any thread or process, moves it (SQLite's `data_version`)."""
        if self._probe is None or self._probe_path != db_path:
            if self._probe is not None:
                self._probe.close()
            self._probe = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, check_same_thread=False)
            self._probe_path = db_path
        return self._probe.execute("PRAGMA data_version").fetchone()[0]

    def context(self, directory: str | None, prompt: str, session: str | None = None) -> dict[str, Any]:
        """The payload for `session` in `directory` with this first prompt."""
        from daemon.memory.context import context_payload

        config = self._config()
        settings, paths = config.settings, config.paths
        where = Path(directory) if directory else None
        with self._lock:
            self._recent[directory] = None
            self._recent.move_to_end(directory)
            while len(self._recent) > WARM_FOLDERS:
                self._recent.popitem(last=False)
        # Misses are built one at a time: a first request for a tree indexes it, and
        # a concurrent reader must not see that half done.
        with self._build:
            db_path = paths.index_db  # a property: a new Path each time
            index = self._index(config)  # first: it creates the database the probe reads
            version = self._version(db_path)
            if version != self._cache_version:
                self._cache.clear()
                self._stable.clear()
                self._cache_version = version
            ws = self._workspaces.open(config, where, index)
            # Which trees exist is part of the key: a `.memory` made, or a worktree moved,
            # changes the answer before the index does.
            trees = (ws.project, ws.project is not None and ws.project.exists(), ws.global_root.exists())
            key = (directory, prompt, session, id(settings), trees)
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
            ws.trust_index = True  # the daemon keeps the trees it watches indexed
            payload = context_payload(
                ws, settings.inject, where, prompt, datetime.now(UTC), stable_cache=self._stable, session=session
            )
            if self._version(db_path) != version:  # a commit meanwhile: keep nothing
                self._stable.clear()
            else:
                self._cache[key] = payload
                while len(self._cache) > CACHE_ENTRIES:
                    self._cache.popitem(last=False)
        return payload

    def warm(self) -> None:
        """Rebuild the blocks of recently served folders now (the worker calls this after a
        tree changed), so the next session start there finds them ready."""
        with self._lock:
            recent = list(self._recent)
        self._workspaces.clear()  # a tree moved or went away: resolve its folders again
        for directory in recent:
            self.context(directory, "")

    def idle(self, session_id: str) -> None:
        self._on_idle(session_id)

    def hook(self, data: dict[str, Any]) -> dict[str, Any]:
        """A Claude Code or Codex hook call: the context it adds (see `hookanswer`)."""
        from daemon.service.hookanswer import HookAnswers

        answers = HookAnswers(lambda: self._config().paths.state_dir, self.context, self.idle)
        cwd = data.get("cwd") if isinstance(data.get("cwd"), str) and os.path.isabs(data["cwd"]) else None
        prompt = str(data.get("prompt") or "")[:MAX_PROMPT].replace("\0", " ")
        text = answers.answer(str(data.get("agent")), str(data.get("event")), data["session_id"], cwd, prompt)
        return {"context": text}


class _Handler(BaseHTTPRequestHandler):
    """One request; `self.server.context_server` answers it."""

    protocol_version = "HTTP/1.1"
    timeout = 5  # a client that opens a connection and says nothing

    def address_string(self) -> str:  # unix sockets have no peer address
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        # Asked first: a dropped debug line still cost a pass through structlog's chain.
        if _REQUESTS_LOG.isEnabledFor(logging.DEBUG):
            self.server.context_server.log.debug("socket.request", line=format % args)

    def handle_one_request(self) -> None:
        """One request within `deadline_s`; past it the connection is shut and dropped."""
        self._expired = False
        self.server.deadlines.add(self, self.server.context_server.deadline_s)
        try:
            super().handle_one_request()
        finally:
            self.server.deadlines.remove(self)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server answers an unknown method with 501; it is the client's mistake.
        if code == 501:
            code, message = 405, f"method {self.command!r} not allowed: GET /context, POST /idle"
        super().send_error(code, message, explain)

    def expire(self) -> None:
        """The deadline passed (called by the reaper): shut the connection."""
        self._expired = True
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)  # the blocked read returns at once
        except OSError as exc:  # the request ended just now: nothing to cut
            self.server.context_server.log.debug("socket.deadline_late", error=str(exc))

    def _too_late(self) -> bool:
        """The deadline cut the request short: what arrived may be incomplete, do nothing."""
        if self._expired:
            self.server.context_server.log.debug("socket.deadline", path=self.path[:200])
            self.close_connection = True
        return self._expired

    def _reply(self, status: int, data: dict[str, Any]) -> None:
        body = json.dumps(data, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        # The head and the body in one write: the client wakes up once, not twice.
        self._headers_buffer.append(b"\r\n" + body)
        self.flush_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self._too_late():
            return
        url = urlsplit(self.path)
        if url.path == "/health":
            self._reply(200, {"ok": True, "pid": os.getpid()})
            return
        if url.path != "/context":
            self._reply(404, {"error": f"no such endpoint {url.path!r}: GET /context, POST /idle"})
            return
        query = parse_qs(url.query)
        directory = query.get("dir", [""])[0] or None
        prompt = query.get("prompt", [""])[0][:MAX_PROMPT]
        session = query.get("session", [""])[0][:SESSION_ID_CHARS].replace("\0", "") or None
        if directory is not None and ("\0" in directory or len(directory) > MAX_DIR or not os.path.isabs(directory)):
            self._reply(400, {"error": f"dir must be an absolute path (at most {MAX_DIR} characters, no NUL)"})
            return
        prompt = prompt.replace("\0", " ")
        try:
            payload = self.server.context_server.context(directory, prompt, session)
        except Exception as exc:  # noqa: BLE001 - one bad request must not end the server
            self.server.context_server.log.exception("socket.context_failed", dir=directory, error=str(exc))
            self._reply(500, {"error": f"context failed: {exc}"})
            return
        self._reply(200, payload)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self._too_late():
            return
        route = urlsplit(self.path).path
        if route not in ("/idle", "/hook"):
            self._reply(404, {"error": f"no such endpoint {self.path[:200]!r}: GET /context, POST /idle, POST /hook"})
            return
        declared = [value.strip() for value in self.headers.get_all("Content-Length") or ["0"]]
        # "abc", "-5", "1e3", "²" (a digit to isdigit(), not to int()), two of them: no length
        length = int(declared[0]) if len(declared) == 1 and declared[0].isascii() and declared[0].isdigit() else -1
        if not 0 < length <= MAX_BODY:
            self._reply(400, {"error": "send a JSON body {\"session_id\": …}"})
            return
        try:
            body = self.rfile.read(length)
            if self._too_late() or len(body) < length:  # cut off, or the client gave up
                self.close_connection = True
                return
            data = json.loads(body)
            session_id = data["session_id"]
        except (ValueError, KeyError, TypeError):
            self._reply(400, {"error": "the body must be JSON {\"session_id\": \"ses_…\"}"})
            return
        if not isinstance(session_id, str) or not 0 < len(session_id) <= SESSION_ID_CHARS:
            self._reply(400, {"error": "session_id must be a non-empty string"})
            return
        if route == "/hook":
            self._hook(data)
            return
        self.server.context_server.idle(session_id)
        self._reply(202, {"ok": True})

    def _hook(self, data: dict[str, Any]) -> None:
        try:
            self._reply(200, self.server.context_server.hook(data))
        except ValueError as exc:  # an unknown agent
            self._reply(400, {"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - one bad request must not end the server
            self.server.context_server.log.exception("socket.hook_failed", error=str(exc))
            self._reply(500, {"error": f"hook failed: {exc}"})



def request(path: Path, method: str, target: str, body: dict[str, Any] | None = None, timeout: float = 2.0) -> tuple[int, dict[str, Any]]:
    """One HTTP/JSON request over the unix socket (for `status` and tests)."""
    payload = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {target} HTTP/1.1\r\nHost: memoryd\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        connect(sock, path, timeout)
        sock.sendall(head.encode() + payload)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    header, _, content = raw.partition(b"\r\n\r\n")
    status = int(header.split(b" ", 2)[1])
    return status, json.loads(content or b"{}")


def connect(sock: socket.socket, path: Path, timeout: float) -> None:
    """Connect, waiting out a full listen queue (a burst of sessions starting at once: a
    unix socket answers EAGAIN then, where TCP would make the client wait)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock.connect(str(path))
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
