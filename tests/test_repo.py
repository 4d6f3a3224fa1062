"""The repository keeps its promises: CI runs the README's test command verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    test_command = next(line for block in blocks for line in block.splitlines() if "pytest" in line)
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_quick_start_is_two_commands():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line for block in re.findall(r"```sh\n(.*?)```", quick, re.S) for line in block.strip().splitlines()]
    assert len(commands) == 2
    assert "memoryd distill" in commands[0] and commands[0].endswith("memoryd opencode install")
    assert "pytest" in commands[1]
