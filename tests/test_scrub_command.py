"""memoryd scrub: rules applied again to what an older memoryd (or a hand) already stored —
memory files and their names, transcripts (and their retention), state rows, the outbox,
the search index. A dry run writes nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import frontmatter
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.state import StateDB
from tests.secrets_catalogue import CATALOGUE

TOKEN = next(c for c in CATALOGUE if c.kind == "github_token").values[0]
PASSWORD = next(c for c in CATALOGUE if c.format == "yaml_password").values[0]


def _run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _plant(home) -> dict:
    """What an older memoryd left behind, secrets and all (written around today's guards)."""
    sessions = home.global_root / "sessions"
    sessions.mkdir(parents=True)
    note = sessions / f"2026-11-30-push-with-{TOKEN}-abcd1234.md"
    note.write_text(
        f"---\ntitle: Push with {TOKEN}\ndescription: 'the db password: {PASSWORD}'\nkind: session\n"
        f"session_id: ses_old1\ntags: [deploy]\n---\n\n## What Was Worked On\n\n- Pushed with `{TOKEN}`.\n"
        "- Kept `token = tokens[i]` as it was.\n"
    )
    transcripts = home.state_dir / "transcripts"
    transcripts.mkdir(parents=True)
    (transcripts / "ses_old1.md").write_text(f"# Session\nuser: password: {PASSWORD}\n")
    stale = transcripts / "ses_old0.md"
    stale.write_text("# Session\nold\n")
    os.utime(stale, (time.time() - 40 * 86400,) * 2)
    StateDB(home.state_dir / "state.db").close()
    conn = sqlite3.connect(home.state_dir / "state.db")
    with conn:
        conn.execute("INSERT INTO session (session_id, title, note_path, status) VALUES ('ses_old1', ?, ?, 'distilled')", (f"Push with {TOKEN}", str(note)))
        conn.execute(
            "INSERT INTO sink_outbox (sink, doc_key, op, content, filename, metadata, path, queued_at) VALUES ('cognee', 'ses_old1', 'put', ?, ?, ?, ?, 0)",
            (note.read_text(), note.name, json.dumps({"title": f"Push with {TOKEN}"}), f"sessions/{note.name}"),
        )
    conn.close()
    return {"note": note, "transcripts": transcripts, "stale": stale}


def _everything(home, index: bool = True) -> str:
    """Every file's name and bytes (the search index and the log left out on request)."""
    files = [p for p in home.root.rglob("*") if p.is_file() and (index or not p.name.startswith(("index.db", "memoryd.log")))]
    texts = [str(p) + "\n" + p.read_bytes().decode("utf-8", "replace") for p in files]
    return "\n".join(texts)


def test_scrub_applies_the_rules_to_everything_stored(home):
    planted = _plant(home)
    before = _everything(home, index=False)
    dry = _run("scrub", "--dry-run")
    assert "would rename" in dry.output and "Would change: 1 memory file(s), 1 renamed" in dry.output
    assert _everything(home, index=False) == before and planted["stale"].exists()

    done = _run("scrub")
    assert "Changed: 1 memory file(s), 1 renamed, 1 transcript(s) scrubbed, 1 past retention deleted" in done.output
    everything = _everything(home)
    assert TOKEN not in everything and PASSWORD not in everything
    assert not planted["note"].exists() and not planted["stale"].exists()
    [note] = [p for p in (home.global_root / "sessions").glob("*.md") if p.name != "index.md"]
    text = note.read_text()
    assert "redacted-github_token" in note.name and "token = tokens[i]" in text
    assert frontmatter.loads(text)["title"] == "Push with [REDACTED:github_token]"
    state = StateDB(home.state_dir / "state.db")
    try:
        assert state.records()[0].note_path == str(note)
    finally:
        state.close()
    found = _run("recall", "Pushed")
    assert note.name in found.output or "Push with" in found.output
    again = _run("scrub")
    assert "Changed: 0 memory file(s), 0 renamed, 0 transcript(s) scrubbed, 0 past retention deleted, 0 state row(s), 0 outbox entries" in again.output


def test_a_hand_written_secret_never_reaches_recall_or_a_session_block(home, tmp_path):
    """A memory file someone wrote by hand with a key in it: the index (and so recall, the
    inventory and the block a session is given) only ever holds it redacted."""
    gotchas = home.global_root / "gotcha"
    gotchas.mkdir(parents=True)
    (gotchas / "deploy-key.md").write_text(
        f"---\ntitle: Deploy key {TOKEN}\nkind: gotcha\ntags: [deploy]\n---\n\nDeploy pushes with {TOKEN}; rotate it.\n"
    )
    _run("reindex")
    for args in (["recall", "deploy"], ["inspect"], ["context", "--dir", str(tmp_path), "--prompt", "how do I deploy?"]):
        out = _run(*args).output
        assert TOKEN not in out, args
    assert "[REDACTED:github_token]" in _run("recall", "deploy").output
