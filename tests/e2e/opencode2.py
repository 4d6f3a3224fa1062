"""Drive the real OpenCode 2.0 CLI offline, for end-to-end tests (the 1.x harness, adapted).

The binary is the npm platform package ``@opencode/cli-linux-x64-baseline@2.0.15`` that
``.ci/install-opencode`` unpacks under ``<repo>/.cache/opencode2`` (the ``@opencode/cli``
launcher is not on the registry here). :class:`OpenCode2Home` is an
:class:`tests.e2e.opencode.OpenCodeHome` whose ``run`` is ``opencode run --standalone
--auto``: without ``--standalone`` the CLI starts a background service on the fixed port
127.0.0.1:49374 that outlives the test and collides across fake homes. Its database
helpers read 2.0's ``session_v2`` / ``session_message`` tables. :func:`serve` starts a
private ``opencode serve`` on a free port for API calls (compaction), killed by its
process group.

2.0's tools differ from 1.x's: ``bash`` is ``shell``, ``task`` is ``subagent``, and
``read``/``edit``/``write`` take ``path``; :func:`v2_steps` translates a 1.x script.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import secrets
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.opencode import (
    REPO,
    OpenCodeError,
    OpenCodeHome,
    _is_executable,
    _is_native,
    _kill_group,
    require_binary,
)

OPENCODE2_VERSION = "2.0.15"
INSTALL_PREFIX2 = REPO / ".cache" / "opencode2"
PLATFORM_PACKAGE = "@opencode/cli-linux-x64-baseline"
#: 2.0 spells some tools and arguments differently from 1.x.
TOOL_NAMES = {"bash": "shell", "task": "subagent"}
ARG_NAMES = {"filePath": "path", "subagent_type": "agent"}


def opencode2_binary() -> Path | None:
    """The real OpenCode 2 executable, or None when it is not installed.

    ``$MEMORYD_OPENCODE2_BIN``, else ``<repo>/.cache/opencode2/package/bin/opencode``
    (what ``.ci/install-opencode`` unpacks). ``PATH`` is not searched: an ``opencode``
    there is usually 1.x.
    """
    explicit = os.environ.get("MEMORYD_OPENCODE2_BIN")
    path = Path(explicit).expanduser() if explicit else INSTALL_PREFIX2 / "package" / "bin" / "opencode"
    return path if _is_executable(path) and _is_native(path) else None


def require_opencode2() -> Path:
    """The OpenCode 2 binary for a test; skip without it, or fail if ``MEMORYD_REQUIRE_E2E=1``."""
    return require_binary(opencode2_binary(), OPENCODE2_VERSION, "MEMORYD_OPENCODE2_BIN")


def v2_steps(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A 1.x script's steps with 2.0's tool and argument names."""
    out = []
    for step in steps:
        step = dict(step)
        if step.get("tools"):
            step["tools"] = [
                {
                    **tool,
                    "name": TOOL_NAMES.get(tool["name"], tool["name"]),
                    "args": {ARG_NAMES.get(k, k): v for k, v in (tool.get("args") or {}).items()},
                }
                for tool in step["tools"]
            ]
        out.append(step)
    return out


def v2_scenario(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """A ``scenarios.json`` entry with every script translated by :func:`v2_steps`."""
    out = dict(scenario)
    out["steps"] = v2_steps(scenario.get("steps", []))
    out["children"] = [{**c, "steps": v2_steps(c.get("steps", []))} for c in scenario.get("children", [])]
    return out


class OpenCode2Home(OpenCodeHome):
    """A fake home for OpenCode 2.0 (same config: 2.0 translates the 1.x shapes)."""

    SESSION_TABLE = "session_v2"

    def __init__(self, root: Path, model_url: str, *, binary: Path | None = None, **kwargs: Any) -> None:
        super().__init__(root, model_url, binary=binary or opencode2_binary(), **kwargs)

    @property
    def log_dir(self) -> Path:
        """2.0 writes one file, ``<data>/log/opencode.log``."""
        return self.data / "opencode" / "log"

    def run(
        self,
        prompt: str,
        worktree: Path,
        session: str | None = None,
        timeout: float = 120.0,
        extra_args: Sequence[str] = (),
        verbatim: bool = False,
        server: Server | None = None,
    ) -> str:
        """Run ``opencode run --standalone --auto`` in ``worktree``; return the session id.

        With ``server`` (from :func:`serve`) the run connects to that server instead of
        starting its own (``--server``), as the TUI uses the background service.

        2.0's ``run`` has no ``--dir``: the working directory is the session's. No ``--``
        before the prompt: 2.0 would store the message twice. The rest is as
        :meth:`OpenCodeHome.run`.
        """
        if self.binary is None:
            raise OpenCodeError("OpenCode 2 binary not found; run .ci/install-opencode")
        where = ["--server", server.url] if server else ["--standalone"]
        args = [str(self.binary), "run", *where, "--auto", "--format", "json"]
        if session:
            args += ["--session", session]
        args += [*extra_args, *(prompt.split(" ") if verbatim else [prompt])]
        before = self._root_session_ids()
        started = time.monotonic()
        env = {**self.env, "OPENCODE_SERVER_PASSWORD": server.password} if server else self.env
        stdout, stderr, code = _communicate(args, worktree, env, timeout, self._describe)
        return self._finish(args, code, stdout, stderr, started, session, before)

    # -- reading the database (2.0's tables) ---------------------------------------------

    def _root_session_ids(self) -> set[str]:
        if not self.db_path.exists() or not self._has_table("session_v2"):
            return set()
        return {r["id"] for r in self._query("SELECT id FROM session_v2 WHERE parent_id IS NULL")}

    def _has_table(self, name: str) -> bool:
        rows = self._query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return bool(rows)

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """The session's ``session_message`` rows by ``seq``, ``data`` decoded from JSON."""
        rows = self._query("SELECT * FROM session_message WHERE session_id = ? ORDER BY seq", (session_id,))
        return [{**r, "data": json.loads(r["data"])} for r in rows]

    def parts(self, session_id: str) -> list[dict[str, Any]]:
        """2.0 has no part table: the content items of the session's assistant rows."""
        return [
            {"message_id": m["id"], "data": item}
            for m in self.messages(session_id)
            if m["type"] == "assistant"
            for item in m["data"].get("content", [])
        ]

    def log_lines(self, needle: str) -> list[str]:
        """Lines of OpenCode's log holding ``needle`` (e.g. a plugin's LoadError)."""
        return [line for line in self._log_text().splitlines() if needle in line]


def _communicate(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float, describe: Any
) -> tuple[str, str, int]:
    """Run ``args`` in its own process group; kill the whole group on exit or timeout."""
    proc = subprocess.Popen(
        list(args), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        errors="replace", start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        raise OpenCodeError(describe(f"timed out after {timeout:.0f}s", args, stdout, stderr)) from None
    finally:
        _kill_group(proc)  # MCP servers and shell tools it left in the group
    return stdout, stderr, proc.returncode


@dataclass
class Server:
    """A running ``opencode serve``: its URL and its password (Basic auth, user ``opencode``)."""

    url: str
    password: str

    def post(self, path: str, body: Mapping[str, Any] | None = None, timeout: float = 90.0) -> Any:
        """POST JSON to ``path`` (e.g. ``/api/session/<id>/compact``); the decoded answer."""
        return self._call("POST", path, json.dumps(body or {}).encode(), timeout)

    def get(self, path: str, timeout: float = 30.0) -> Any:
        """GET ``path`` (e.g. ``/api/mcp?directory=…``); the decoded answer."""
        return self._call("GET", path, None, timeout)

    def _call(self, method: str, path: str, data: bytes | None, timeout: float) -> Any:
        token = base64.b64encode(f"opencode:{self.password}".encode()).decode()
        headers = {"Content-Type": "application/json", "Authorization": f"Basic {token}"}
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw.strip() else None

    def wait_for_mcp(self, directory: Path, name: str, timeout: float = 90.0) -> None:
        """Wait until MCP server ``name`` is connected for ``directory`` (2.0 connects them
        in the background and does not wait before a session's first model request)."""
        query = urllib.parse.urlencode({"directory": str(directory)})
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            servers = {s["name"]: s["status"]["status"] for s in self.get(f"/api/mcp?{query}")["data"]}
            status = servers.get(name)
            if status == "connected":
                return
            if status == "failed":
                break
            time.sleep(0.25)
        raise OpenCodeError(f"MCP server {name!r} not connected for {directory} (last status {status!r})")


@contextlib.contextmanager
def serve(home: OpenCodeHome, cwd: Path, timeout: float = 60.0) -> Iterator[Server]:
    """A private ``opencode serve`` on a free loopback port.

    Not ``--service``: that one binds the fixed port 49374 and outlives the test. The
    server and everything it started are killed by process group when the block ends.
    """
    password = secrets.token_urlsafe(24)  # serve and `run --server` read it from the environment
    proc = subprocess.Popen(
        [str(home.binary), "serve", "--port", "0", "--hostname", "127.0.0.1"],
        cwd=cwd, env={**home.env, "OPENCODE_SERVER_PASSWORD": password}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc, lines), daemon=True)
    reader.start()
    try:
        yield Server(_address(proc, lines, timeout), password)
    finally:
        _kill_group(proc)
        proc.wait(10)
        reader.join(5)


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put(line)
    proc.stdout.close()


def _address(proc: subprocess.Popen[str], lines: queue.Queue[str], timeout: float) -> str:
    """The ``http://127.0.0.1:PORT`` that ``opencode serve`` prints on start."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        if match := re.search(r"listening on (http://127\.0\.0\.1:\d+)", line):
            return match.group(1)
    raise OpenCodeError(f"opencode serve printed no address in {timeout:.0f}s: {''.join(seen)[-2000:]}")
