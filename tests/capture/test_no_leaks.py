"""Nothing leaks: the credential catalogue in user text, tool input, tool output and the
session title of real-shape OpenCode sessions; the real pipeline (extractive, then a
scripted OpenAI-style model server on 127.0.0.1); then every byte memoryd wrote.

No credential and no 12-character window of one may appear in any file memoryd writes,
any file name, index.db, state.db (raw bytes, WAL included), the log or a request body;
the near misses must survive in the notes.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import frontmatter
import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from tests.capture.distill.conftest import ModelServer, openai_reply
from tests.capture.helpers import add_message
from tests.secrets_catalogue import CATALOGUE, Case

WINDOW = 12
# Every character a catalogue value uses: an occurrence of a window lies in a run of these.
_RUN = re.compile(r"[a-z0-9+/=_\-.:%]{12,}")
START_MS = 1_796_000_000_000  # before the fixture's newest rows: these sessions are old and settled
MODEL_NOTE = "## What Was Worked On\n\n- Rotated the credentials the session exposed.\n"


def session_id(index: int) -> str:
    return f"ses_leak{index:03d}zzzzzzzzzzzzzzzz"


def add_session(db: Path, index: int, case: Case) -> None:
    """One session per catalogue entry, as OpenCode 1.18 stores it."""
    sid, at = session_id(index), START_MS + index * 10_000
    conn = sqlite3.connect(db)
    with conn:
        project = conn.execute("SELECT id FROM project LIMIT 1").fetchone()[0]
        conn.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES (?, ?, ?, ?, ?, '1.18.33', ?, ?)",
            # A title is one line: the first line of the credential's context.
            (sid, project, f"leak-{index}", "/home/dev/src/leaky", case.text.splitlines()[0], at, at),
        )
    conn.close()
    user = f"{case.near_miss}\n{case.text}"
    add_message(db, sid, f"msg_leak{index:03d}a", "user", [(f"prt_leak{index:03d}a", {"type": "text", "text": user})], at + 1)
    tool = {
        "type": "tool",
        "tool": "bash",
        "callID": f"call_{index}",
        "state": {
            "status": "completed",
            "input": {"command": case.text, "description": "check the credential"},
            "output": f"{case.text}\nexit 0",
            "title": "check",
            "time": {"start": at + 2, "end": at + 3},
        },
    }
    reply = {"type": "text", "text": f"Found the problem: the credential was in the config. {case.text}"}
    add_message(db, sid, f"msg_leak{index:03d}b", "assistant", [(f"prt_leak{index:03d}b", tool), (f"prt_leak{index:03d}c", reply)], at + 4)


@pytest.fixture
def leaky_db(fixture_db: Path) -> Path:
    for index, case in enumerate(CATALOGUE):
        add_session(fixture_db, index, case)
    return fixture_db


def windows() -> dict[str, str]:
    """Every 12-character window of every value, lower-cased (the index lower-cases) → its kind."""
    found: dict[str, str] = {}
    for case in CATALOGUE:
        for value in case.values:
            for start in range(len(value) - WINDOW + 1):
                found[value[start : start + WINDOW].lower()] = case.kind
    return found


def leaks(text: str, secrets: dict[str, str]) -> set[str]:
    """The kinds whose values show (a window of them) anywhere in `text`."""
    hits = set()
    for run in _RUN.findall(text.lower()):
        for start in range(len(run) - WINDOW + 1):
            kind = secrets.get(run[start : start + WINDOW])
            if kind:
                hits.add(kind)
    return hits


def written_files(root: Path, source: Path) -> Iterator[Path]:
    """Everything under the fake home except OpenCode's own database (and its WAL)."""
    for path in root.rglob("*"):
        if path.is_file() and not path.name.startswith(source.name):
            yield path


def memoryd(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_no_credential_reaches_any_file_name_database_log_or_model(home, leaky_db, monkeypatch):
    memoryd("distill", "--settle", "0")
    memoryd("compile")
    memoryd("reindex")

    metas = {p: frontmatter.load(p).metadata for p in (home.global_root / "sessions").glob("*.md")}
    notes = {meta["session_id"]: p for p, meta in metas.items() if "session_id" in meta}
    assert len(notes) >= len(CATALOGUE) - 2  # a session or two may be junk; most are notes
    lost = [c.near_miss for i, c in enumerate(CATALOGUE) if session_id(i) in notes and " ".join(c.near_miss.split()) not in notes[session_id(i)].read_text()]
    assert not lost, "near misses were redacted"

    server = ModelServer()
    server.default = openai_reply(MODEL_NOTE, usage={"total_tokens": 50})
    server.start()
    try:
        for key, value in {"provider": "openai", "base_url": server.url, "model": "m", "max_retries": 0}.items():
            monkeypatch.setenv(f"MEMORYD_LLM__{key.upper()}", str(value))
        memoryd("distill", "--settle", "0", "--force")
    finally:
        server.stop()
    assert len(server.requests) >= len(notes)

    secrets = windows()
    found: dict[str, set[str]] = {}
    for seen in server.requests:
        found.setdefault("model request body", set()).update(leaks(json.dumps(seen.body, ensure_ascii=False), secrets))
    files = list(written_files(home.root, leaky_db))
    names = {p.name for p in files}
    assert {"state.db", "index.db", "memoryd.log"} <= names
    for path in files:
        found.setdefault(str(path.relative_to(home.root)), set()).update(
            leaks(str(path.relative_to(home.root)), secrets) | leaks(path.read_bytes().decode("utf-8", "replace"), secrets)
        )
    leaked = {where: kinds for where, kinds in found.items() if kinds}
    assert not leaked, f"credentials leaked: {leaked}"


def test_the_extractive_note_is_built_from_scrubbed_text_only(leaky_db):
    """The extractive note and its title skip the second scrub: a second pass over what it
    builds from the catalogue's sessions would change nothing (a note is no new text)."""
    from daemon.capture.distill.extractive import ExtractiveDistiller
    from daemon.capture.notes import note_document, note_filename
    from daemon.capture.transcript import build_transcript
    from daemon.opencode.reader import OpenCodeReader
    from daemon.scrub import redact

    checked = 0
    with OpenCodeReader(leaky_db) as reader:
        for info in reader.sessions([session_id(i) for i in range(len(CATALOGUE))]):
            transcript = build_transcript(reader.session_rows(info))
            assert transcript.session.scrubbed and transcript.session.title == redact(info.title)
            result = ExtractiveDistiller().distill(transcript)
            if result.junk:
                continue
            assert result.scrubbed
            text, document = note_document(transcript.session, result, info.time_updated)
            for value in (text, result.body, result.summary, note_filename(transcript.session)):
                assert redact(value) == value, value
            assert leaks(text, windows()) == set()
            checked += 1
    assert checked >= len(CATALOGUE) - 2
