"""Codex's own configuration writer: `codex app-server` (JSON-RPC over stdio), as CODEX.md shows.

Codex runs a hook only once it is trusted, and trust is per content hash (an edited hook
is untrusted again). `hooks/list` says what Codex sees and trusts; `config/batchWrite`
writes `config.toml` with Codex's own editor (its formatting kept; a value of None with
"replace" deletes a key, giving back the file as it was).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TIMEOUT_S = 20


class AppServerError(Exception):
    """`codex app-server` could not be run or refused a request; the message says which."""


class AppServer:
    """One `codex app-server` process (a context manager)."""

    def __init__(self, codex: str, env: Mapping[str, str]) -> None:
        try:
            self.proc = subprocess.Popen(
                [codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=dict(env), text=True,
            )  # fmt: skip
        except OSError as exc:
            raise AppServerError(f"cannot run {codex} app-server: {exc}") from exc
        self._id = 0
        self.call("initialize", {"clientInfo": {"name": "memoryd", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request's result (notifications in between are skipped)."""
        self._id += 1
        try:
            self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
            assert self.proc.stdout is not None
            while line := self.proc.stdout.readline():
                message = json.loads(line)
                if message.get("id") == self._id:
                    if "error" in message:
                        raise AppServerError(f"codex app-server {method}: {message['error']}")
                    return message.get("result") or {}
        except (OSError, ValueError) as exc:
            raise AppServerError(f"codex app-server {method}: {exc}") from exc
        raise AppServerError(f"codex app-server ended before answering {method}")

    def hooks(self, cwd: Path) -> list[dict[str, Any]]:
        """Every hook Codex sees from `cwd`: key, command, currentHash, trustStatus…"""
        data = self.call("hooks/list", {"cwds": [str(cwd)]}).get("data") or []
        return [hook for entry in data for hook in entry.get("hooks") or []]

    def write(self, edits: Sequence[tuple[str, Any]]) -> None:
        """Set (or, with None, delete) each key path in config.toml."""
        if edits:
            strategy = [{"keyPath": key, "value": value, "mergeStrategy": "upsert" if value is not None else "replace"}
                        for key, value in edits]  # fmt: skip
            self.call("config/batchWrite", {"edits": strategy})

    def __enter__(self) -> AppServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def trust_key(key: str) -> str:
    return f'hooks.state."{key}"'
