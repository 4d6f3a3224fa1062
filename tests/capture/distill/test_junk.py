"""obviously_junk: only greetings and one short exchange are junk; any work is not."""

from __future__ import annotations

import pytest

from daemon.capture.distill.base import Entry
from daemon.capture.distill.junk import obviously_junk

from .conftest import make_transcript

GREETINGS = ["hi", "Hello!", "hey there", "ping", "test 123", "are you there?", "thanks", "你好", "在吗？", "Good morning!"]


def chat(*turns: tuple[str, str]) -> list[Entry]:
    return [Entry(role, "text", text=text) for role, text in turns]


@pytest.mark.parametrize("ask", GREETINGS)
def test_greetings_are_junk_whatever_the_reply(ask):
    reply = "Hello! I'm ready to help with your code. " * 10  # a long, chatty self-introduction
    assert obviously_junk(make_transcript(chat(("user", ask), ("assistant", reply))))


def test_several_greetings_are_junk():
    assert obviously_junk(make_transcript(chat(("user", "hi"), ("assistant", "Hi!"), ("user", "thanks, bye"))))


def test_empty_session_is_junk():
    assert obviously_junk(make_transcript([]))


def test_one_short_exchange_is_junk():
    assert obviously_junk(make_transcript(chat(("user", "what time is it"), ("assistant", "I can't tell the time."))))


def test_tool_work_is_never_junk():
    entries = [*chat(("user", "hi")), Entry("assistant", "tool", tool="bash", input={"command": "ls"}, output="a b")]
    assert not obviously_junk(make_transcript(entries))


def test_changed_files_or_subtasks_are_not_junk():
    entries = [*chat(("user", "hi")), Entry("assistant", "mention", text="changed files: src/app.py")]
    assert not obviously_junk(make_transcript(entries))


def test_a_real_question_is_not_junk_even_without_tools():
    ask = "How do I undo the last git commit but keep the changes staged?"
    assert not obviously_junk(make_transcript(chat(("user", ask), ("assistant", "git reset --soft HEAD~1"))))


def test_a_short_cjk_request_counts_by_meaning_not_characters():
    ask = "部署脚本用 pnpm 而不是 npm，请修改 deploy.sh 并记住这个约定"
    assert not obviously_junk(make_transcript(chat(("user", ask), ("assistant", "好的。"))))


def test_a_conversation_is_not_junk():
    turns = chat(
        ("user", "why?"), ("assistant", "Because."), ("user", "ok, and the lockfile?"), ("assistant", "Missing.")
    )
    assert not obviously_junk(make_transcript(turns))


def test_greeting_words_inside_real_text_do_not_count():
    ask = "hi, the deploy script fails with ERR_PNPM_NO_LOCKFILE on CI, please fix it"
    assert not obviously_junk(make_transcript(chat(("user", ask), ("assistant", "Looking."))))
