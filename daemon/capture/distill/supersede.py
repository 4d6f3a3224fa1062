"""Pure: statements a later part of the session withdraws, and the failed attempts they make.

A *claim* is what the agent states as a result, a cause or a fix. A *retraction* takes
claims back. There are two kinds. One says the problem persists ("still fails", "didn't
help", "reverted my change", in every language of the lexicon): it withdraws the results and fixes
claimed so far. The other says a diagnosis was wrong or did not hold ("that was not it",
"didn't hold up", and their equivalents): it withdraws the causes too. A retraction reaches
back over its own turn's claims, or, when it opens a turn (a user reporting the fix broken)
or its turn has claimed nothing yet, the previous turn's. A withdrawn claim is never an
outcome, a cause or a fix: it becomes one failed attempt, "Tried X — did not work: Y".
A retraction takes back the claims it names (a path, two content words) when it names
any; an answer's labelled blocks (structure.py) speak for themselves; and the tools
(evidence.py) protect a fix the last check passed after from words that name nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from daemon.capture.distill import cues
from daemon.capture.distill.base import Entry
from daemon.capture.distill.evidence import Evidence
from daemon.capture.distill.followups import terms
from daemon.capture.distill.memo import per_session
from daemon.capture.distill.problems import failing_line
from daemon.capture.distill.structure import FAILED, read_blocks, role_by_sentence, structured
from daemon.capture.distill.tables import RegexTable
from daemon.capture.distill.turns import Turn, clip_sentences, key, sentences, weight

# How a failed attempt opens under Problems & Fixes, per language of the session.
ATTEMPT_LABELS = {"en": ("Tried: ", " — did not work: "), "zh": ("尝试过：", "没有用："), "ja": ("試したこと：", "効かなかった："),
                  "ko": ("시도: ", " — 효과 없음: ")}
ATTEMPT_PREFIXES = tuple(label for label, _ in ATTEMPT_LABELS.values())
# A fix the user reported broken: their words stand in What Was Worked On, so they are not quoted again.
_REPORTED = {"en": "the user reported it still broken (next request)", "zh": "用户反馈仍未解决（见下一个请求）",
             "ja": "ユーザーから直っていないと報告（次の依頼）", "ko": "사용자가 여전히 안 된다고 보고함 (다음 요청)"}
FIXES, ALL = "fixes", "all"
FINDING, ACTION, OBSERVATION = "finding", "action", "observation"


def _alternatives(table: str) -> RegexTable:
    """A retraction table (regex alternatives in order, every language, tables.py), case-insensitive."""
    return RegexTable(table, "(?i)")


# A result or a fix: something done or now true ("Moved…", "now passes", "switched to").
_ACTION = _alternatives("distill_action")
_PERSISTS = _alternatives("distill_persists")  # the problem persists: "still fails", "didn't help"
_WRONG = _alternatives("distill_wrong")  # a diagnosis was wrong: "that was not it", "wrong guess"
# A finding that names the real cause corrects the causes claimed before it ("the real cause is X").
_CORRECTS = _alternatives("distill_corrects")
# "Still red, but now it is clippy that fails": a new problem; the earlier fix held for its own.
_MOVED_ON = _alternatives("distill_moved_on")
_CONDITIONAL = _alternatives("distill_conditional")
_CLAUSE = re.compile(r"(?<=[:：;；,，—])\s*")


# From the user, in a later request, "still" is the problem persisting ("it still runs twice").
_USER_STILL = _alternatives("distill_user_still")


@per_session
def user_retraction_scope(sentence: str) -> str | None:
    """retraction_scope for a user's follow-up request, where any "still" reports the fix broken."""
    scope = retraction_scope(sentence)
    if scope or _CONDITIONAL.search(sentence) or sentence.endswith(("?", "？")) or _MOVED_ON.found(sentence):
        return scope
    return FIXES if _USER_STILL.found(sentence) else None


@per_session
def retraction_scope(sentence: str) -> str | None:
    """ALL when the sentence takes back a diagnosis, FIXES when it says the problem persists, else None."""
    if _CONDITIONAL.search(sentence) or sentence.endswith(("?", "？")):
        return None
    if _WRONG.found(sentence):
        return ALL
    return FIXES if _PERSISTS.found(sentence) and not _MOVED_ON.found(sentence) else None


def states_finding(sentence: str) -> bool:
    """A retraction that also names what is true instead ("That was not it: the real cause is X")."""
    return cues.is_decisive(_WRONG.sub(" ", _PERSISTS.sub(" ", sentence)))


@per_session
def is_claim(sentence: str) -> bool:
    """A statement of a result, cause or fix (not a plan, question, follow-up or durable rule)."""
    labelled = cues.label_of(sentence)
    if labelled and labelled[0] in (cues.LESSON, cues.GOTCHA, cues.DECISION, cues.FOLLOWUP):
        return False
    if labelled is None and cues.has_cue(sentence, cues.FOLLOWUP):
        return False
    return not (sentence.endswith(("?", "？")) or cues.is_intent(sentence))


@dataclass
class Attempt:
    """Claims one retraction withdrew, and why they failed."""

    claims: list[str]
    reason: str
    turn: int
    fixes: list[str] = field(default_factory=list)  # the claims that were fixes or results


@dataclass
class Superseded:
    withdrawn: set[str] = field(default_factory=set)  # keys of withdrawn claims
    retractions: set[str] = field(default_factory=set)  # keys of retraction sentences (not themselves findings)
    attempts: list[Attempt] = field(default_factory=list)


@dataclass
class _Claim:
    turn: int
    text: str
    kind: str  # FINDING, ACTION (a fix or a result) or OBSERVATION
    at: int  # position in the session

    @property
    def finding(self) -> bool:
        return self.kind == FINDING

    def falls_with_its_fix(self) -> bool:
        """A result or fix, or a cause that was only a guess: what "the problem persists" takes back."""
        return self.kind == ACTION or (self.finding and cues.is_hedged(self.text))


@dataclass
class _Reader:
    language: str
    claims: list[_Claim] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (position, "`cmd` failed: line")
    found: Superseded = field(default_factory=Superseded)
    # Causes whose fix did not help: withdrawn too once a later finding names another cause.
    doubted: list[tuple[Attempt, list[_Claim]]] = field(default_factory=list)
    at: int = 0
    evidence: Evidence = field(default_factory=Evidence)

    def held(self, claim: _Claim) -> bool:
        """The tools say this fix or result stands, now: the last check before this point passed, after the
        claim, and nothing was edited since. "Still fails" said then is about something else."""
        runs = [r for r in self.evidence.runs if r.check and r.failed is not None and r.at < self.at]
        if claim.kind != ACTION or not runs or runs[-1].failed or runs[-1].at < claim.at:
            return False
        return not any(runs[-1].at < e.at < self.at for e in self.evidence.edits)

    def claim(self, claim: _Claim) -> None:
        if claim.finding:
            for attempt, causes in self.doubted:
                causes = [c for c in causes if c in self.claims]
                if not causes:
                    continue
                if attempt not in self.found.attempts:
                    self.found.attempts.append(attempt)
                attempt.claims[:0] = [c.text for c in causes]
                self.found.withdrawn |= {key(c.text) for c in causes}
                self.claims = [c for c in self.claims if c not in causes]
            self.doubted = []
        self.claims.append(claim)

    def retract(self, turn: int, sentence: str, scope: str, following: str, by_user: bool, named: bool = False,
                before: int | None = None) -> None:
        """Withdraw the claims `sentence` takes back: those it (or the sentence after it) names, when it names
        any (shared words, a path); else its turn's claims. With `named`, only those it names; with `before`,
        only claims made before that position (a labelled block never withdraws its own answer)."""
        reach = [[c for c in self.claims if c.turn == n and (before is None or c.at < before)] for n in (turn, turn - 1)]
        said = f"{sentence} {following}"
        # The claims it names, in its own turn and the previous one; naming none (and allowed to), its own
        # turn's claims, else the previous turn's. Unnamed, the agent's own words never take back a fix the
        # tools saw hold; a user's report (another machine, a later run) may.
        windows = [_named(said, reach[0] + reach[1])]
        if not windows[0] and not named:
            windows = [[c for c in claims if by_user or not self.held(c)] for claims in reach]
        window, targets = [], []
        for window in windows:
            targets = [c for c in window if scope == ALL or c.falls_with_its_fix()]
            if targets:
                break
        if not states_finding(sentence):
            self.found.retractions.add(key(sentence))
        causes = [c for c in window if c.finding and c not in targets]
        if not (targets or causes):
            return
        since = max(c.at for c in targets or causes)
        attempt = Attempt([c.text for c in targets], self._reason(sentence, following, by_user, since), turn,
                          [c.text for c in targets if c.kind == ACTION])
        if targets:
            self.found.attempts.append(attempt)
            self.found.withdrawn |= {key(c.text) for c in targets}
            self.claims = [c for c in self.claims if c not in targets]
        if causes:  # the fix built on them failed: they fall when a later finding names another cause
            self.doubted.append((attempt, causes))

    def correct(self, turn: int, sentence: str) -> None:
        """A new cause replaces the causes claimed in this turn (and the fixes built on them)."""
        if any(c.finding for c in self.claims if c.turn == turn):
            targets = [c for c in self.claims if c.turn == turn]
            self.found.attempts.append(Attempt([c.text for c in targets], sentence, turn))
            self.found.withdrawn |= {key(c.text) for c in targets}
            self.claims = [c for c in self.claims if c not in targets]

    def _reason(self, sentence: str, following: str, by_user: bool, since: int) -> str:
        if by_user:
            return _REPORTED[self.language]
        if states_finding(sentence):  # "That was not it: the real cause is X": X is a finding of its own
            return _CLAUSE.split(sentence)[0].rstrip(":：,，;；—")
        reason = sentence
        if weight(sentence) < 40 and following and not cues.is_decisive(following):
            reason = clip_sentences([sentence, following], 240)
            self.found.retractions.add(key(following))
        error = next((text for at, text in self.errors if at > since), "")
        if weight(reason) < 40 and error:
            reason = f"{reason} {error}"
        return reason


def _claim_kind(sentence: str) -> str:
    # A guess is a cause claimed, however it is worded ("I bet the off-by-one is in merge_runs").
    if cues.kind_of(sentence) == cues.FINDING or cues.is_decisive(sentence) or cues.is_hedged(sentence):
        return FINDING
    if cues.has_cue(sentence, cues.FIX) or _ACTION.found(sentence):
        return ACTION
    return OBSERVATION


# Hiragana bigrams are particles and endings, and so are a Korean word's last syllables (the polite past ending):
# content is in Han, katakana, Latin, and a Korean word's first two syllables.
_KANA_ONLY = re.compile(r"^[\u3040-\u309f\u30fc]+$")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_HANGUL_WORD = re.compile(r"[\uac00-\ud7af]{2,}")


@per_session
def _content(text: str) -> frozenset[str]:
    found = {t for t in terms(text) if not (_KANA_ONLY.match(t) or _HANGUL.match(t))}
    return frozenset(found | {w[:2] for w in _HANGUL_WORD.findall(text)})


def _shared(sentence: str, claim: str) -> set[str]:
    return set(_content(sentence) & _content(claim))


def names(sentence: str, claim: str) -> bool:
    """A withdrawal that names this claim: a path or symbol of it, or two of its distinctive words."""
    shared = _shared(sentence, claim)
    return any(re.search(r"[./_=()]", t) for t in shared) or len(shared) >= 2


def _named(sentence: str, claims: list[_Claim]) -> list[_Claim]:
    """The claims a withdrawal names, the one it names most first among equals: [] when it names none."""
    told = [c for c in claims if names(sentence, c.text)]
    if len(told) < 2:
        return told
    best = max(len(_shared(sentence, c.text)) for c in told)
    # A claim sharing much less than the best one is only on the same subject.
    return [c for c in told if 2 * len(_shared(sentence, c.text)) >= best]


def _read_step(reader: _Reader, number: int, step: Entry) -> None:
    reader.at += 1
    if step.kind == "tool":
        run = reader.evidence.run_of(step)
        if run is not None and (run.failed is False or (run.check and not reader.evidence.is_problem(run))):
            return  # the tools say it did not fail: a grep that found lines, a check meant to fail
        line = failing_line(step)
        if line:
            reader.errors.append((reader.at, line))
        return
    parts = sentences(step.text)
    # In an answer with its own structure, a labelled block speaks for itself: a withdrawal in it takes
    # back only what it names, and a "what did not work" block is no claim: its first sentence names
    # what failed (the rest says why), and withdraws that, never the answer's own claims.
    roles = role_by_sentence(step.text) if structured(step.text) else {}
    naming = {sentences(b.text)[0] for b in read_blocks(step.text) if roles and b.role == FAILED and sentences(b.text)}
    for index, sentence in enumerate(parts):
        role = roles.get(sentence)
        if role == FAILED:
            if sentence in naming:
                reader.retract(number, sentence, ALL, "", by_user=False, named=True, before=reader.at)
            continue
        scope = retraction_scope(sentence)
        if scope:
            following = parts[index + 1] if index + 1 < len(parts) and not role else ""
            reader.retract(number, sentence, scope, following, by_user=False, named=bool(roles))
        elif is_claim(sentence):
            kind = _claim_kind(sentence)
            if kind == FINDING and _CORRECTS.found(sentence):
                reader.correct(number, sentence)
            reader.claim(_Claim(number, sentence, kind, reader.at))


def find_superseded(turns: list[Turn], language: str = "en", evidence: Evidence | None = None) -> Superseded:
    """Every claim a later part of the session withdraws, grouped into failed attempts.

    With the tools' `evidence`, words that name no claim never withdraw a fix the last check passed
    after, and a command the tools say did not fail is no failed attempt's reason.
    """
    reader = _Reader(language if language in ATTEMPT_LABELS else "en", evidence=evidence or Evidence())
    for number, turn in enumerate(turns):
        for ask in turn.asked:
            for sentence in sentences(ask, lead_ins=True):
                scope = user_retraction_scope(sentence)
                if scope and number:
                    reader.retract(number, sentence, scope, "", by_user=True)
        for step in turn.steps:
            _read_step(reader, number, step)
    return reader.found


def _unlabelled(claim: str) -> str:
    """"Fixed: X" reads "X" after "Tried:"."""
    labelled = cues.label_of(claim)
    return labelled[1] if labelled and labelled[0] == cues.FIX and labelled[1] else claim


def render_attempt(attempt: Attempt, language: str) -> str:
    """"Tried: X — did not work: Y" in the session's language."""
    tried, failed = ATTEMPT_LABELS.get(language, ATTEMPT_LABELS["en"])
    what = clip_sentences([" ".join(_unlabelled(c).split()) for c in attempt.claims], 240)
    if any(" ".join(_unlabelled(f).split()) not in what for f in attempt.fixes):  # too long: the fix, not the guess
        what = clip_sentences([" ".join(_unlabelled(f).split()) for f in attempt.fixes], 240)
    return f"{tried}{what}{failed}{clip_sentences([' '.join(attempt.reason.split())], 240)}"
