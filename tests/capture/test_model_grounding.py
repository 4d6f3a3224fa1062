"""A model's note is kept to what the session shows: `memoryd distill` against a scripted
model on 127.0.0.1 that invents a path and a command, on the real fixture database."""

from __future__ import annotations

import json

import frontmatter

from daemon.state import StateDB
from tests.capture.distill.conftest import openai_reply
from tests.capture.test_model_pipeline import RoutedServer, distill, notes_in, use_model

INVENTED_PATH = "src/payments/refund_worker.py"
INVENTED_COMMAND = "kubectl rollout restart deploy/webapp"
NOTE = f"""## What Was Worked On

- Fixed the deploy script for CI.

## Outcome / Current State

`scripts/deploy.sh` now runs `pnpm install --frozen-lockfile`. Also tidied {INVENTED_PATH} while there.

## Decisions & Rationale

- Decision: always deploy with pnpm, never npm.

## Files, Systems & Commands

- `scripts/deploy.sh` (edited)
- `{INVENTED_PATH}` (edited)
- `/home/dev/src/webapp/.memory/ROOT.md` (edited)
- `{INVENTED_COMMAND}`
"""


def test_invented_paths_and_commands_leave_the_note(home, fixture_db, fixture_sessions, monkeypatch):
    model = RoutedServer()
    model.default = openai_reply(NOTE, usage={"total_tokens": 100})
    model.start()
    try:
        use_model(monkeypatch, model.url + "/v1")
        result = distill()
    finally:
        model.stop()
    assert result.exit_code == 0, result.output
    sid = fixture_sessions["deploy-pnpm"]["session"]
    text = notes_in(home.global_root)[sid].read_text()
    assert INVENTED_PATH not in text and INVENTED_COMMAND not in text and ".memory" not in text
    assert "`scripts/deploy.sh` (edited)" in text and "pnpm install --frozen-lockfile" in text
    assert f"> Source: OpenCode session `{sid}`" in text  # the deterministic provenance block
    assert frontmatter.loads(text)["description"] == "`scripts/deploy.sh` now runs `pnpm install --frozen-lockfile`."
    events = [json.loads(line) for line in (home.state_dir / "memoryd.log").read_text().splitlines() if line.startswith("{")]
    dropped = [e for e in events if e.get("event") == "note.ungrounded_dropped" and e.get("session_id") == sid]
    assert dropped and dropped[0]["count"] == 3


def test_a_note_of_nothing_but_inventions_is_a_failure_that_says_so(home, fixture_db, fixture_sessions, monkeypatch):
    invented = f"## Files, Systems & Commands\n\n- `{INVENTED_PATH}` (edited)\n- `{INVENTED_COMMAND}`\n"
    model = RoutedServer()
    model.default = openai_reply(invented, usage={"total_tokens": 100})
    model.start()
    try:
        use_model(monkeypatch, model.url + "/v1")
        result = distill("--session", fixture_sessions["big-log"]["session"])
    finally:
        model.stop()
    assert notes_in(home.global_root) == {}
    assert "0 distilled" in result.output and "1 pending" in result.output  # retried on a later pass
    state = StateDB(home.state_dir / "state.db")
    try:
        record = state.get(fixture_sessions["big-log"]["session"])
    finally:
        state.close()
    assert record.status == "retry" and "paths and commands the session does not show" in record.last_error
