"""`memoryd status`, per agent beside OpenCode: Claude Code and Codex found, their version,
sessions seen, memoryd's hooks installed and trusted, the last block given, and capture lag."""

from __future__ import annotations

import os
from typing import Any

from daemon.config import Config
from daemon.timefmt import iso

LABELS = {"claude": "Claude Code", "codex": "Codex"}


def gather_agents(config: Config, last_pass_ms: int) -> dict[str, Any]:
    """Each agent's row (plain data); `last_pass_ms`: the newest capture pass (0: none)."""
    from daemon import hookstore
    from daemon.capture.sources import agent_stores
    from daemon.claudecode import install as claude_install
    from daemon.claudecode.reader import ClaudeCodeReader
    from daemon.codex import install as codex_install
    from daemon.codex.reader import CodexReader

    env = dict(os.environ)
    stores = agent_stores(config)
    out: dict[str, Any] = {}
    for agent, reader_type, install in (("claude", ClaudeCodeReader, claude_install), ("codex", CodexReader, codex_install)):
        row = install.install_status(env)
        reader = reader_type(stores[agent]) if agent in stores else None
        newest = reader.newest_update() if reader else None
        last = hookstore.last_injection(config.paths.state_dir, agent)
        row.update(
            store=str(stores.get(agent, "")),
            version=reader.version() if reader else None,
            sessions=reader.session_count() if reader else 0,
            newest=iso(newest) if newest else None,
            lag_s=round((newest - last_pass_ms) / 1000, 1) if newest and newest > last_pass_ms else 0,
            last_injection=iso(last) if last else None,
        )
        out[agent] = row
    return out


def agent_lines(agents: dict[str, Any]) -> list[str]:
    lines = []
    for agent, row in agents.items():
        if not row["found"] and not row["sessions"]:
            lines.append(f"{LABELS[agent]}: not found")
            continue
        version = f" {row['version']}" if row["version"] else ""
        lag = f", {row['lag_s']}s of sessions not looked at yet" if row["lag_s"] else ""
        lines.append(f"{LABELS[agent]}:{version} {row['sessions']} sessions in {row['store']}{lag}")
        hooks = ", ".join(row["hooks"]) or "none (run `memoryd install`)"
        trusted = {True: "trusted", False: "NOT trusted: Codex skips them (run `memoryd install` again)",
                   None: "trust unknown (no codex on PATH)"}[row["hooks_trusted"]] if row["hooks"] else ""  # fmt: skip
        lines.append(f"  hooks: {hooks}" + (f"; {trusted}" if trusted else "") + f"; MCP server {'registered' if row['mcp'] else 'not registered'}")
        lines.append(f"  last block given: {row['last_injection'] or 'never'}")
    return lines
