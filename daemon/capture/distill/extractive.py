"""The default distiller: no model, no network. It picks facts out of the transcript.

The session is read as turns (a user request and what answered it). Outcome is the
conclusion of every turn, so a continued session keeps what it did earlier. Every other
sentence is sorted by its label or cue (cues.py, several languages) into one section:
each statement appears once in the note. Files are paths with what happened to them.
"""

from __future__ import annotations

import re

from daemon.capture.distill import cues
from daemon.capture.distill.base import SECTIONS, Distilled, Entry, Transcript
from daemon.capture.distill.followups import done_later
from daemon.capture.distill.junk import obviously_junk
from daemon.capture.distill.touched import FILE_KEYS, Touched
from daemon.capture.distill.turns import Turn, clip_sentences, key, sentences, split_turns

# Bump when the rules change what a note or a junk verdict says: junk verdicts of another
# version are judged again.
EXTRACTIVE_VERSION = "x2"

WORKED, OUTCOME, DECISIONS, FINDINGS, PROBLEMS, FILES, FOLLOWUPS = SECTIONS
_SECTION_OF = {
    cues.LESSON: FINDINGS,
    cues.GOTCHA: FINDINGS,
    cues.FINDING: FINDINGS,
    cues.DECISION: DECISIONS,
    cues.FIX: PROBLEMS,
    cues.FOLLOWUP: FOLLOWUPS,
}
_LIMITS = {WORKED: 7, DECISIONS: 6, FINDINGS: 6, PROBLEMS: 6, FOLLOWUPS: 5}
_ERROR_LINE = re.compile(
    r"(\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bERR_[A-Z0-9_]+\b|\bE[A-Z]{3,}\b:|Traceback|\bfatal:|\bpanic:|"
    r"\bFAILED\b|\bfailed\b|\b(?:error|ERROR|FATAL|fatal)\b:?|\bnot found\b|\bdenied\b|\btimed out\b|错误|失败|エラー|失敗|오류|실패)"
)
# Narration of what the agent is about to do is not a result.
_NARRATION = re.compile(
    r"^(let me|let's|i'll|i will|now i|first,|next,|i'm going to|going to|让我|我来|我先|まず|次に|확인해|먼저)", re.I
)
_TASK_RESULT = re.compile(r"</?task[^>]*>|</?task_result>")
_ITEM_CHARS = 300
_OUTCOME_CHARS = 1200  # shared by the turns' conclusions
_DESCRIPTION_CHARS = 200


def _short(text: str, limit: int = _ITEM_CHARS) -> str:
    return clip_sentences([" ".join(text.split())], limit)


class _Note:
    """Sections being filled, with every statement's key claimed by one section only."""

    def __init__(self) -> None:
        self.sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
        self.used: set[str] = set()

    def claimed(self, text: str) -> bool:
        k = key(text)
        return not k or k in self.used

    def add(self, section: str, text: str, parts: list[str] | None = None) -> bool:
        """Add `text` unless it (or any sentence of it) is already in the note or the section is full."""
        items = self.sections[section]
        keys = {key(p) for p in (parts or [text])} | {key(text)}
        if not text or keys & self.used or len(items) >= _LIMITS.get(section, 99):
            return False
        items.append(text)
        self.used |= keys
        return True


def _is_result(sentence: str) -> bool:
    """A conclusion sentence that states a result (not a plan, question or follow-up)."""
    labelled = cues.label_of(sentence)
    if labelled and labelled[0] != cues.FIX:
        return False
    return not (sentence.endswith("?") or sentence.endswith("？") or _NARRATION.match(sentence)) and not (
        labelled is None and cues.has_cue(sentence, cues.FOLLOWUP)
    )


def _outcomes(note: _Note, turns: list[Turn]) -> list[str]:
    """One line per turn with a conclusion; returns the sentences the lines left out."""
    concluded = [t for t in turns if t.conclusion]
    per_turn = max(160, _OUTCOME_CHARS // max(1, len(concluded)))
    rest: list[str] = []
    for turn in concluded:
        every = sentences(turn.conclusion)
        results = [s for s in every if _is_result(s) and not note.claimed(s)]
        # The first result states the outcome; later ones that are plainly a decision or
        # a root cause belong in their own section.
        results = results[:1] + [s for s in results[1:] if not cues.strong_kind(s)]
        line = clip_sentences(results, per_turn)
        kept = [s for s in results if s in line]
        if not (line and note.add(OUTCOME, line, kept)):
            kept = []
        rest += [s for s in every if s not in kept]
    return rest


def _followups(note: _Note, turns: list[Turn]) -> None:
    """Follow-ups each turn's conclusion proposed, unless a later turn did them."""
    for number, turn in enumerate(turns):
        for sentence in sentences(turn.conclusion):
            labelled = cues.label_of(sentence)
            is_followup = labelled[0] == cues.FOLLOWUP if labelled else cues.has_cue(sentence, cues.FOLLOWUP)
            if not is_followup or note.claimed(sentence):
                continue
            if done_later(sentence, turns[number + 1 :]):
                note.used.add(key(sentence))  # done: in no section at all
                continue
            note.add(FOLLOWUPS, _short(sentence))


def _classified(note: _Note, candidates: list[str]) -> None:
    """Sort statements into Decisions / Findings / Problems by label or cue."""
    for sentence in candidates:
        kind = cues.kind_of(sentence)
        if kind is None or kind == cues.FOLLOWUP:
            if _ERROR_LINE.search(sentence):
                note.add(PROBLEMS, _short(sentence))
            continue
        note.add(_SECTION_OF[kind], _short(sentence))


def _subagent_result(note: _Note, output: str) -> None:
    """A subagent's answer (the `task` tool's output) is a finding; what the note already says is left out."""
    fresh = [s for s in sentences(_TASK_RESULT.sub("", output)) if not note.claimed(s)]
    line = clip_sentences(fresh, _ITEM_CHARS)
    note.add(FINDINGS, line, [s for s in fresh if s in line])


def _tool_problems(note: _Note, tools: list[Entry]) -> None:
    for tool in tools:
        if tool.status == "error":
            target = next((tool.input[k] for k in FILE_KEYS if k in tool.input), tool.input.get("command", ""))
            note.add(PROBLEMS, _short(f"`{tool.tool}` {target} failed: {tool.error}".replace(" ` ", " ")))
    for tool in tools:
        lines = [line.strip() for line in (tool.output or "").splitlines() if _ERROR_LINE.search(line)]
        for line in list(dict.fromkeys(lines))[:2]:
            note.add(PROBLEMS, _short(f"`{tool.tool}` output: {line}", 240))


def _worked_on(note: _Note, title: str, turns: list[Turn]) -> list[str]:
    """Title and each request's opening; returns request sentences left for other sections."""
    if title:
        note.add(WORKED, _short(title))
    rest: list[str] = []
    for turn in turns:
        for ask in turn.asked:
            parts = sentences(ask, min_weight=4) or [ask]
            line = clip_sentences(parts, 200)
            kept = [p for p in parts if p in line]
            rest += [p for p in parts if p not in kept]
            note.add(WORKED, line, kept)
            # An error pasted as a code block or a log is no sentence, but it is the problem.
            rest += [e.strip() for e in ask.splitlines() if _ERROR_LINE.search(e) and e.strip() not in line]
    return rest


def _description(note: _Note, first_ask: str, title: str, files: list[str]) -> str:
    """The outcome's first sentence; never the user's own question."""
    touched = [line.split("`")[1] for line in files if line.startswith("`")][:3]
    fallback = f"No result stated; touched {', '.join(touched)}." if touched else "No result stated in the session."
    candidates = [*note.sections[OUTCOME], *note.sections[FINDINGS], *note.sections[DECISIONS], title, fallback]
    asked = key(first_ask)
    for text in candidates:
        first = (sentences(text) or [text])[0]
        k = key(first)
        if k and k != asked and not asked.startswith(k):
            return _short(first, _DESCRIPTION_CHARS)
    return fallback


class ExtractiveDistiller:
    """Builds the note's sections from the transcript's own words."""

    name = "extractive"
    concurrency = 1

    def distill(self, transcript: Transcript) -> Distilled:
        if obviously_junk(transcript):
            return Distilled(junk=True, distiller=self.name, prompt_version=EXTRACTIVE_VERSION)
        turns = split_turns(transcript.entries)
        tools = [t for turn in turns for t in turn.tools]
        note = _Note()
        asked_rest = _worked_on(note, transcript.session.title, turns)
        _followups(note, turns)
        rest = _outcomes(note, turns)
        said = [s for turn in turns for text in turn.said[:-1] for s in sentences(text)]
        _classified(note, [*rest, *said])
        for tool in tools:
            if tool.tool == "task" and tool.output:
                _subagent_result(note, tool.output)
        _classified(note, [s for s in asked_rest if cues.label_of(s) or _ERROR_LINE.search(s)])
        _tool_problems(note, tools)
        touched = Touched(transcript.session.directory)
        for turn in turns:
            for tool in turn.tools:
                touched.add_tool(tool)
            for mention in turn.mentions:
                if mention.startswith("changed files: "):
                    touched.add_changed(mention.removeprefix("changed files: ").split(","))
        note.sections[FILES] = touched.lines()
        first_ask = next((a for turn in turns for a in turn.asked), "")
        summary = _description(note, first_ask, transcript.session.title, note.sections[FILES])
        return Distilled(
            junk=False,
            body=render_sections(note.sections),
            summary=summary,
            distiller=self.name,
            prompt_version=EXTRACTIVE_VERSION,
        )

    def close(self) -> None:
        """Nothing to release."""


def render_sections(sections: dict[str, list[str]]) -> str:
    """Markdown `## Section` blocks in the canonical order; empty ones omitted."""
    out = []
    for name in SECTIONS:
        items = sections.get(name) or []
        if not items:
            continue
        if name == OUTCOME and len(items) == 1:
            out.append(f"## {name}\n\n{items[0]}\n")
        else:
            out.append(f"## {name}\n\n" + "\n".join(f"- {item}" for item in items) + "\n")
    return "\n".join(out)
