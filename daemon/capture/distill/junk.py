"""Pure: is a transcript obviously junk (a greeting, a ping), so no distiller should run?

Only the obvious cases: a false "junk" loses a session for good, a false "not junk"
costs one model call that answers JUNK. So any sign of work (a tool call, a changed
file, a subtask) keeps the session, and so does any user message of real length.
"""

from __future__ import annotations

import re

from daemon.capture.distill.base import Transcript

_GREETING_WORD = (
    r"hi|hello|hey|hiya|yo|howdy|hallo|hola|bonjour|ciao|good (?:morning|afternoon|evening)"
    r"|ping|pong|test(?:ing)?|are you (?:there|up|alive)|you there|anyone there"
    r"|thanks|thank you|thx|ok|okay|bye|你好|您好|在吗|谢谢|こんにちは|ありがとう|안녕하세요"
)
# One or more greeting words, with punctuation, numbers ("test 123") or emoji between.
_GREETING = re.compile(rf"^[\W\d_]*(?:(?:{_GREETING_WORD})(?:\s+there)?[\W\d_]*)+$", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

MAX_JUNK_CHARS = 200  # user + assistant text of a junk session stays under this
MAX_JUNK_ASK_CHARS = 40  # a single user message longer than this is a real question


def _weight(text: str) -> int:
    """Length in Latin-equivalent characters: a CJK character carries about a word."""
    return len(text) + len(_CJK.findall(text))


def obviously_junk(transcript: Transcript) -> bool:
    """True for a session with no work in it: only greetings, or one short exchange."""
    entries = transcript.entries
    # Mentions are changed files, attachments, subtasks, compactions: signs of a session.
    if any(e.kind in ("tool", "mention") for e in entries):
        return False
    asked = [e.text.strip().strip("\"'") for e in entries if e.kind == "text" and e.role == "user"]
    said = [e.text for e in entries if e.kind == "text" and e.role != "user"]
    if asked and all(_GREETING.match(text) for text in asked):
        return True
    if len(asked) > 1 or any(_weight(text) > MAX_JUNK_ASK_CHARS for text in asked):
        return False
    return sum(_weight(text) for text in asked + said) < MAX_JUNK_CHARS


def junk_reason(asked: list[str], said: list[str], tools: int) -> str:
    """Why the rules call a session junk, in words a person can check; "" if they would not."""
    asked = [text.strip().strip("\"'") for text in asked]
    if tools:
        return ""
    if asked and all(_GREETING.match(text) for text in asked):
        return "only greetings: " + ", ".join(repr(text[:30]) for text in asked[:3])
    if len(asked) > 1 or any(_weight(text) > MAX_JUNK_ASK_CHARS for text in asked):
        return ""
    chars = sum(_weight(text) for text in asked + said)
    if chars < MAX_JUNK_CHARS:
        return f"one short exchange ({chars} characters, no tool call)"
    return ""
