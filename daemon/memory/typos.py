"""Typos in a prompt, read as the words of the index's vocabulary they are typos of.

"hydartion eror", "certmanager renwal", "ingres": a word of TYPO_MIN letters or more that
no memory holds in any of its forms, and that general language does not know either
(`commonness.rare_zipf`: a rare real word such as struct is no typo), is read as the
nearest word the index holds (`SearchIndex.near_term`: rapidfuzz, one edit below
TYPO_LONG letters, two from there, a swap of two letters counted as one). Part of
`relevance`'s reading of a prompt; index reads only.
"""

from __future__ import annotations

from daemon.memory import commonness
from daemon.memory.index import SearchIndex
from daemon.memory.prompt_terms import parts, prompt_forms
from daemon.memory.stopwords import is_stop

TYPO_MIN = 5  # a word this long that no memory holds may be a typo of one a memory holds
TYPO_LONG = 8  # from this length, two edits (one below)
TYPO_FOUND = 4  # a prompt of which the store holds this many words needs no guessing: no typo lookups
TYPO_WORDS = 2  # at most this many words of a prompt are looked up as typos (the longest first)
TYPO_ZIPF = 2.3  # a word general language knows this much (struct 2.5) is a word, not a typo (ingres 2.1)


def read_typos(
    index: SearchIndex, terms: list[str], candidates: dict, df: dict[str, int], typed: frozenset[str]
) -> tuple[list[str], dict, dict[str, int]]:
    """The terms with each plain word no memory holds in any form (of TYPO_MIN letters
    or more, rare in general language) read as the word of the index's vocabulary it is
    a typo of, if one is near (hydartion → hydration, renwal → renewal), its forms and
    glossary words looked up too. `typed`: the prompt's own words (two words in a row
    joined, schedule of → scheduleof, are no typo). Only for a prompt of which the store
    holds few words: one it mostly holds needs no guessing, and lookups cost."""
    def held(term: str) -> bool:
        return any(df.get(p) for forms in candidates[term] for f in forms for p in parts(f))

    fixed: dict[str, str] = {}
    if sum(held(t) for t in terms) >= TYPO_FOUND:
        return terms, candidates, df
    asked = 0
    for term in sorted(terms, key=len, reverse=True):
        if asked >= TYPO_WORDS:
            break
        if term not in typed or len(term) < TYPO_MIN or not (term.isascii() and term.isalpha()) or is_stop(term):
            continue
        if commonness.rare_zipf(term) >= TYPO_ZIPF:
            continue  # a real word (schedule), not a typo of one a memory holds (scheduler)
        if held(term):
            continue
        asked += 1
        near = index.near_term(term, 2 if len(term) >= TYPO_LONG else 1)
        if near is not None and not is_stop(near):
            fixed[term] = near
    if not fixed:
        return terms, candidates, df
    terms = list(dict.fromkeys(fixed.get(t, t) for t in terms))
    _, more = prompt_forms(" ".join(fixed.values()), list(fixed.values()))
    candidates = {**candidates, **{t: more[t] for t in fixed.values() if t in more}}
    asked = {p for both in more.values() for forms in both for f in forms for p in parts(f)} - set(df)
    return terms, candidates, {**df, **index.doc_counts(sorted(asked))}
