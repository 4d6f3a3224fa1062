"""Test-runner output stays readable: real logs (go test -v, DejaGnu, jest, cargo test, pytest
-v, made by bench/scrub_corpora.py on a real machine) hold no secret, so the scrubber must
return them unchanged, verdict lines and test names included."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.scrub import find_spans, redact

LOGS = sorted((Path(__file__).parent / "fixtures" / "runner-logs").iterdir())


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_a_real_test_log_comes_out_unchanged(log: Path) -> None:
    text = log.read_text(encoding="utf-8")
    assert any(word in text for word in ("PASS", "ok", "passed")), f"{log.name} holds no test verdicts"
    lines = [text[text.rfind("\n", 0, s) + 1 : text.find("\n", e)] for s, e, _ in find_spans(text)]
    assert lines == []
    assert redact(text) == text


def test_a_password_after_a_runner_word_is_still_caught() -> None:
    # A verdict is a word followed by a test's name; an assignment to `PASS` still binds a value.
    assert "Zq8mT2vX9kLp" not in redact("export PASS=Zq8mT2vX9kLp")
    assert "Zq8mT2vX9kLp" not in redact("smtp:\n  pass: Zq8mT2vX9kLp\n")
