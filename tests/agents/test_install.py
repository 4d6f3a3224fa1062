"""`memoryd install` / `uninstall` for Claude Code and Codex, run as the user runs them, on
settings files the user already has: memoryd's entries go in, everything else keeps its
bytes, and an uninstall gives back the very files the install found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon import hooksettings
from tests.agents.agents_bin import CODEX_BIN, need

USER_SETTINGS = """{
    "model": "opus",
    // a comment the user wrote
    "hooks": {
        "PostToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "~/bin/audit.sh" } ] } ],
        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ]
    },
    "permissions": { "allow": ["Bash(ls:*)"] }
}
"""
USER_CLAUDE_JSON = '{"numStartups": 3, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp"}}, "theme": "dark"}'
USER_CONFIG_TOML = '''model = "gpt-5"   # mine
approval_policy = "on-request"

[mcp_servers.github]
command = "gh-mcp"
'''


def memoryd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "daemon", *args], capture_output=True, text=True, env=env, timeout=120)


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMORYD_CODEX_BIN"}
    env["PATH"] = "/usr/bin:/bin"  # no claude, no codex on PATH
    return {**env, **(extra or {})}


def _snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


def test_claude_install_keeps_the_users_bytes_and_uninstall_gives_them_back(home):  # noqa: ANN001
    settings, state = home.root / ".claude" / "settings.json", home.root / ".claude.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS)
    state.write_text(USER_CLAUDE_JSON)
    before = _snapshot(settings, state)
    env = _env()
    dry = memoryd("install", "--agent", "claude", "--dry-run", env=env)
    assert dry.returncode == 0 and f"would write {settings}" in dry.stdout and _snapshot(settings, state) == before
    done = memoryd("install", "--agent", "claude", env=env)
    assert done.returncode == 0, done.stderr
    text = settings.read_text()
    assert set(hooksettings.installed(text)) == set(hooksettings.EVENTS)
    assert "// a comment the user wrote" in text and "~/bin/audit.sh" in text and "notify-send done" in text
    assert json.loads(state.read_text())["mcpServers"]["memoryd"]["args"] == ["-m", "daemon.mcpfront"]
    again = memoryd("install", "--agent", "claude", env=env)
    assert "unchanged: Claude Code hooks" in again.stdout and "write" not in again.stdout
    gone = memoryd("uninstall", "--agent", "claude", env=env)
    assert gone.returncode == 0, gone.stderr
    assert _snapshot(settings, state) == before


def test_claude_files_memoryd_created_are_removed_again(home):  # noqa: ANN001
    settings, state = home.root / ".claude" / "settings.json", home.root / ".claude.json"
    env = _env({"CLAUDE_CONFIG_DIR": str(home.root / ".claude")})
    assert memoryd("install", "--agent", "claude", env=env).returncode == 0
    assert (home.root / ".claude" / ".claude.json").exists() and settings.exists()
    assert memoryd("uninstall", "--agent", "claude", env=env).returncode == 0
    assert not settings.exists() and not (home.root / ".claude" / ".claude.json").exists() and not state.exists()


def test_codex_without_its_binary_writes_hooks_and_says_they_need_trust(home):  # noqa: ANN001
    codex = home.root / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(USER_CONFIG_TOML)
    before = _snapshot(codex / "config.toml", codex / "hooks.json")
    env = _env()
    done = memoryd("install", "--agent", "codex", env=env)
    assert done.returncode == 1 and "only once trusted" in done.stdout  # the user has something to do
    assert set(hooksettings.installed((codex / "hooks.json").read_text())) == set(hooksettings.EVENTS)
    assert "[mcp_servers.memoryd]" in (codex / "config.toml").read_text()
    assert memoryd("uninstall", "--agent", "codex", env=env).returncode == 0
    assert _snapshot(codex / "config.toml", codex / "hooks.json") == before


def _trust(env: dict[str, str], home: Path) -> list[str]:
    from daemon.codex.appserver import AppServer

    with AppServer(CODEX_BIN, env) as server:
        return [h["trustStatus"] for h in server.hooks(home) if hooksettings.MARK in h["command"]]


def test_codex_install_trusts_its_hooks_through_codex_and_uninstall_restores(home):  # noqa: ANN001
    need(CODEX_BIN)
    codex = home.root / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(USER_CONFIG_TOML)
    user_hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    (codex / "hooks.json").write_text(json.dumps(user_hooks, indent=2) + "\n")
    before = _snapshot(codex / "config.toml", codex / "hooks.json")
    env = _env({"MEMORYD_CODEX_BIN": CODEX_BIN})
    done = memoryd("install", "--agent", "codex", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _trust(env, home.root) == ["trusted"] * len(hooksettings.EVENTS)
    status = json.loads(memoryd("status", "--json", env=env).stdout)["agents"]["codex"]
    assert status["hooks_trusted"] is True and status["mcp"] is True
    gone = memoryd("uninstall", "--agent", "codex", env=env)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert _snapshot(codex / "config.toml", codex / "hooks.json") == before


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_status_shows_each_agent(home, agent):  # noqa: ANN001
    env = _env()
    (home.root / (".claude" if agent == "claude" else ".codex")).mkdir()
    memoryd("install", "--agent", agent, env=env)
    data = json.loads(memoryd("status", "--json", env=env).stdout)["agents"][agent]
    assert data["found"] and data["hooks"] == sorted(hooksettings.EVENTS)
    text = memoryd("status", env=env).stdout
    assert ("Claude Code" if agent == "claude" else "Codex") + ":" in text
