"""A prompt's words as relevance reads them: its content terms and the forms each is looked up in.

- Content terms: the prompt's tokens minus filler (`stopwords`), an irregular verb form as
  its verb (sent → send), a glossary abbreviation kept (ms, k8s).
- A Korean or katakana word (a run of its script) is one term, the phrase of its bigrams,
  found only where a word starts; a CJK word of the glossary is one term too.
- Two plain words in a row that a memory writes as one ("time out", timeout) are a term.
- Each term's candidate forms (inflections, unverified) and its glossary words in every
  language (`wordforms`); `held_forms` keeps those some memory holds.

Pure: the caller looks the forms up in the index.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from daemon.memory import tokenize, wordforms
from daemon.memory.script_re import NonAscii
from daemon.memory.stopwords import EXTRA_STOP, is_stop

def content_terms(prompt: str) -> list[str]:
    """The prompt's distinct tokens that may decide relevance, in order (an irregular verb
    form as its verb: sent → send; an abbreviation of the glossary kept: ms, k8s; a number
    only when it is a status code of the glossary: 429). When the prompt pastes output,
    the words the user wrote come first: a long paste does not push them past the
    query's cap of tokens (`tokenize.MAX_QUERY_TOKENS`)."""
    return list(_content_terms(prompt))


@lru_cache(maxsize=64)
def _content_terms(prompt: str) -> tuple[str, ...]:
    """`content_terms`, kept: a block asks for them twice (previews, then routing)."""
    prose = prose_of(prompt)
    text = prompt if prose is None else f"{prose}\n{prompt}"
    terms = (wordforms.canonical(t) for t in tokenize.query_tokens(text))
    keep = (t for t in terms if (_glossary_word(t) if t.isdigit() else not is_stop(t) or _glossary_word(t)))
    return tuple(dict.fromkeys(keep))


@lru_cache(maxsize=16384)
def _glossary_word(term: str) -> bool:
    concept = wordforms.concept_of(term)
    return concept is not None and term in concept.words and term not in EXTRA_STOP


def word_forms(term: str) -> tuple[str, ...]:
    """The term and the English forms of it a memory may hold (invoices → invoice,
    timed → time, deploy → deployment): see `wordforms.inflections`."""
    return wordforms.inflections(term)


Forms = dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # term → (its candidate forms, its glossary words)
# A Hangul or katakana word: a run of the script (Korean words are spaced, particles glued
# on; katakana words end where the script does).
_WORD_RUN = NonAscii("[\uac00-\ud7af]{2,}|[\u30a0-\u30ff]{2,}")
STARTS = wordforms.STARTS
parts = wordforms.parts


def _surface(phrase: str) -> str:
    """The text of a phrase of bigrams ("ab bc cd" → "abcd")."""
    bigrams = parts(phrase)
    return bigrams[0] + "".join(b[1:] for b in bigrams[1:])


def _word_runs(prompt: str, out: list[str], forms: Forms) -> list[str]:
    """Each Hangul and katakana word of the prompt as one term: the phrase of its bigrams,
    found only where a word starts, its ending (a Korean particle, up to three syllables)
    optional: a word with its particle is the word, never the same word inside a longer
    one (model inside view-model)."""
    text = unicodedata.normalize("NFKC", prompt)
    for run in _WORD_RUN.findall(text):
        bigrams = tokenize.tokens(run)
        at = [out.index(b) for b in bigrams if b in out]
        if not at or bigrams[0] not in out:  # a stop word with its particle
            out = [t for t in out if t not in bigrams]
            continue
        shortest = 2 if run[0] >= "\uac00" else max(2, len(run) - 4)
        prefixes = [STARTS + " ".join(bigrams[: n - 1]) for n in range(len(run), max(1, shortest - 1), -1)]
        term = prefixes[0]
        out = [t for t in out if t not in bigrams]
        out.insert(min(at), term)
        # a glossary word that starts the run (the word before its particle), not one inside it
        glossary = [a for phrase, c in wordforms.cjk_concepts(run) if run.startswith(_surface(phrase)) for a in c.alternatives()]
        forms[term] = (tuple(prefixes), tuple(glossary))
    return out


def prompt_forms(prompt: str, terms: Sequence[str]) -> tuple[list[str], Forms]:
    """The prompt's terms with a glossary word in CJK as one term (its bigrams as a phrase,
    a katakana word of n characters → its n-1 bigrams), and each term's candidate forms (its
    inflections, unverified) and the words of its glossary concept in every language
    (phrases space-joined). Two words in a row are a term too (time out → timeout)."""
    forms: Forms = {}
    out = _word_runs(prompt, list(terms), forms)
    for phrase, concept in wordforms.cjk_concepts(prompt):
        parts = phrase.split()
        at = [out.index(p) for p in parts if p in out]
        if not at:
            continue  # all its bigrams were stop words
        out = [t for t in out if t not in parts]
        out.insert(min(at), phrase)
        forms[phrase] = ((phrase,), concept.alternatives())
    for first, second in _PAIR.findall(prompt):
        joined = (first + second).casefold()  # time out → timeout, lock file → lockfile
        if joined not in forms and joined not in out:
            out.append(joined)
            # a phrase of the glossary (security group, rate limit): its concept's words too
            forms[joined] = _term_forms(joined) if wordforms.concept_of(joined) else ((joined,), ())
    for term in out:
        if term not in forms:
            forms[term] = _term_forms(term)
    return out, forms


@lru_cache(maxsize=8192)
def _term_forms(term: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A word's candidate forms and its glossary words (words recur: kept once made)."""
    concept = wordforms.concept_of(term)
    candidates = wordforms.candidate_forms(term)
    return candidates, tuple(a for a in concept.alternatives() if a not in candidates) if concept else ()


def held_forms(forms: Forms, df: dict[str, int], groups: Sequence[Sequence[str]] = ()) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    """Each term with the forms some memory holds (the term itself kept first; a candidate
    only when it is a form of the term), and the document counts with a phrase's (its
    rarest bigram's) added. A part of an identifier some memory holds keeps its
    inflections only: the identifier is the evidence, its parts name no concept (the
    model of viewModelScope is no model in Japanese)."""
    counts = dict(df)
    held: dict[str, tuple[str, ...]] = {}
    code = {p for whole, *parts in groups if df.get(whole) for p in parts}
    for term, (candidates, glossary) in forms.items():
        for form in (*candidates, *glossary):
            if (" " in form or form.startswith(STARTS)) and form not in counts and min(df.get(p, 0) for p in parts(form)):
                counts[form] = min(df[p] for p in parts(form))
        if term.startswith(STARTS):
            kept = [f for f in candidates if f != term and counts.get(f)]
        else:
            kept = wordforms.forms_of(term, [f for f in candidates if f != term and counts.get(f)])
        if term not in code:
            kept += [f for f in glossary if f != term and counts.get(f)]
        held[term] = tuple(dict.fromkeys([term, *kept]))
    return held, counts


def searched_part(prompt: str, limit: int) -> str:
    """The part of a long prompt that is searched: its start and its end, `limit`
    characters in all (a question asked after a long paste is at its end)."""
    if len(prompt) <= limit:
        return prompt
    return f"{prompt[: limit // 2]}\n{prompt[len(prompt) - limit // 2 :]}"


_WORD = re.compile(r"[A-Za-z0-9_]+(?:[./-]+[A-Za-z0-9_]+)*")
# Two plain words in a row: written as one word in a memory, they are that word.
_PAIR = re.compile(r"(?<![\w./-])(?=([A-Za-z]{2,}) ([A-Za-z]{2,})(?![\w./-]))")


def word_groups(prompt: str) -> list[list[str]]:
    """The tokens of each identifier-like word of the prompt that splits into parts:
    snake_case, kebab-case, paths, dotted names, camelCase (KeyError → keyerror, key, error)."""
    groups = []
    for word in _WORD.findall(prompt):
        found = tokenize.tokens(word)
        if len(found) > 1:
            groups.append(found)
    return groups


SPELLINGS = 16  # an identifier's parts are written out in at most this many ways


@lru_cache(maxsize=4096)
def spelled_out(parts: tuple[str, ...]) -> tuple[str, ...]:
    """An identifier's parts as a memory writes them out in a row, in order, each in any of
    its inflections (PythonOperator → " python operator ", " python operators " …), as
    token streams hold them; the plain words alone past SPELLINGS ways."""
    if len(parts) < 2:
        return ()
    ways = [[]]
    for part in parts:
        forms = word_forms(part)
        ways = [[*w, f] for w in ways for f in forms]
        if len(ways) > SPELLINGS:
            ways = [list(parts)]
            break
    return tuple(f" {' '.join(w)} " for w in ways)


def joined(prompt: str, terms: Sequence[str], df: dict[str, int]) -> tuple[list[str], list[list[str]]]:
    """The terms without the joined pairs no memory holds, and the prompt's word groups,
    a held pair (timeout of "time out") with its two words as one identifier has its parts."""
    groups = word_groups(prompt)
    pairs = {(a + b).casefold(): [a.casefold(), b.casefold()] for a, b in _PAIR.findall(prompt)}
    kept = [t for t in terms if t not in pairs or df.get(t) or _glossary_word(t)]
    for joined, parts in pairs.items():
        if joined in kept:
            groups.append([joined, *parts])
            kept.remove(joined)
            at = min((kept.index(p) for p in parts if p in kept), default=len(kept))
            kept.insert(at, joined)
    return kept, groups


# What a prompt pastes rather than says: a fenced block, stack frames, a shell session,
# compiler, test runner and log lines.
_FENCE = re.compile(r"\s*(?:```|~~~)")
_OUTPUT_LINE = re.compile(
    r"\s*(?:at\s|File \"|-->|\d*\s*\|\s|[│├└╰┬]|Traceback\b|Caused by\b|\$ |> |\[\d{4}-\d\d-\d\d|\d{4}-\d\d-\d\d[T ]\d\d:"
    r"|(?:error|warning|fatal)(?:\[\w+\])?:|[\w.]*(?:Error|Exception|Warning)\b:)",
    re.IGNORECASE,
)


@lru_cache(maxsize=64)
def prose_of(prompt: str) -> str | None:
    """The prompt's own words when it pastes output (a fenced block, stack frames, a shell
    session, compiler or log lines): the lines outside it; None when it pastes nothing."""
    if "\n" not in prompt:
        return None
    kept: list[str] = []
    pasted = fenced = False
    for line in prompt.splitlines():
        if _FENCE.match(line):
            fenced, pasted = not fenced, True
        elif fenced or _OUTPUT_LINE.match(line):
            pasted = True
        else:
            kept.append(line)
    return "\n".join(kept) if pasted else None


def prose_terms(prompt: str, terms: Sequence[str]) -> frozenset[str]:
    """Those of `terms` the prompt's own words hold when it pastes output (`prose_of`),
    a phrase when one of its bigrams is there; empty when it pastes nothing."""
    text = prose_of(prompt)
    if text is None:
        return frozenset()
    said = set(tokenize.query_tokens(text))
    said |= {wordforms.canonical(t) for t in said}
    return frozenset(t for t in terms if t in said or any(p in said for p in parts(t.lstrip(STARTS))))
