"""Which memories are really about a session's first prompt: evidence a person would accept.

A preview costs every step of a session its tokens, so one is shown only when the memory
holds the prompt's informative content. The signals, in order:

1. Content. The prompt's words minus filler (`stopwords`, the lexicon's chat and weak
   words); a CJK text as character bigrams, a Korean or katakana word (a run of its
   script) as one term found only where a word starts; an identifier and its parts are
   one unit (DEPLOY_ENV with deploy and env), two words a memory writes as one are one
   (time out: timeout). A word no memory holds may be a typo of one (`typos`).
2. Forms. Each word is looked up as it is, in its inflections and irregular forms both
   ways, and in the other words and languages of its glossary concept (`wordforms`,
   `daemon.lexicon`): found fully in the title, description or tags, half in the body.
3. Weight. A word weighs its IDF in the store times its specificity in general language
   (`commonness`: wordfreq), so that the weights are right in a 20-memory store (where
   IDF cannot tell "building" from "lockfile") and in a 100k one. A word more than 2 % of
   the memories the session sees hold is common and never decides (`search_terms`). A
   word no memory holds weighs half its weight where coverage is measured (a paraphrase's
   own words are no memory's), all of it where the question is what the prompt says.
4. Informative content. A memory is about the prompt when it holds a deciding word, its
   informative units (not broad: `broad`, `actions`) weigh SHARE of the prompt's, and
   either a strong one (a deciding word in its title, description or tags, a deciding
   identifier anywhere) or two units; a single unit must be SOLO of what the prompt says.
   An exact identifier is evidence enough; words of a pasted log confirm, the user's own
   words decide (`prompt_terms.prose_of`). It must score NEAR_BEST of the best memory.
5. Ranking. A memory holding part of what a better one holds adds nothing, nor one that
   brings no strong evidence of its own; a session note never pushes out a curated
   memory that covers a fair share of it. Curated kinds (rule, lesson, gotcha, decision,
   fact) get a lift and go first while within CURATED_NEAR of the best: a session note
   that merely quotes the prompt does not bury the lesson that answers it.

Common is judged among the memories the session sees (its project's and the machine-wide
ones), by a bounded walk of the postings kept until the index changes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple
from datetime import datetime

from daemon.memory import commonness, stopwords, tokenize, typos
from daemon.memory.prompt_terms import (  # noqa: F401 (content_terms, word_groups: the context's too)
    STARTS, content_terms, held_forms, joined, parts, prompt_forms, prose_terms, spelled_out, word_forms, word_groups,
)
from daemon.memory.stopwords import is_action, is_broad, is_stop  # noqa: F401
from daemon.memory.index import SearchIndex
from daemon.memory.queries import Hit
from daemon.memory.roots import MemoryRoot
from daemon.memory.search_terms import (  # noqa: F401 (the constants: tests read them here)
    COMMON_MIN, COMMON_SHARE, SCOPE_COMMON_MIN, SCOPED_POSTINGS,
)
from daemon.memory.search_terms import common_forms as _common_forms, is_common as _is_common, search_terms as _search_terms

CURATED_KINDS = frozenset({"rule", "lesson", "gotcha", "decision", "fact"})
CURATED_LIFT = 1.3  # a curated memory's score counts this much more than a session note's
NEAR_BEST = 0.45  # a shown memory scores this share of the best memory's score
CURATED_KEEP = 0.6  # a session note holding more words pushes out a curated memory covering less than this share of it
CURATED_NEAR = 0.5  # a curated memory within this share of the best goes before session notes
BODY_ONLY = 0.5  # a word found only in the body counts half
UNHELD = 0.5  # a word no memory holds weighs this share of the rarest held one
SOLO = 2 / 3  # one informative unit alone must weigh this share of the prompt's informative content
SHARE = 0.5  # the informative units a memory holds weigh this share of the prompt's (words no memory holds at half)
CANDIDATES = 8  # rows taken from the index before scoring
COVER_TERMS = 4  # a memory covers the prompt's this many weightiest words, not a long prompt's chat
CODE_PARTS = 3  # a camelCase word of this many words is an identifier (viewModelScope), of fewer a name (GitHub)

_HANGUL, _KATAKANA = ("\uac00", "\ud7af"), ("\u30a0", "\u30ff")  # the scripts that space their words: first, last
_COMPOUND = re.compile(r"\w[._/-]+\w")
_CJK = stopwords.CJK


@dataclass(frozen=True)
class Scored:
    """A candidate with its relevance: its own score and the share of the prompt it covers."""

    hit: Hit
    score: float
    coverage: float
    units: frozenset[int] = frozenset()  # which of the prompt's units it holds
    titled: frozenset[int] = frozenset()  # those it is strong evidence of (see _evidence)
    exact: frozenset[int] = frozenset()  # those whose identifier itself it holds, not only its parts

    @property
    def curated(self) -> bool:
        return self.hit.memory.kind.casefold() in CURATED_KINDS


def _idf(total: int, df: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _units(terms: Sequence[str], groups: Sequence[Sequence[str]] = ()) -> list[list[str]]:
    """The prompt's words as units: an identifier and those of its parts that are terms
    too are one unit, the identifier first (DEPLOY_ENV is one piece of evidence, not
    three); other words alone. `groups`: `word_groups(prompt)`; without them, compounds
    are found among the terms (camelCase is not)."""
    present = set(terms)
    owner: dict[str, str] = {}
    groups = groups or _groups(terms)
    for whole, *parts in groups:
        for part in parts:
            if part in present and part != whole and whole in present:
                owner.setdefault(part, whole)
    units: dict[str, list[str]] = {}
    for term in terms:
        key = owner.get(term, term)
        units.setdefault(key, [key])  # the identifier first
        if term != key:
            units[key].append(term)
    return list(units.values())


def _surface(term: str) -> str:
    """A term as text is written: a phrase of CJK bigrams joined back into its word."""
    if term.startswith(STARTS) or (" " in term and not term.isascii()):
        bigrams = parts(term)
        return bigrams[0] + "".join(b[1:] for b in bigrams[1:])
    return term


def _groups(terms: Sequence[str]) -> list[list[str]]:
    """The word groups of the terms' compounds, without the prompt (camelCase is not one)."""
    return [tokenize.tokens(t) for t in terms if _COMPOUND.search(t)]


def _identifiers(terms: Sequence[str], groups: Sequence[Sequence[str]]) -> set[str]:
    """The terms that are identifiers: written with separators (DEPLOY_ENV, r.Context), or
    camelCase of CODE_PARTS words or more (viewModelScope; GitHub is a name)."""
    return {t for t in terms if _COMPOUND.search(t)} | {whole for whole, *rest in groups if len(rest) >= CODE_PARTS}


@dataclass(frozen=True)
class _Prompt:
    """What scoring needs of a prompt: its units, each word's forms and weight, the words
    that decide, and the weight a memory covering all of it holds."""

    units: list[list[str]]
    forms: dict[str, tuple[str, ...]]
    weight: dict[str, float]
    decisive: frozenset[str]
    whole: float
    unheld: frozenset[str] = frozenset()  # compounds no memory holds (their parts match half)
    said: frozenset[int] = frozenset()  # units of the prompt's own words some memory holds, when it pastes output
    # Per unit that some memory can hold: (its share, [(" form " probes, weight, decides,
    # an identifier that decides, broad: `stopwords.is_broad`, an action)]): only forms the
    # index holds can be in a memory.
    probes: tuple[tuple[float, tuple[tuple[tuple[str, ...], float, bool, bool, bool, bool], ...]], ...] = ()
    unit_weight: tuple[float, ...] = ()  # per unit of `probes`: its weightiest word's
    # per unit of `probes`: an unheld identifier's parts written out in a row (" python
    # operators " for PythonOperator, `prompt_terms.spelled_out`); empty for other units
    spelled: tuple[tuple[str, ...], ...] = ()
    info: float = 0.0  # the weight of the prompt's informative units (not broad), the weightiest COVER_TERMS
    informative: tuple[bool, ...] = ()  # per unit of `probes`: not broad
    held_info: float = 0.0  # `info` with a word no memory holds at UNHELD of its weight


def _prompt(
    terms: Sequence[str],
    total: int,
    df: dict[str, int],
    groups: Sequence[Sequence[str]] = (),
    forms: dict | None = None,
    common: frozenset[str] | None = None,
    said: frozenset[str] = frozenset(),
) -> _Prompt:
    """What scoring needs of these terms; `forms`: each term's held forms (`held_forms`),
    its plain inflections when not given; `common`: the forms common in the session's
    scope (`_common_forms`), the store's verdict when not given; `said`: the terms of the
    prompt's own words when it pastes output (`prose_terms`)."""
    forms = forms or {t: word_forms(t) for t in terms}
    held = {t: max((df.get(f, 0) for f in forms[t]), default=0) for t in terms}
    # A word no memory holds weighs UNHELD of the rarest one held: it says the prompt may
    # be about something else, but not as much as a word held says what it is about (a
    # paraphrase's own words are no memory's). Not counted when absent: a CJK bigram
    # (mostly the seam of two words) and a compound whose parts are terms too.
    # A held word weighs as rare as it is itself (a glossary's other words may be commoner),
    # times its specificity in general language (`commonness`).
    special = {t: commonness.specificity(_surface(t)) for t in terms}
    weight = {t: special[t] * (_idf(total, df.get(t) or held[t]) if held[t] else UNHELD * _idf(total, 1)) for t in terms}
    # A Korean or katakana word (a run of its script) is a word, no seam: counted too.
    counted = {t for t in terms if held[t] or t.startswith(STARTS) or not (_CJK.match(t) or _COMPOUND.search(t))}
    units = _units(terms, groups)
    # The weightiest few units: a long prompt's chat around one question does not
    # dilute it, a short prompt about something not stored still covers little.
    unit_weights = sorted((max(weight[t] for t in u if t in counted) for u in units if counted.intersection(u)), reverse=True)
    # a word decides when it is not common in the session's scope (the store's verdict without one)
    uncommon = (lambda t: not _is_common(held[t], total)) if common is None else (lambda t: common.isdisjoint(forms[t]))
    decisive = frozenset(t for t in terms if held[t] and uncommon(t))
    code = decisive & _identifiers(terms, groups)  # identifiers that decide
    unheld = frozenset(u[0] for u in units if len(u) > 1 and not held[u[0]])
    spellings = {whole: spelled_out(tuple(rest)) for whole, *rest in (groups or _groups(terms)) if whole in unheld}
    probes, own, spelled = [], set(), []
    for unit in units:
        # customer in a memory is not customer_id, which no memory holds: half of it
        share = BODY_ONLY if unit[0] in unheld else 1.0
        members = tuple(
            (_probes(forms[t], df), weight[t], t in decisive, t in code, is_broad(t), is_action(t))
            for t in unit
            if held[t]
        )  # fmt: skip
        if members:
            if any(held[t] and t in said for t in unit):
                own.add(len(probes))
            probes.append((share, members))
            spelled.append(spellings.get(unit[0], ()))
    whole = sum(unit_weights[:COVER_TERMS]) or 1.0
    heaviest = tuple(max(m[1] for m in members) for _, members in probes)
    # The prompt's informative content: its units that are not broad, the weightiest
    # few, a word no memory holds at its full weight (what the prompt talks about, not
    # what the store holds); and which held units are informative.
    talked = {t: weight[t] if held[t] else weight[t] / UNHELD for t in terms}
    info = [u for u in units if counted.intersection(u) and not all(is_broad(t) for t in u)]
    info_weight = lambda w: sum(sorted((max(w[t] for t in u if t in counted) for u in info), reverse=True)[:COVER_TERMS])  # noqa: E731
    informative = tuple(not all(m[4] for m in members) for _, members in probes)
    return _Prompt(units, forms, weight, decisive, whole, unheld, frozenset(own), tuple(probes), heaviest, tuple(spelled),
                   info_weight(talked), informative, info_weight(weight))  # fmt: skip


class _WordStart(NamedTuple):
    """A form found only where a word starts: " text " in a token stream, but not right
    after its own script's character followed by its first one (in a token stream a word's
    bigrams overlap: the second bigram of a word continues the first; a word is not found
    at such a seam).
    A find and two comparisons, not a pattern: compiling one with the script's character
    class cost ~0.5 ms for each new Hangul form (~0.07 ms katakana) a prompt held."""

    probe: str
    first: str
    script: tuple[str, str]

    def found(self, text: str) -> bool:
        low, high = self.script
        at = text.find(self.probe)
        while at >= 0:
            if at < 2 or text[at - 1] != self.first or not low <= text[at - 2] <= high:
                return True
            at = text.find(self.probe, at + 1)
        return False


def _probes(forms: Sequence[str], df: dict[str, int]) -> tuple[tuple[str, ...], tuple[_WordStart, ...]]:
    """What finds a term's held forms in a token stream: " form " (its tokens between
    spaces), and for a form found only where a word starts, a `_WordStart`."""
    plain: list[str] = []
    starts: list[_WordStart] = []
    for form in forms:
        if not df.get(form):
            continue
        if form.startswith(STARTS):
            text = form[len(STARTS) :]
            script = _HANGUL if _HANGUL[0] <= text[0] <= _HANGUL[1] else _KATAKANA
            starts.append(_WordStart(f" {text} ", text[0], script))
        else:
            plain.append(f" {form} ")
    return tuple(plain), tuple(starts)


def _in(probes: tuple[tuple[str, ...], tuple[_WordStart, ...]], text: str) -> bool:
    # Loops, not any() over generators: this runs for every unit of every candidate.
    plain, starts = probes
    for probe in plain:
        if probe in text:
            return True
    for start in starts:
        if start.found(text):
            return True
    return False


class _Evidence(NamedTuple):
    """What a memory holds of the prompt (see `_evidence`)."""

    score: float
    covered: float  # the weight of the prompt's units it holds
    matched: frozenset[int]  # the units it holds
    titled: frozenset[int]  # the units it is strong evidence of
    strong: bool  # strong evidence of a word that is not broad
    decides: bool  # a deciding word anywhere
    specific: bool  # a word that is not broad anywhere
    evidence: int  # units held, but an action in the body only (a word in passing)
    full: bool = False  # a unit held in full: not only parts of an identifier no memory holds
    exact: frozenset[int] = frozenset()  # units whose identifier itself it holds (DEPLOY_ENV, not env)


def _evidence(prompt: _Prompt, head: str, body: str) -> _Evidence:
    """What the memory with these token streams holds of the prompt. Strong evidence: a
    deciding word in the title, description or tags (a broad one, a tool or an action,
    is none), or a deciding identifier (DEPLOY_ENV, r.Context, src/app.py) anywhere: no
    word in passing; an action in the body alone is a word in passing."""
    score = covered = 0.0
    matched: set[int] = set()
    titled: set[int] = set()
    counted = 0  # units held by more than an action in passing
    strong = decides = specific = False
    full = False
    exact: set[int] = set()
    for number, (share, members) in enumerate(prompt.probes):
        # an unheld identifier's parts in a row, in order (Python operators: PythonOperator)
        # are that identifier: in full, and strong evidence when one of them decides and is
        # not broad (docker compose for docker-compose is two tools, not a topic)
        spelled = share < 1.0 and any(p in head or p in body for p in prompt.spelled[number])
        if spelled:
            share = 1.0
            exact.add(number)
            if any(decisive and not broad for _, _, decisive, _, broad, _ in members):
                strong = True
                titled.add(number)
        top = best = 0.0
        real = False
        for probes, weight, decisive, identifier, broad, action in members:
            if identifier and (_in(probes, head) or _in(probes, body)):
                exact.add(number)
            if _in(probes, head):
                top, best = max(top, weight), max(best, weight)
                strong = strong or (decisive and not broad)
                if decisive and share == 1.0:  # not a part of an identifier no memory holds
                    titled.add(number)
            elif _in(probes, body):
                best = max(best, weight)
                strong = strong or identifier
                if identifier and share == 1.0:
                    titled.add(number)
                if action:
                    continue
            else:
                continue
            real = True
            decides = decides or decisive
            specific = specific or not broad
        if best:
            score += share * max(top, BODY_ONLY * best)
            covered += share * best
            matched.add(number)
            counted += real
            full = full or share == 1.0
    return _Evidence(score, covered, frozenset(matched), frozenset(titled), strong, decides, specific, counted, full, frozenset(exact))


def score_candidates(
    hits: Sequence[Hit],
    terms: Sequence[str],
    fields: dict,
    total: int,
    df: dict[str, int],
    groups: Sequence[Sequence[str]] = (),
    forms: dict | None = None,
    common: frozenset[str] | None = None,
    said: frozenset[str] = frozenset(),
) -> list[Scored]:
    """Score each hit by the prompt's content words it holds (pure: index data given);
    `groups`: the prompt's `word_groups`, `forms`: its terms' held forms (`held_forms`),
    `common`: the forms common in the session's scope, `said`: the terms of the prompt's
    own words when it pastes output (`prose_terms`)."""
    prompt = _prompt(terms, total, df, groups, forms, common, said)
    found_all = [(hit, _evidence(prompt, "".join(streams[:3]), streams[3])) for hit in hits if (streams := fields.get(str(hit.memory.path)))]
    scored = []
    for hit, found in found_all:
        if _about(prompt, found):
            lift = CURATED_LIFT if hit.memory.kind.casefold() in CURATED_KINDS else 1.0
            coverage = min(1.0, found.covered / prompt.whole)
            scored.append(Scored(hit, found.score * lift, coverage, found.matched, found.titled, found.exact))
    return scored


def _about(prompt: _Prompt, found: _Evidence) -> bool:
    """Evidence that a memory is about the prompt: a word that decides (not common in
    this store), and a strong one or two words, one of them not broad. One word in
    passing is none, nor a tool's name alone beside words no memory holds (a pnpm
    question is not about the pnpm lockfile).
    When the prompt pastes output, a word of what the user says too, if some memory holds
    one: the paste confirms, it does not pick a memory alone (a library's frame, a word of
    an error message in passing)."""
    matched = found.matched
    if not found.decides or not found.full:  # not only parts of unheld identifiers
        return False
    if prompt.said and not matched & prompt.said:
        return False
    # two words, one not broad; an action in the body only is a word in passing (run the
    # unit tests is not about a note that ran the tests)
    # The prompt's informative content, not incidental words: the informative units a
    # memory holds weigh SHARE of the prompt's (the same entity with another problem is
    # not it: a CSV export for the customer admin is not the slow order admin list), one
    # unit alone SOLO of what the prompt says (a pnpm question about workspaces is not
    # about the pnpm lockfile); an exact identifier (DEPLOY_ENV) is evidence enough.
    held = [u for u in matched if prompt.informative[u]]
    weight = sum(prompt.unit_weight[u] for u in held)
    if found.exact.isdisjoint(held) and weight < (SOLO * prompt.info if len(held) == 1 else SHARE * prompt.held_info):
        return False
    return found.strong or (found.evidence >= 2 and found.specific)


def _outdone(memory: Scored, other: Scored) -> bool:
    """True when `other` holds all of the prompt's words `memory` holds and more: then
    `memory` adds nothing. An identifier's parts are not the identifier: a memory holding
    ~/.vscode-server is not outdone by one holding "server" and another word. A session
    note that quotes the prompt does not push out the curated memory that answered it,
    unless that covers far less of the prompt (CURATED_KEEP)."""
    return memory.units < other.units and memory.exact <= other.exact and _may_push_out(other, memory)


def _may_push_out(other: Scored, memory: Scored) -> bool:
    """A session note pushes out no curated memory covering CURATED_KEEP of what it does:
    the words it holds beyond a lesson's are mostly the prompt it quotes, not an answer."""
    return other.curated or not memory.curated or memory.coverage < CURATED_KEEP * other.coverage


def _own_evidence(kept: Sequence[Scored]) -> list[Scored]:
    """The memories that each bring strong evidence of their own: one shown beside better
    ones must be strong evidence (a deciding word in its title, description or tags, a
    deciding identifier anywhere) of a word of the prompt none of them is strong evidence
    of (two topics named: both; a lesser memory sharing the better one's strong word, with
    a word of a pasted log in passing in its body: not that one; ~/.vscode-server itself
    beside "server": that one too). Ties are equals; a session note does not push out a
    curated memory covering a fair share of what it does."""
    ranked = sorted(kept, key=lambda s: -s.score)
    out: list[Scored] = []
    for number, s in enumerate(ranked):
        # a part of an identifier is not strong evidence of it beside a memory holding it whole
        better = {u for o in ranked[:number] if o.score > s.score and _may_push_out(o, s) for u in o.titled if u in o.exact or u not in s.exact}
        if not better or s.titled - better:
            out.append(s)
    return out


def above_floor(scored: Sequence[Scored], k: int) -> list[Scored]:
    """The candidates near the best, best first (ties: newest, then path), at most `k`."""
    if not scored:
        return []
    best = max(s.score for s in scored)
    kept = _own_evidence([s for s in scored if s.score >= NEAR_BEST * best and not any(_outdone(s, o) for o in scored)])
    # A session note that quotes the prompt scores high on its words alone; the curated
    # memory that answered it goes first while its score is of the same order.
    kept.sort(
        key=lambda s: (
            not (s.curated and s.score >= CURATED_NEAR * best),
            -round(s.score, 6),
            -s.hit.memory.newest.timestamp(),
            str(s.hit.memory.path),
        )
    )
    return kept[:k]


def relevant_hits(
    index: SearchIndex,
    roots: Sequence[MemoryRoot],
    prompt: str,
    now: datetime,
    k: int,
    *,
    project: str | None = None,
    exclude_id: str | None = None,
    skip_ids: frozenset[str] = frozenset(),
) -> list[Scored]:
    """The memories really about `prompt`, best first, at most `k` (none when nothing passes)."""
    terms, candidates = prompt_forms(prompt, content_terms(prompt))
    if not terms or k < 1 or not roots:
        return []
    lookups = {p for both in candidates.values() for forms in both for f in forms for p in parts(f)}
    df = index.doc_counts(sorted(lookups))
    terms, candidates, df = typos.read_typos(index, terms, candidates, df, frozenset(content_terms(prompt)))
    terms, groups = joined(prompt, terms, df)
    forms, df = held_forms(candidates, df, groups)
    total = index.count()
    common = _common_forms(index, roots, now, project, forms, df, total)
    chosen = _search_terms(terms, forms, df, common)
    if not chosen:
        return []  # no memory holds a word of it that could decide
    fields: dict[str, tuple[str, ...]] = {}  # the candidates' token streams, read with them
    found = index.search_any(
        " ".join(chosen), roots, CANDIDATES, now, len(chosen),
        project=project, exclude_id=exclude_id, counts={f: df[f] for f in chosen}, streams=fields,
    )  # fmt: skip
    hits = [h for h in found if not h.memory.hard_rule and h.memory.id not in skip_ids]
    if not hits:
        return []
    scored = score_candidates(hits, terms, fields, total, df, groups, forms, common, prose_terms(prompt, terms))
    return above_floor(scored, k)
