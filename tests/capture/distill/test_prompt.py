"""The model path's prompt asks for what the extractive notes do: the final state first."""

from __future__ import annotations

from daemon.capture.distill.prompt import PROMPT_VERSION, SYSTEM_PROMPT


def test_the_prompt_asks_for_the_final_state_first_and_superseded_attempts_marked():
    text = " ".join(SYSTEM_PROMPT.split())
    assert f"prompt {PROMPT_VERSION}" in text
    assert "opens with where the session ended" in text
    assert "Tried X: did not work, because Y" in text
    for wording in ("that didn't hold up", "still fails", "reverted", "还是失败", "違った", "안 됐다"):
        assert wording in text
    assert "first real error line" in text and "plans" in text
    assert "decisive findings" in text
