"""A capture pass over Claude Code's and Codex's recorded sessions, with no OpenCode at all:
one note per session in the project's tree, `agent:` in each, none of memoryd's echo in any
note, lesson or the search index; a resumed session rewrites its one note; a deleted
transcript keeps its note."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.memory.frontmatter import split_document
from tests.agents.homes import CLAUDE_SESSIONS, CODEX_ROOTS, ECHO, claude_home, codex_home
from tests.capture.helpers import distill_once


@pytest.fixture
def project(home) -> Path:  # noqa: ANN001
    path = home.root / "code" / "shop"
    (path / ".memory").mkdir(parents=True)  # a project with a tree: its notes go there
    return path


@pytest.fixture
def agents(home, project):  # noqa: ANN001, ANN201
    claude = claude_home(home.root / ".claude", project)
    codex = codex_home(home.root / ".codex", project)
    return claude, codex


def _notes(project: Path) -> dict[str, tuple[Path, dict]]:
    found = {}
    for path in (project / ".memory" / "sessions").glob("*.md"):
        if path.name == "index.md":  # compiled, not a note
            continue
        fields = split_document(path.read_text(encoding="utf-8")).fields
        found[fields["session_id"]] = (path, fields)
    return found


def test_each_agent_session_becomes_one_note_in_its_project(home, project, agents):  # noqa: ANN001
    report = distill_once()
    assert not report.failed
    notes = _notes(project)
    assert set(notes) == CLAUDE_SESSIONS | CODEX_ROOTS  # subagents get none
    assert {fields["agent"] for sid, (_, fields) in notes.items() if sid in CLAUDE_SESSIONS} == {"claude"}
    assert {fields["agent"] for sid, (_, fields) in notes.items() if sid in CODEX_ROOTS} == {"codex"}
    some_claude = notes[sorted(CLAUDE_SESSIONS)[0]][0].read_text(encoding="utf-8")
    assert "> Source: Claude Code session" in some_claude


def test_nothing_memoryd_or_the_harness_injected_is_kept(home, project, agents):  # noqa: ANN001
    distill_once()
    written = [p for root in (project / ".memory", home.global_root) if root.exists() for p in root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in written)
    for path in written:
        assert not ECHO.search(path.read_bytes()), path
    index = home.state_dir / "index.db"
    assert index.exists()
    for path in home.state_dir.glob("index.db*"):
        assert not ECHO.search(path.read_bytes()), path


def _append_turn(path: Path, session: str, project: Path, prompt: str, answer: str) -> None:
    at = "2026-12-04T20:00:0{}.000Z"
    records = [
        {"type": "user", "message": {"role": "user", "content": prompt}, "timestamp": at.format(0), "cwd": str(project),
         "sessionId": session, "uuid": "resume-u"},
        {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["MARK-RESUMED memoryd block"]},
         "timestamp": at.format(1), "cwd": str(project), "sessionId": session},
        {"type": "assistant", "message": {"id": "msg_resume", "role": "assistant", "stop_reason": "end_turn",
         "content": [{"type": "text", "text": answer}]}, "timestamp": at.format(2), "cwd": str(project),
         "sessionId": session, "uuid": "resume-a"},
    ]  # fmt: skip
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in records))


def test_a_resumed_session_rewrites_its_one_note(home, project, agents):  # noqa: ANN001
    claude, _ = agents
    session = "b368e461-d56a-4410-9cb6-9d1ece674ca2"
    distill_once()
    path, _ = _notes(project)[session]
    before = path.read_text(encoding="utf-8")
    _append_turn(claude / f"{session}.jsonl", session, project, "Switch the build to pnpm workspaces",
                 "Done: the build now uses pnpm workspaces; pnpm-workspace.yaml lists packages/*.")  # fmt: skip
    report = distill_once()
    assert report.distilled == [session]
    notes = _notes(project)
    assert len(notes) == len(CLAUDE_SESSIONS | CODEX_ROOTS) and notes[session][0] == path  # the same file
    after = path.read_text(encoding="utf-8")
    assert after != before and "pnpm" in after and "MARK-RESUMED" not in after


def test_a_deleted_transcript_keeps_its_note(home, project, agents):  # noqa: ANN001
    claude, codex = agents
    distill_once()
    notes = _notes(project)
    for path in [*claude.glob("*.jsonl"), *codex.glob("*.jsonl")]:
        path.unlink()
    distill_once()
    assert _notes(project).keys() == notes.keys()
    assert all(path.exists() for path, _ in notes.values())


def test_the_inventory_names_each_note_agent(home, project, agents):  # noqa: ANN001
    distill_once()
    shown = subprocess.run([sys.executable, "-m", "daemon", "context", "--dir", str(project)],
                           capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    assert "[session, claude]" in shown.stdout and "[session, codex]" in shown.stdout
    assert not ECHO.search(shown.stdout.encode())
