"""Drive `memoryd mcp` as a subprocess with the MCP SDK's own stdio client."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import Home

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def make_git_worktree(path: Path, memory: bool = True) -> Path:
    """Create `path` as a fresh git repository (with a `.memory/` tree unless `memory` is
    False: a project opts in by creating it); return its resolved path."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True, timeout=30)
    if memory:
        (path / ".memory").mkdir(exist_ok=True)
    return path.resolve()


def server_env(home: Home) -> dict[str, str]:
    """The environment the server runs with: the test's home, nothing of the developer's."""
    return {
        "HOME": str(home.root),
        "XDG_CONFIG_HOME": str(home.config),
        "XDG_DATA_HOME": str(home.data),
        "XDG_STATE_HOME": str(home.state),
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": str(REPO),
    }


@dataclass
class Result:
    """One tool call's text and whether the server flagged it as an error."""

    text: str
    is_error: bool


@dataclass
class Session:
    """A connected client with a one-line way to call a tool."""

    client: Client

    async def call(self, tool: str, **arguments: Any) -> Result:
        result = await self.client.call_tool(tool, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        return Result(text, bool(result.is_error))

    async def ok(self, tool: str, **arguments: Any) -> str:
        """Call a tool that must succeed; return its text."""
        result = await self.call(tool, **arguments)
        assert not result.is_error, f"{tool}({arguments}) failed: {result.text}"
        return result.text


@asynccontextmanager
async def connect(home: Home, cwd: Path, *args: str, mode: str = "auto") -> AsyncIterator[Session]:
    """Start `python -m daemon mcp` in `cwd` and connect to it over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "daemon", "mcp", *args], env=server_env(home), cwd=str(cwd)
    )
    stderr = home.root / "mcp-stderr.txt"
    with stderr.open("a", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=60) as client:
            yield Session(client)


def serve(home: Home, cwd: Path, scenario: Callable[[Session], Awaitable[T]], *args: str, mode: str = "auto") -> T:
    """Run `scenario` against one server process in `cwd`; return what it returns."""

    async def main() -> T:
        async with connect(home, cwd, *args, mode=mode) as session:
            return await scenario(session)

    return anyio.run(main)


def memory_files(root: Path) -> list[Path]:
    """The memory files of a tree (not index.md, ROOT.md or hidden files)."""
    if not root.exists():
        return []
    return sorted(p for p in root.glob("*/*.md") if p.name != "index.md" and not p.name.startswith("."))


def field(text: str, name: str) -> str:
    """The value after `name ` in a tool result (e.g. the id in '..., id 3f9a1c2b7d4e)')."""
    start = text.index(f"{name} ") + len(name) + 1
    return text[start:].split(")", 1)[0].split(",", 1)[0].split()[0]
