"""`python -m daemon.mcpfront [memoryd options…]`: `memoryd mcp`, with its handshake answered at once.

`codex exec` sends its first request before an MCP server that takes over ~1 s to list its
tools is ready (measured: a stub that waits 0.7 s is listed, 1.2 s is not), and importing
the MCP SDK alone takes longer here. This front answers the client's `initialize` and
`tools/list` from what the real server answered last time (kept in the state folder, per
memoryd build, arguments and protocol version; the instructions made for this folder,
`daemon.mcpinstructions`), then starts the real server
(`memoryd mcp`, the same process) on a pipe: it is given the same `initialize` (its answer
dropped, and kept for next time, as is its tool list), then everything the client sends.
With nothing kept yet, every byte goes through and the real server's answers are kept;
`memoryd install` has them kept beforehand (`prime`), for the protocol versions Claude Code
and Codex ask for.

It imports almost nothing before the handshake is answered; the real server does the rest.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading

BOOT_INIT = "memoryd-front-initialize"
BOOT_TOOLS = "memoryd-front-tools"
CACHE = "mcp-handshake.json"
END = b'{"memoryd-front": "end"}\n'  # written after the real server: the relay has seen all it sent


def _state_dir() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.environ.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "memoryd")


def _key(args: list[str], init: dict) -> str:
    """What an answer depends on: the server's code, the options, the protocol version."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = [os.stat(os.path.join(here, name)).st_mtime_ns for name in ("mcp.py", "mcpinstructions.py", "__init__.py")]
    version = (init.get("params") or {}).get("protocolVersion", "")
    return hashlib.sha256(json.dumps([code, args, version]).encode()).hexdigest()


def _for_here(result: dict) -> dict:
    """A kept initialize answer, with the instructions the server gives in this folder."""
    from pathlib import Path

    from daemon.mcpinstructions import instructions_for

    return {**result, "instructions": instructions_for(Path(os.getcwd()), False)}


def _load(key: str) -> dict | None:
    try:
        with open(os.path.join(_state_dir(), CACHE), encoding="utf-8") as handle:
            kept = json.load(handle).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return kept if isinstance(kept, dict) and "initialize" in kept and "tools" in kept else None


def _store(key: str, answers: dict) -> None:
    from daemon.files import atomic_write_text, ensure_dir  # after the handshake: not on its path

    path = os.path.join(_state_dir(), CACHE)
    try:
        with open(path, encoding="utf-8") as handle:
            kept = json.load(handle)
    except (OSError, ValueError):
        kept = {}
    kept = {k: v for k, v in kept.items() if k != key} if isinstance(kept, dict) else {}
    kept = dict(list(kept.items())[-15:])  # a few folders' answers, not every folder ever served
    kept[key] = answers
    from pathlib import Path

    ensure_dir(Path(_state_dir()))
    atomic_write_text(Path(path), json.dumps(kept), durable=False)


class _Lines:
    """Lines read straight from a file descriptor (no Python buffer keeps bytes back)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.rest = fd, b""

    def line(self) -> bytes:
        while b"\n" not in self.rest:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                line, self.rest = self.rest, b""
                return line
            self.rest += chunk
        line, _, self.rest = self.rest.partition(b"\n")
        return line + b"\n"


def _send(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message) + "\n").encode())


def _handshake(lines: _Lines, out: int, args: list[str]) -> tuple[list[bytes], dict | None, str, dict]:
    """Answer initialize and tools/list from what is kept; return the lines the real server
    must still see, the client's initialize, the key, and the ids of the client's requests
    whose answers are to be kept (when nothing was)."""
    first = lines.line()
    try:
        init = json.loads(first)
    except ValueError:
        return [first], None, "", {}
    if not isinstance(init, dict) or init.get("method") != "initialize":
        return [first], None, "", {}
    key = _key(args, init)
    kept = _load(key)
    if kept is None:
        return [first], init, key, {"initialize": init.get("id")}
    _send(out, {"jsonrpc": "2.0", "id": init.get("id"), "result": _for_here(kept["initialize"])})
    pending = []
    while True:
        raw = lines.line()
        if not raw:
            break
        try:
            message = json.loads(raw)
        except ValueError:
            message = {}
        if isinstance(message, dict) and message.get("method") == "tools/list":
            _send(out, {"jsonrpc": "2.0", "id": message.get("id"), "result": kept["tools"]})
            break
        if isinstance(message, dict) and message.get("method") == "notifications/initialized":
            continue  # the real server gets its own, after its own initialize
        pending.append(raw)
        if isinstance(message, dict) and "id" in message and "method" in message:
            break  # a request the kept answers cannot serve: the real server takes it from here
    boot = [
        json.dumps({**init, "id": BOOT_INIT}).encode() + b"\n",
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n",
        json.dumps({"jsonrpc": "2.0", "id": BOOT_TOOLS, "method": "tools/list"}).encode() + b"\n",
    ]
    return boot + pending, init, key, {"initialize": BOOT_INIT, "tools": BOOT_TOOLS}


def _feed(lines: _Lines, first: list[bytes], sink: int) -> None:
    for line in first:
        os.write(sink, line)
    while line := lines.line():
        os.write(sink, line)
    os.close(sink)


def _relay(source: int, out: int, key: str, watch: dict) -> None:
    """The real server's answers to the client; those to the front's own requests are dropped,
    and the handshake's answers kept for next time."""
    lines, answers = _Lines(source), {}
    want = {ident: name for name, ident in watch.items() if ident is not None}  # request id → what it answers
    learn_tools = "tools" not in watch  # nothing was kept: the client's own tools/list answer is kept
    while (raw := lines.line()) and raw != END:
        try:
            message = json.loads(raw)
        except ValueError:
            message = {}
        ident = message.get("id") if isinstance(message, dict) else None
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(ident, (str, int)) and ident in want and isinstance(result, dict):
            answers[want.pop(ident)] = result
        elif learn_tools and isinstance(result, dict) and "tools" in result and "tools" not in answers:
            answers["tools"] = result
        if key and "initialize" in answers and "tools" in answers:
            _store(key, answers)
            key = ""
        if ident not in (BOOT_INIT, BOOT_TOOLS):
            os.write(out, raw)


PRIMED_VERSIONS = ("2025-06-18", "2025-11-25")  # what Codex 0.169 and Claude Code 2.1 ask for


def prime(command: list[str], versions: tuple[str, ...] = PRIMED_VERSIONS, timeout: float = 60) -> None:
    """Run the front once per protocol version, as a client would, so that its first real
    client finds the handshake kept. Raises OSError or subprocess errors when it cannot run."""
    import subprocess

    for version in versions:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "memoryd-install", "version": "1"}}}
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for message in (init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}):  # fmt: skip
                proc.stdin.write((json.dumps(message) + "\n").encode())
                proc.stdin.flush()
                if "id" in message:
                    proc.stdout.readline()
        finally:
            proc.stdin.close()
            proc.wait(timeout)


def main(argv: list[str]) -> None:
    args = argv[1:]
    client_in, client_out = os.dup(0), os.dup(1)
    lines = _Lines(client_in)
    first, init, key, watch = _handshake(lines, client_out, args)
    server_in, feed = os.pipe()
    answers, server_out = os.pipe()
    os.dup2(server_in, 0)
    os.dup2(server_out, 1)
    os.close(server_in)
    os.close(server_out)
    threading.Thread(target=_feed, args=(lines, first, feed), daemon=True).start()
    relay = threading.Thread(target=_relay, args=(answers, client_out, key if init else "", watch), daemon=True)
    relay.start()
    from daemon.cli.main import main as memoryd

    sys.argv = ["memoryd", *args, "mcp"]
    try:
        memoryd()
    finally:
        sys.stdout.flush()
        os.write(1, END)  # the SDK keeps a copy of fd 1 open: no end of file to wait for
        relay.join(5)


if __name__ == "__main__":
    main(sys.argv)
