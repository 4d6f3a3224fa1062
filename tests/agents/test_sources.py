"""Claude Code's and Codex's own files as session sources, on the recorded sessions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from daemon.capture.plan import PassOptions, root_sessions
from daemon.capture.transcript import build_transcript
from daemon.claudecode.reader import ClaudeCodeReader
from daemon.codex.reader import CodexReader
from tests.agents.homes import CLAUDE_SESSIONS, CODEX_CHILD, CODEX_ROOTS, ECHO, claude_home, codex_home, lines

TOOL_CALL = "b368e461-d56a-4410-9cb6-9d1ece674ca2"
RESUMED = "f3c696a6-6ba7-4602-bec6-77b2ab32750f"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "proj.dir_x"  # a name the slug cannot give back
    path.mkdir(parents=True)
    return path


@pytest.fixture
def claude(tmp_path: Path, project: Path) -> tuple[ClaudeCodeReader, Path]:
    folder = claude_home(tmp_path / ".claude", project)
    return ClaudeCodeReader(tmp_path / ".claude" / "projects"), folder


@pytest.fixture
def codex(tmp_path: Path, project: Path) -> tuple[CodexReader, Path]:
    folder = codex_home(tmp_path / ".codex", project)
    return CodexReader(tmp_path / ".codex"), folder


def _events(logs: list[dict], name: str) -> list[dict]:
    return [e for e in logs if e.get("event") == name]


def test_claude_sessions_come_with_their_project_from_cwd_not_the_slug(claude, project):
    reader, _ = claude
    found = reader.sessions()
    assert {s.id for s in found} == CLAUDE_SESSIONS  # the subagent's transcript is no session
    assert {s.directory for s in found} == {str(project)}
    assert all(s.agent == "claude" and s.ended and s.parent_id is None for s in found)
    assert {s.title for s in found} == {"List the files in this project", "Remember what we use for packages"}


def test_claude_lines_of_one_message_are_one_message(claude):
    reader, _ = claude
    (info,) = reader.sessions([TOOL_CALL])
    rows = reader.session_rows(info)
    roles = [m.data["role"] for m in rows.messages]
    assert roles == ["user", "assistant", "assistant"]  # text + Bash call (two lines, one message.id), then the answer
    first_reply = [p.data for p in rows.parts if p.message_id == rows.messages[1].id]
    assert [p["type"] for p in first_reply] == ["text", "tool"]
    assert first_reply[1]["tool"] == "bash" and first_reply[1]["state"]["output"].strip() == "notes.txt"


def test_claude_transcript_keeps_the_work_and_none_of_the_echo(claude):
    reader, _ = claude
    (info,) = reader.sessions([RESUMED])
    text = build_transcript(reader.session_rows(info)).text
    assert "Remember what we use for packages" in text and "Second prompt please" in text  # both turns (resumed)
    assert "subagent: Subagent result: three lines." in text  # the task notification, as a mention
    assert "context was compacted here" in text
    assert "being continued from a previous conversation" not in text  # the compaction's retelling
    assert "<local-command" not in text and "<command-name>" not in text
    assert not ECHO.search(text.encode())  # hook output, AGENTS.md, MCP instructions, recall's answer


def test_a_subagent_transcript_moves_its_parent(claude):
    reader, folder = claude
    cursor = reader.cursor()
    assert reader.changed_since(cursor) == set()
    (sub,) = folder.glob("*/subagents/*.jsonl")
    with sub.open("ab") as handle:
        handle.write(lines(sub)[-1])
    assert reader.changed_since(cursor) == {RESUMED}


def test_a_resumed_session_is_read_on_from_where_it_stopped(claude, project):
    reader, folder = claude
    path = folder / f"{TOOL_CALL}.jsonl"
    (info,) = reader.sessions([TOOL_CALL])
    before = build_transcript(reader.session_rows(info)).text
    cursor = reader.cursor()
    offset = path.stat().st_size
    prompt = {"type": "user", "message": {"role": "user", "content": "Now count them"}, "timestamp": "2026-12-04T19:00:00.000Z",
              "cwd": str(project), "sessionId": TOOL_CALL, "uuid": "u-2"}  # fmt: skip
    reply = {"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "stop_reason": "end_turn",
             "content": [{"type": "text", "text": "There is one."}]}, "timestamp": "2026-12-04T19:00:01.000Z",
             "cwd": str(project), "sessionId": TOOL_CALL, "uuid": "a-2"}  # fmt: skip
    with path.open("a") as handle:
        handle.write(json.dumps(prompt) + "\n" + json.dumps(reply) + "\n")
    assert reader.changed_since(cursor) == {TOOL_CALL}
    (info,) = reader.sessions([TOOL_CALL])
    after = build_transcript(reader.session_rows(info)).text
    assert after.startswith(before.rstrip()[: len(before) - 200]) and after.endswith("[assistant] There is one.")
    assert reader.tails._tails[path].offset == path.stat().st_size > offset


def test_a_file_rewritten_shorter_is_read_again_from_its_start(claude):
    reader, folder = claude
    path = folder / f"{RESUMED}.jsonl"
    reader.session_rows(reader.sessions([RESUMED])[0])
    kept = [ln for ln in lines(path) if b"Second prompt please" not in ln]
    path.write_bytes(b"".join(kept[:40]))
    (info,) = reader.sessions([RESUMED])
    text = build_transcript(reader.session_rows(info)).text
    assert "Remember what we use for packages" in text and "Second prompt please" not in text


def test_bad_lines_are_named_once_and_the_rest_is_read(claude):
    reader, folder = claude
    path = folder / f"{TOOL_CALL}.jsonl"
    good = lines(path)
    huge = json.dumps({"type": "attachment", "blob": "x" * (10 * 1024 * 1024)}).encode() + b"\n"
    path.write_bytes(b"".join([*good[:3], b'{"type": "user", "message": {"content": "half\n', huge, *good[3:], b'{"type": "us']))
    old = path.stat().st_mtime - 60
    os.utime(path, (old, old))  # not being written: the partial last line is truncated
    with capture_logs() as logs:
        for _ in range(2):  # read twice from the start: still one line each
            (info,) = reader.sessions([TOOL_CALL])
            reader.tails._tails.clear()
            reader._infos.clear()
        text = build_transcript(reader.session_rows(info)).text
    assert "List the files in this project" in text and "The project holds one file" in text
    details = [e["detail"] for e in _events(logs, "source.bad_line")]
    assert len([d for d in details if "not a JSON object" in d]) == 1
    assert len([d for d in details if "over the 4 MB limit" in d]) == 1
    assert len([d for d in details if "truncated last line" in d]) == 1


def test_a_deleted_transcript_is_logged_once_and_drops_out(claude):
    reader, folder = claude
    cursor = reader.cursor()
    (folder / f"{TOOL_CALL}.jsonl").unlink()
    with capture_logs() as logs:
        assert reader.changed_since(cursor) == set()
        reader.changed_since(cursor)
    assert len(_events(logs, "source.file_gone")) == 1
    assert {s.id for s in reader.sessions()} == {RESUMED}


def test_codex_threads_children_and_echo(codex, project):
    reader, _ = codex
    found = {s.id: s for s in reader.sessions()}
    assert set(found) == CODEX_ROOTS | {CODEX_CHILD}
    assert found[CODEX_CHILD].parent_id == "01a24242-7305-7751-a775-458f4d90cd3b"
    roots = root_sessions(list(found.values()), [], PassOptions())
    assert {s.id for s in roots} == CODEX_ROOTS  # the subagent gets no note of its own
    assert all(s.directory == str(project) and s.agent == "codex" and s.ended for s in found.values())
    for info in roots:
        text = build_transcript(reader.session_rows(info)).text
        assert not ECHO.search(text.encode()), text  # developer messages, AGENTS.md, environment, recall's answer
        assert "<environment_context>" not in text


def test_codex_resume_appends_to_the_thread(codex):
    reader, _ = codex
    (info,) = reader.sessions(["01a24241-a5b4-7213-b6cd-6cab44fffc88"])
    text = build_transcript(reader.session_rows(info)).text
    assert text.index("Remember packages we use") < text.index("Second prompt please") < text.index("Second turn answer")
    assert "[assistant · tool mcp__memoryd__recall]" in text and "package manager" in text


def test_codex_titles_come_from_its_thread_index(codex, tmp_path: Path):
    import sqlite3

    reader, _ = codex
    conn = sqlite3.connect(tmp_path / ".codex" / "state_5.sqlite")
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT, cwd TEXT)")
    conn.execute("INSERT INTO threads VALUES (?, ?, ?)", ("01a24241-685e-7e42-8d6b-2fa6ae21acaa", "Listing files", "/x"))
    conn.commit()
    conn.close()
    (info,) = reader.sessions(["01a24241-685e-7e42-8d6b-2fa6ae21acaa"])
    assert info.title == "Listing files"
