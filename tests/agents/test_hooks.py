"""The hook command Claude Code and Codex run (`python -m daemon.hook AGENT`), as they run
it: a subprocess fed the recorded hook inputs on stdin, with and without a daemon."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.homes import CLAUDE, CODEX
from tests.service.conftest import wait_for

LESSON = """---
title: Use pnpm, never npm, in this repo
description: npm rewrites the lockfile and breaks the workspace
kind: lesson
---
Run pnpm install; npm install rewrites pnpm-lock.yaml and the CI cache misses.
"""


@pytest.fixture
def project(home) -> Path:  # noqa: ANN001
    path = home.root / "code" / "shop"
    (path / ".memory" / "lesson").mkdir(parents=True)
    (path / ".memory" / "lesson" / "pnpm.md").write_text(LESSON, encoding="utf-8")
    (path / ".git").mkdir()
    return path


def hook(agent: str, recorded: str, project: Path, session: str, **extra: str) -> tuple[str, subprocess.CompletedProcess]:
    """Run the hook with a recorded input (its cwd and session replaced); return the added context."""
    base = (CLAUDE if agent == "claude" else CODEX) / "hook-inputs" / f"{recorded}.json"
    event = {**json.loads(base.read_text()), "cwd": str(project), "session_id": session, **extra}
    done = subprocess.run([sys.executable, "-m", "daemon.hook", agent], input=json.dumps(event), capture_output=True,
                          text=True, env=dict(os.environ), timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return "", done
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == event["hook_event_name"]
    return out["additionalContext"], done


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_one_block_per_session_from_the_daemon(home, project, daemon, notify, agent):  # noqa: ANN001
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    block, _ = hook(agent, "SessionStart-startup", project, "s-1")
    assert "Use pnpm, never npm" in block and "<memoryd-context>" in block and len(block) < 10_000
    assert ("ToolSearch" in block) == (agent == "claude") and "mcp__memoryd" in block
    # A lesson learned meanwhile: the running session's block does not move...
    (project / ".memory" / "lesson" / "yarn.md").write_text(LESSON.replace("pnpm", "yarn"), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "daemon", "reindex"], cwd=project, env=dict(os.environ), check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    fresh = (f"s-new-{n}" for n in itertools.count())
    wait_for(lambda: "use yarn" in hook(agent, "SessionStart-startup", project, next(fresh))[0].lower(), what="a new session sees it")
    again, _ = hook(agent, "SessionStart-resume", project, "s-1")
    assert again == block  # byte-identical across the session's turns
    first, _ = hook(agent, "UserPromptSubmit", project, "s-2", prompt="why does npm install break the pnpm lockfile?")
    later, _ = hook(agent, "UserPromptSubmit", project, "s-2", prompt="why does npm install break the pnpm lockfile?")
    assert "Relevant to the first prompt" in first and "pnpm" in first and later == ""
    stop, _ = hook(agent, "Stop", project, "s-2")
    assert stop == ""
    assert daemon.stop() == 0, daemon.output()


def test_without_a_daemon_the_hook_answers_itself(home, project):  # noqa: ANN001
    block, _ = hook("claude", "SessionStart-startup", project, "s-9")
    assert "Use pnpm, never npm" in block
    (project / ".memory" / "lesson" / "yarn.md").write_text(LESSON.replace("pnpm", "yarn"), encoding="utf-8")
    again, _ = hook("claude", "SessionStart-compact", project, "s-9")
    assert again == block
    other, _ = hook("claude", "SessionStart-startup", project, "s-10")
    assert other == block  # the newest block given in the folder: no index opened for it
    prompt, _ = hook("claude", "UserPromptSubmit", project, "s-10", prompt="why does npm install break the pnpm lockfile?")
    assert prompt == ""  # the search is the daemon's


def test_a_bad_hook_input_never_fails_the_turn(home):  # noqa: ANN001
    done = subprocess.run([sys.executable, "-m", "daemon.hook", "claude"], input="{not json", capture_output=True,
                          text=True, env=dict(os.environ), timeout=30)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "" and "memoryd hook:" in done.stderr
