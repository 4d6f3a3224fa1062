"""`memoryd run` with Claude Code and Codex and no OpenCode: their folders are watched, a
session becomes a note in its project, a resumed session rewrites it, a session started
after the daemon is found without any hook."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from daemon.memory.frontmatter import split_document
from tests.agents.homes import CLAUDE, CLAUDE_SESSIONS, CODEX_ROOTS, claude_home, codex_home
from tests.service.conftest import wait_for


def _notes(project: Path) -> dict[str, Path]:
    folder = project / ".memory" / "sessions"
    found = {}
    for path in folder.glob("*.md") if folder.is_dir() else ():
        if path.name == "index.md":  # compiled, not a note
            continue
        found[split_document(path.read_text(encoding="utf-8")).fields["session_id"]] = path
    return found


def test_the_daemon_captures_both_agents_as_they_write(home, daemon, notify):  # noqa: ANN001
    project = home.root / "code" / "shop"
    (project / ".memory").mkdir(parents=True)
    claude = claude_home(home.root / ".claude", project)
    codex_home(home.root / ".codex", project)
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1 with no OpenCode database")
    wait_for(lambda: set(_notes(project)) == CLAUDE_SESSIONS | CODEX_ROOTS, timeout=30, what="one note per session")

    # Resumed: the same file grows, the same note is rewritten.
    session = "b368e461-d56a-4410-9cb6-9d1ece674ca2"
    note = _notes(project)[session]
    records = [
        {"type": "user", "message": {"role": "user", "content": "Cache the pnpm store in CI too"},
         "timestamp": "2026-12-04T20:00:00.000Z", "cwd": str(project), "sessionId": session, "uuid": "r-u"},
        {"type": "assistant", "message": {"id": "msg_r", "role": "assistant", "stop_reason": "end_turn",
         "content": [{"type": "text", "text": "Added actions/cache for the pnpm store."}]},
         "timestamp": "2026-12-04T20:00:01.000Z", "cwd": str(project), "sessionId": session, "uuid": "r-a"},
    ]  # fmt: skip
    with (claude / f"{session}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in records))
    wait_for(lambda: "pnpm store" in note.read_text(encoding="utf-8"), what="the resumed session's note rewritten")
    assert _notes(project)[session] == note

    # A session in a project folder Claude Code creates after the daemon started.
    other = home.root / "code" / "api"
    (other / ".memory").mkdir(parents=True)
    recorded = CLAUDE / "tool-call" / "projects" / "-home-dev-proj" / f"{session}.jsonl"
    folder = home.root / ".claude" / "projects" / "-code-api"
    folder.mkdir()
    text = recorded.read_bytes().replace(b"/home/dev/proj", str(other).encode())
    (folder / "0000aaaa-0000-4000-8000-000000000001.jsonl").write_bytes(text)
    wait_for(lambda: "0000aaaa-0000-4000-8000-000000000001" in _notes(other), timeout=30, what="the new session's note")

    assert daemon.stop() == 0, daemon.output()
    assert "Traceback" not in daemon.output()
    shutil.rmtree(home.root / ".claude")  # the transcripts go; the notes stay
    assert set(_notes(project)) == CLAUDE_SESSIONS | CODEX_ROOTS
