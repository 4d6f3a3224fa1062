"""Fake agent homes made from the recorded sessions in tests/fixtures/agents (copies, never
the fixtures themselves), with the recording's project folder replaced by a real one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
CLAUDE = FIXTURES / "claude-code-2.1.328"
CODEX = FIXTURES / "codex-0.169.0"
RECORDED_PROJECT = "/home/dev/proj"
CLAUDE_SESSIONS = {"b368e461-d56a-4410-9cb6-9d1ece674ca2", "f3c696a6-6ba7-4602-bec6-77b2ab32750f"}
CODEX_ROOTS = {"01a24241-685e-7e42-8d6b-2fa6ae21acaa", "01a24241-a5b4-7213-b6cd-6cab44fffc88",
               "01a24242-7305-7751-a775-458f4d90cd3b"}  # fmt: skip
CODEX_CHILD = "01a24242-745f-76a3-a673-8e2690a767d0"
ECHO = re.compile(rb"MARK-[A-Z]")  # every injection route of the recordings carries a MARK-… marker


def slug(directory: Path) -> str:
    """Claude Code's folder name for a project: every non-alphanumeric character a dash."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(directory))


def _copy(src: Path, dst: Path, project: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.suffix in (".jsonl", ".json"):
        dst.write_bytes(src.read_bytes().replace(RECORDED_PROJECT.encode(), str(project).encode()))
    else:
        shutil.copyfile(src, dst)


def claude_home(config_dir: Path, project: Path) -> Path:
    """`config_dir/projects/<slug of project>/…` holding both recorded sessions; returns that folder."""
    folder = config_dir / "projects" / slug(project)
    for scenario in ("tool-call", "mcp-subagent-resume-compact"):
        recorded = CLAUDE / scenario / "projects" / "-home-dev-proj"
        for src in recorded.rglob("*"):
            if src.is_file():
                _copy(src, folder / src.relative_to(recorded), project)
    return folder


def codex_home(home: Path, project: Path) -> Path:
    """`home/sessions/2026/12/04/` holding every recorded rollout; returns that folder."""
    folder = home / "sessions" / "2026" / "12" / "04"
    for src in CODEX.glob("*/sessions/2026/12/04/rollout-*.jsonl"):
        _copy(src, folder / src.name, project)
    return folder


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)
