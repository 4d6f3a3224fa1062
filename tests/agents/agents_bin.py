"""Where `.ci/install-agents` puts the real Claude Code and Codex CLIs; tests skip without
them unless MEMORYD_REQUIRE_AGENTS=1 (CI), where their absence fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CACHE = Path(__file__).resolve().parents[2] / ".cache"
CLAUDE_BIN = os.environ.get("MEMORYD_CLAUDE_BIN") or str(
    CACHE / "claude-code" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
)
CODEX_BIN = os.environ.get("MEMORYD_CODEX_BIN_TEST") or str(
    CACHE / "codex" / "node_modules" / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"
)


def need(binary: str) -> None:
    """Skip (or, under MEMORYD_REQUIRE_AGENTS=1, fail) when `binary` is not installed."""
    if os.access(binary, os.X_OK):
        return
    message = f"{binary} not installed: run .ci/install-agents"
    if os.environ.get("MEMORYD_REQUIRE_AGENTS") == "1":
        pytest.fail(message)
    pytest.skip(message)
