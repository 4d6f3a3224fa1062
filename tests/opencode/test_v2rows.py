"""OpenCode 2 row shapes the recorded sessions do not hold (schemas read from the 2.0.15 binary)."""

from __future__ import annotations

import json

from daemon.capture.transcript import build_transcript
from daemon.opencode.source import SessionInfo, SessionRows
from daemon.opencode.v2rows import normalise

INFO = SessionInfo("ses_x", "Shapes", "/home/dev/src/app", "global", None, 1, 2, family="v2")


def transcript(*rows: tuple[str, dict | bytes]) -> tuple[str, tuple[str, ...]]:
    raw = [
        (f"msg_{n:04d}", kind, n, data if isinstance(data, bytes) else json.dumps(data).encode())
        for n, (kind, data) in enumerate(rows)
    ]
    messages, parts = normalise(raw)
    t = build_transcript(SessionRows(INFO, messages, parts))
    return t.text, t.warnings


def test_shell_skill_system_switch_and_synthetic_rows():
    text, warnings = transcript(
        ("user", {"text": "run the tests", "files": [{"mime": "image/png", "name": "shot.png", "data": "AAAA"}]}),
        ("shell", {"shellID": "sh_1", "command": "pytest -q", "status": "completed", "exit": 1, "output": "1 failed"}),
        ("skill", {"skill": "skl_1", "name": "release", "text": "a long skill document"}),
        ("system", {"text": "The user switched to plan mode", "description": "plan mode"}),
        ("agent-switched", {"agent": "plan", "previous": "build"}),
        ("model-switched", {"model": {"id": "m2", "providerID": "fake"}}),
        ("location-switched", {"location": {"directory": "/home/dev/src/other"}}),
        ("synthetic", {"text": "Tests ran in the background."}),
        ("idle", {"outcome": "succeeded"}),
    )
    assert "[user · note] attached file shot.png" in text
    assert "[user · tool bash] command=pytest -q\n  → 1 failed" in text  # `!cmd`: the user's shell
    assert "[user · note] loaded skill release" in text and "long skill document" not in text
    assert "[user · note] system: plan mode" in text
    assert "switched to agent @plan" in text and "switched model to fake/m2" in text
    assert "moved to /home/dev/src/other" in text
    assert "[user] Tests ran in the background." in text
    assert not warnings


def test_a_bad_or_unknown_row_is_reported_and_skipped():
    text, warnings = transcript(
        ("user", {"text": "hello there, fix the build"}),
        ("user", b"{broken"),
        ("hologram", {"x": 1}),
    )
    assert "fix the build" in text
    assert any("msg_0001" in w and "malformed JSON" in w for w in warnings)
    assert any("unknown part type 'hologram'" in w for w in warnings)
