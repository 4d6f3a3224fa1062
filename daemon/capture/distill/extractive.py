"""The default distiller: no model, no network. It picks facts out of the transcript.

The session is read as turns (a user request and what answered it). What the tools
recorded comes first (evidence.py: exit status, tallies, the re-run after each edit),
then the final answer's own structure (structure.py: its outcome, cause, fix, what did
not work, next steps), then cue words. Outcome is the conclusion of every turn, so a
continued session keeps what it did earlier; a structured final answer puts the check
that shows it, its cause and its fix under it. Every other sentence is sorted by its
label or cue (cues.py, the lexicon's tables) into one section: each statement appears
once in the note. Files are paths with what happened to them.
"""

from __future__ import annotations

import re

from daemon import lexicon
from daemon.capture.distill import cues
from daemon.capture.distill.base import SECTIONS, Distilled, Entry, Transcript
from daemon.capture.distill.describe import description, language_of
from daemon.capture.distill.evidence import FIXED, UNRESOLVED, Evidence, gather
from daemon.capture.distill.followups import done_later, replaced_later
from daemon.capture.distill.junk import obviously_junk
from daemon.capture.distill.memo import one_session
from daemon.capture.distill.structure import CAUSE, FAILED, FIX, NEXT, read_blocks, role_by_sentence, structured
from daemon.capture.distill.structure import OUTCOME as LEAD
from daemon.capture.distill.problems import failing_line, first_error_line, is_lifted, output_lines
from daemon.capture.distill.supersede import (
    Superseded,
    find_superseded,
    names,
    render_attempt,
    retraction_scope,
    user_retraction_scope,
)
from daemon.capture.distill.tables import RegexTable
from daemon.capture.distill.touched import Touched
from daemon.capture.distill.turns import Turn, clip_sentences, key, sentences, split_turns, weight

# Bump when the rules change what a note or a junk verdict says: junk verdicts of another
# version are judged again. The lexicon's digest is part of it: a changed word table
# (`daemon.lexicon`) re-distils extractive notes once.
EXTRACTIVE_VERSION = f"x4.{lexicon.digest()}"

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
_ERROR_LINE = RegexTable("distill_error_line")
_CHANGE_TOOLS = frozenset({"edit", "write", "multiedit", "patch", "apply_patch", "str_replace_based_edit_tool"})
# A sentence that reports the change itself ("Moved…", "改为…"), not the reason for it.
_ACTIONS_DONE = re.compile(r"(?i)^(?:i |we )?(?:\w+ed|made|set|put|wrote|rewrote)\b")
_SHORT_FINDING = 60  # a decisive finding lighter than this takes the sentence after it
_TASK_RESULT = re.compile(r"</?task[^>]*>|</?task_result>")
_ITEM_CHARS = 300
_CAUSE_CHARS = 450  # the cause, as the answer states it: how it came about is part of it
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
    return not (sentence.endswith("?") or sentence.endswith("？") or cues.narrates(sentence)) and not (
        labelled is None and cues.has_cue(sentence, cues.FOLLOWUP)
    )


def _outcome_line(note: _Note, turn: Turn, limit: int) -> tuple[str, list[str]]:
    """A turn's result line and the sentences it holds."""
    every = sentences(turn.conclusion)
    if structured(turn.conclusion):  # the answer says which blocks are its outcome: the others have their own place
        roles = role_by_sentence(turn.conclusion)
        # Without an outcome paragraph, the fix is what the answer ended with.
        every = [s for s in every if roles.get(s, LEAD) == LEAD] or [s for s in every if roles.get(s) == FIX] or every
    results = [s for s in every if _is_result(s) and not note.claimed(s)]
    # The first result states the outcome; later ones that are plainly a decision or
    # a root cause belong in their own section.
    # A retraction in the last turn is the state the session ended in: it stays.
    standing = note.superseded.retractions
    results = results[:1] + [s for s in results[1:] if key(s) in standing or not cues.strong_kind(s)]
    line = clip_sentences(results, limit)
    return line, [s for s in results if s in line]


def _outcomes(note: _Note, turns: list[Turn], lead: Turn | None = None) -> list[str]:
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
        if line and replaced_later(line, turn, concluded[number + 1 :]):
            note.used |= {key(s) for s in kept}  # what a later request changed no longer stands: stated nowhere
            continue
        if not (line and note.add(OUTCOME, line, kept)):
            kept = []
        else:
            lines[number] = line
        rest += [s for s in sentences(turn.conclusion) if s not in kept]
    order = sorted(lines)
    # Where the session ended leads: the last turn's result, or the final answer's when only a "thanks" followed.
    first = next((n for n in order if concluded[n] is lead), order[-1] if order else None)
    note.sections[OUTCOME] = [lines[n] for n in [first, *(n for n in order if n != first)] if n is not None]
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


def _tool_problems(note: _Note, tools: list[Entry], evidence: Evidence) -> None:
    """The first failing commands, each with its first real error line; what the tools say did not fail is left out."""
    listed = 0
    errors: set[str] = set()
    for tool in tools:
        run = evidence.run_of(tool)
        if run is not None and (run.failed is False or (run.check and not evidence.is_problem(run))):
            continue  # exit 0, a passing tally, a search that found lines, or a check meant to fail
        if run is not None and evidence.failed_unchanged(run):
            continue  # the same check failing again with nothing edited since: no new problem
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


def _block_line(text: str, limit: int = _ITEM_CHARS) -> tuple[str, list[str]]:
    """A labelled block as one line: its statements (no question, no plan), whole up to a limit."""
    parts = [s for s in sentences(text) or [text] if not (s.endswith(("?", "？")) or cues.is_intent(s))]
    line = clip_sentences(parts, limit)
    return line, [p for p in parts if p in line]


def _final_answer(turns: list[Turn]) -> tuple[Turn | None, tuple]:
    """The turn of the session's structured final answer and its blocks: the last turn's, or the last one
    before turns that did nothing more (a "thanks" and its reply). (None, ()) when it has no structure."""
    for turn in reversed(turns):
        if structured(turn.conclusion):
            return turn, read_blocks(turn.conclusion)
        if turn.tools:
            break
    return None, ()


def _next_steps(note: _Note, final: tuple) -> None:
    """The steps the final answer leaves, as it lists them."""
    for block in final:
        if block.role == NEXT:
            line, parts = _block_line(block.text)
            note.add(FOLLOWUPS, line, parts)


def _cause_and_fix(note: _Note, final: tuple, evidence: Evidence) -> None:
    """Under the outcome: the check that shows it, then the final answer's cause and fix, as it labels them."""
    if not final:
        return
    outcome, proof = evidence.outcome()
    lines = note.sections[OUTCOME]
    if proof is not None and outcome in (FIXED, UNRESOLVED) and not any(proof.command in line for line in lines):
        note.add(OUTCOME, _short(proof.stated()))
    for role in (CAUSE, FIX):
        for block in final:
            if block.role == role:
                line, parts = _block_line(block.text, _CAUSE_CHARS if role == CAUSE else _ITEM_CHARS)
                note.add(OUTCOME, line, parts)


def _ruled_out(note: _Note, final: tuple) -> list[str]:
    """What the final answer says did not work or was not the cause, in its words, unless a failed attempt
    already says it (it names what the attempt tried). Claimed now, listed after the attempts."""
    out = []
    for block in final:
        if block.role != FAILED:
            continue
        line, parts = _block_line(block.text)
        told = any(names(block.content, claim) for attempt in note.superseded.attempts for claim in attempt.claims)
        if line and not told and not note.claimed(line):
            out.append(line)
        note.used |= {key(p) for p in parts} | {key(line)}
    return out


def _worked_on(note: _Note, title: str, turns: list[Turn]) -> list[str]:
    """Each request, whole up to a limit (the title when nothing was asked: the note's frontmatter carries it
    already); returns what of the requests other sections may use."""
    if title and not any(turn.asked for turn in turns):
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
        evidence = gather(turns)
        note = _Note(find_superseded(turns, language, evidence))
        asked_rest = _worked_on(note, transcript.session.title, turns)
        lead, final = _final_answer(turns)
        _next_steps(note, final)
        _followups(note, turns)
        rest = _outcomes(note, turns, lead)
        _cause_and_fix(note, final, evidence)
        ruled_out = _ruled_out(note, final)
        note.used |= note.superseded.retractions  # stated by the failed attempt that quotes it
        split = [sentences(text) for turn in turns for text in turn.said[:-1]]
        split += [sentences(turn.conclusion) for turn in turns]
        following = {parts[i]: parts[i + 1] for parts in split for i in range(len(parts) - 1)}
        said = [s for parts in split[: len(split) - len(turns)] for s in parts]
        _decisive(note, [*said, *rest], following)
        lifted = output_lines(tools)
        _diagnoses(note, turns, lifted)
        _tool_problems(note, tools, evidence)
        _attempts(note, language)
        note.sections[PROBLEMS] += ruled_out
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
