"""The default distiller: no model, no network. It picks facts out of the transcript.

The session is read as turns (a user request and what answered it). Outcome is the
conclusion of every turn, so a continued session keeps what it did earlier. Every other
sentence is sorted by its label or cue (cues.py, several languages) into one section:
each statement appears once in the note. Files are paths with what happened to them.
"""

from __future__ import annotations

import re

from daemon import lexicon
from daemon.capture.distill import cues
from daemon.capture.distill.base import SECTIONS, Distilled, Entry, Transcript
from daemon.capture.distill.describe import description, language_of
from daemon.capture.distill.followups import done_later
from daemon.capture.distill.junk import obviously_junk
from daemon.capture.distill.memo import one_session
from daemon.capture.distill.prefilter import prefiltered
from daemon.capture.distill.problems import failing_line, first_error_line, is_lifted, output_lines
from daemon.capture.distill.supersede import (
    Superseded,
    find_superseded,
    render_attempt,
    retraction_scope,
    user_retraction_scope,
)
from daemon.capture.distill.touched import Touched
from daemon.capture.distill.turns import Turn, clip_sentences, key, sentences, split_turns, weight

# Bump when the rules change what a note or a junk verdict says: junk verdicts of another
# version are judged again. The lexicon's digest is part of it: a changed word table
# (`daemon.lexicon`) re-distils extractive notes once.
EXTRACTIVE_VERSION = f"x3.{lexicon.digest()}"

WORKED, OUTCOME, DECISIONS, FINDINGS, PROBLEMS, FILES, FOLLOWUPS = SECTIONS
_SECTION_OF = {
    cues.LESSON: FINDINGS,
    cues.GOTCHA: FINDINGS,
    cues.FINDING: FINDINGS,
    cues.DECISION: DECISIONS,
    cues.FIX: PROBLEMS,
    cues.FOLLOWUP: FOLLOWUPS,
}
_LIMITS = {WORKED: 7, DECISIONS: 6, FINDINGS: 6, PROBLEMS: 8, FOLLOWUPS: 5}
_FAILING_COMMANDS = 3  # failing commands listed under Problems & Fixes, first ones first
# Its alternatives at the top level, so that a line is asked only those whose words it holds.
_ERROR_LINE = prefiltered(
    r"\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bERR_[A-Z0-9_]+\b|\bE[A-Z]{3,}\b:|Traceback|\bfatal:|\bpanic:|"
    r"\bFAILED\b|\bfailed\b|\b(?:error|ERROR|FATAL|fatal)\b:?|\bnot found\b|\bdenied\b|\btimed out\b|错误|失败|エラー|失敗|오류|실패"
)
_CHANGE_TOOLS = frozenset({"edit", "write", "multiedit", "patch", "apply_patch", "str_replace_based_edit_tool"})
# A sentence that reports the change itself ("Moved…", "改为…"), not the reason for it.
_ACTIONS_DONE = re.compile(r"(?i)^(?:i |we )?(?:\w+ed|made|set|put|wrote|rewrote)\b")
_SHORT_FINDING = 60  # a decisive finding lighter than this takes the sentence after it
_TASK_RESULT = re.compile(r"</?task[^>]*>|</?task_result>")
_ITEM_CHARS = 300
_ASK_CHARS = 500  # a request is kept whole up to this, then cut at a word
_FOLLOWUP_ASK_CHARS = 1000  # a continued session's later request: what is asked now, kept whole
_LAST_OUTCOME_CHARS = 500  # the final state
_OUTCOME_CHARS = 900  # shared by the earlier turns' conclusions


def _short(text: str, limit: int = _ITEM_CHARS) -> str:
    return clip_sentences([" ".join(text.split())], limit)


class _Note:
    """Sections being filled, with every statement's key claimed by one section only."""

    def __init__(self, superseded: Superseded | None = None) -> None:
        self.sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
        self.superseded = superseded or Superseded()
        # A withdrawn claim is stated once, as a failed attempt, and nowhere else.
        self.used: set[str] = set(self.superseded.withdrawn)
        self.asked: list[str] = []  # keys of the requests' sentences: never repeated outside What Was Worked On

    def claimed(self, text: str) -> bool:
        k = key(text)
        return not k or k in self.used

    def add(self, section: str, text: str, parts: list[str] | None = None) -> bool:
        """Add `text` unless it (or any sentence of it) is already in the note or the section is full."""
        items = self.sections[section]
        keys = {key(p) for p in (parts or [text])} | {key(text)}
        if not text or keys & self.used or len(items) >= _LIMITS.get(section, 99):
            return False
        if section != WORKED and any(asked in key(text) for asked in self.asked):
            return False
        items.append(text)
        self.used |= keys
        return True


def _is_result(sentence: str) -> bool:
    """A conclusion sentence that states a result (not a plan, question or follow-up)."""
    labelled = cues.label_of(sentence)
    if labelled and labelled[0] != cues.FIX:
        return False
    return not (sentence.endswith("?") or sentence.endswith("？") or cues.NARRATION.match(sentence)) and not (
        labelled is None and cues.has_cue(sentence, cues.FOLLOWUP)
    )


def _outcome_line(note: _Note, turn: Turn, limit: int) -> tuple[str, list[str]]:
    """A turn's result line and the sentences it holds."""
    every = sentences(turn.conclusion)
    results = [s for s in every if _is_result(s) and not note.claimed(s)]
    # The first result states the outcome; later ones that are plainly a decision or
    # a root cause belong in their own section.
    # A retraction in the last turn is the state the session ended in: it stays.
    standing = note.superseded.retractions
    results = results[:1] + [s for s in results[1:] if key(s) in standing or not cues.strong_kind(s)]
    line = clip_sentences(results, limit)
    return line, [s for s in results if s in line]


def _outcomes(note: _Note, turns: list[Turn]) -> list[str]:
    """The last turn's result first (where the session ended), then the earlier turns' that still stand.

    Returns the conclusions' sentences the lines left out.
    """
    concluded = [t for t in turns if t.conclusion]
    rest: list[str] = []
    if not concluded:
        return rest
    per_turn = max(160, _OUTCOME_CHARS // max(1, len(concluded) - 1))
    lines: dict[int, str] = {}
    for number, turn in reversed(list(enumerate(concluded))):
        line, kept = _outcome_line(note, turn, _LAST_OUTCOME_CHARS if number == len(concluded) - 1 else per_turn)
        if not (line and note.add(OUTCOME, line, kept)):
            kept = []
        else:
            lines[number] = line
        rest += [s for s in sentences(turn.conclusion) if s not in kept]
    order = sorted(lines)
    note.sections[OUTCOME] = [lines[n] for n in order[-1:] + order[:-1]]
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


def _decisive(note: _Note, candidates: list[str], following: dict[str, str]) -> None:
    """Settled findings ("found it", "原因是", "判明", "원인은") first, wherever in the session they stand.

    A short one ("原因は pandas のバージョンでした。") takes the sentence after it, which says how.
    """
    for sentence in candidates:
        if not cues.is_decisive(sentence) or cues.is_intent(sentence) or cues.kind_of(sentence) == cues.DECISION:
            continue
        after = following.get(sentence, "")
        if weight(sentence) < _SHORT_FINDING and _explains(note, after):
            line = clip_sentences([sentence, after], _ITEM_CHARS)
            if after in line and note.add(FINDINGS, line, [sentence, after]):
                continue
        note.add(FINDINGS, _short(sentence))


def _explains(note: _Note, sentence: str) -> bool:
    """A sentence that can carry on a finding: a statement, not a plan, question, retraction or claimed line."""
    return bool(sentence) and not (
        note.claimed(sentence) or cues.is_plan(sentence) or sentence.endswith(("?", "？")) or retraction_scope(sentence)
    )


def _diagnoses(note: _Note, turns: list[Turn], lifted: set[str]) -> None:
    """What the agent said just before a change that held: the reason for it, a finding (one a turn).

    A change that its turn, or the user's next request, says did not help explains nothing: left out.
    """
    for number, turn in enumerate(turns):
        steps = turn.steps
        reported = number + 1 < len(turns) and any(
            user_retraction_scope(s) for ask in turns[number + 1].asked for s in sentences(ask, lead_ins=True))
        for index, step in enumerate(steps[:-1]):
            changes = steps[index + 1].kind == "tool" and steps[index + 1].tool.lower() in _CHANGE_TOOLS
            if step.kind != "text" or not changes or reported or _retracted_after(steps[index + 1 :]):
                continue
            found = [s for s in sentences(step.text) if _explains(note, s) and not is_lifted(s, lifted)
                     and cues.kind_of(s) in (None, cues.FINDING) and not _ACTIONS_DONE.search(s)]
            if found and note.add(FINDINGS, _short(found[0])):
                break


def _retracted_after(steps: list[Entry]) -> bool:
    return any(retraction_scope(s) for step in steps if step.kind == "text" for s in sentences(step.text))


def _classified(note: _Note, candidates: list[str], lifted: set[str]) -> None:
    """Sort statements into Decisions / Findings / Problems by label or cue; plans and lifted lines are no fix."""
    for sentence in candidates:
        kind = cues.kind_of(sentence)
        if kind in (None, cues.FOLLOWUP, cues.FIX) and (cues.is_plan(sentence) or is_lifted(sentence, lifted)):
            continue
        if kind is None or kind == cues.FOLLOWUP:
            if _ERROR_LINE.found(sentence):
                note.add(PROBLEMS, _short(sentence))
            continue
        if cues.is_intent(sentence) and not cues.label_of(sentence):
            continue
        note.add(_SECTION_OF[kind], _short(sentence))


def _subagent_result(note: _Note, output: str) -> None:
    """A subagent's answer (the `task` tool's output) is a finding; what the note already says is left out."""
    fresh = [s for s in sentences(_TASK_RESULT.sub("", output)) if not note.claimed(s)]
    line = clip_sentences(fresh, _ITEM_CHARS)
    note.add(FINDINGS, line, [s for s in fresh if s in line])


def _tool_problems(note: _Note, tools: list[Entry]) -> None:
    """The first failing commands, each with its first real error line."""
    listed = 0
    errors: set[str] = set()
    for tool in tools:
        line = failing_line(tool)
        error = re.split(r"` (?:failed|shows): ", line, maxsplit=1)[-1]
        if not line or error in errors or listed >= _FAILING_COMMANDS:
            continue
        if note.add(PROBLEMS, line):
            listed += 1
            errors.add(error)


def _attempts(note: _Note, language: str) -> None:
    for attempt in note.superseded.attempts:
        items = note.sections[PROBLEMS]
        line = render_attempt(attempt, language)
        if line not in items:
            items.append(line)


def _worked_on(note: _Note, title: str, turns: list[Turn]) -> list[str]:
    """Title and each request, whole up to a limit; returns what of the requests other sections may use."""
    if title:
        note.add(WORKED, _short(title))
    rest: list[str] = []
    for turn in turns:
        for ask in turn.asked:
            parts = sentences(ask, min_weight=4, lead_ins=True) or [ask]
            whole = clip_sentences(parts, 10 * _ASK_CHARS)
            limit = _ASK_CHARS if turn is turns[0] else _FOLLOWUP_ASK_CHARS
            line = whole if len(whole) <= limit else whole[: limit - 1].rsplit(" ", 1)[0] + "…"
            note.add(WORKED, line, parts)
            note.used |= {key(p) for p in parts}  # the request is never repeated in another section
            note.asked += [key(p) for p in parts if weight(key(p)) >= 24]
            # An error pasted as a code block or a log is no sentence, but its first real error line is the problem.
            pasted = first_error_line(ask) or next((e.strip() for e in ask.splitlines() if _ERROR_LINE.found(e)), "")
            if pasted and pasted not in line:
                rest.append(pasted)
            rest += [p for p in parts if cues.label_of(p) and cues.kind_of(p) == cues.DECISION and p not in line]
    return rest


class ExtractiveDistiller:
    """Builds the note's sections from the transcript's own words."""

    name = "extractive"
    concurrency = 1

    def distill(self, transcript: Transcript) -> Distilled:
        if obviously_junk(transcript):
            return Distilled(junk=True, distiller=self.name, prompt_version=EXTRACTIVE_VERSION)
        with one_session():  # the same sentences and tool calls are read several times over
            return self._note(transcript)

    def _note(self, transcript: Transcript) -> Distilled:
        turns = split_turns(transcript.entries)
        tools = [t for turn in turns for t in turn.tools]
        language = language_of([a for turn in turns for a in turn.asked] or [transcript.session.title])
        note = _Note(find_superseded(turns, language))
        asked_rest = _worked_on(note, transcript.session.title, turns)
        _followups(note, turns)
        rest = _outcomes(note, turns)
        note.used |= note.superseded.retractions  # stated by the failed attempt that quotes it
        split = [sentences(text) for turn in turns for text in turn.said[:-1]]
        split += [sentences(turn.conclusion) for turn in turns]
        following = {parts[i]: parts[i + 1] for parts in split for i in range(len(parts) - 1)}
        said = [s for parts in split[: len(split) - len(turns)] for s in parts]
        _decisive(note, [*said, *rest], following)
        lifted = output_lines(tools)
        _diagnoses(note, turns, lifted)
        _tool_problems(note, tools)
        _attempts(note, language)
        _classified(note, [*rest, *said], lifted)
        for tool in tools:
            if tool.tool == "task" and tool.output:
                _subagent_result(note, tool.output)
        _classified(note, [s for s in asked_rest if cues.label_of(s) or _ERROR_LINE.found(s)], set())
        note.sections[FILES] = _files(transcript.session.directory, turns)
        first_ask = next((a for turn in turns for a in turn.asked), "")
        candidates = [*note.sections[OUTCOME], *note.sections[FINDINGS], *note.sections[DECISIONS], transcript.session.title]
        summary = description(candidates, first_ask, note.sections[FILES], language)
        return Distilled(
            junk=False,
            body=render_sections(note.sections),
            summary=summary,
            distiller=self.name,
            prompt_version=EXTRACTIVE_VERSION,
            scrubbed=True,  # sentences, paths and the title of the scrubbed transcript only
        )

    def close(self) -> None:
        """Nothing to release."""


def _files(directory: str, turns: list[Turn]) -> list[str]:
    touched = Touched(directory)
    for turn in turns:
        for tool in turn.tools:
            touched.add_tool(tool)
        for mention in turn.mentions:
            if mention.startswith("changed files: "):
                touched.add_changed(mention.removeprefix("changed files: ").split(","))
    return touched.lines()


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
