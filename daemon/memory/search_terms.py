"""The words that find a prompt's candidates, and which are common where the session looks.

Part of `relevance` (its step 2): a word more than COMMON_SHARE of the memories (and
over COMMON_MIN, in proportion) hold is common, judged among the memories the session
sees (its project's and the machine-wide ones) by a bounded walk of the postings; the
candidates are searched by the held forms of the rarest deciding words, their postings
bounded. Index reads only; the scoring is `relevance`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from daemon.memory.index import SearchIndex
from daemon.memory.prompt_terms import STARTS, parts
from daemon.memory.roots import MemoryRoot

MAX_SEARCH_TOKENS = 6  # the candidates are found by this many word forms at most
SEARCH_POSTINGS = 200  # and their postings stay within this many (beyond the rarest word's)
# A word this share of the memories hold (and at least COMMON_MIN) is common in this
# store: like a stop word it never decides, it only adds to a memory that something else found.
COMMON_SHARE = 0.02
COMMON_MIN = 20
# Among the memories a session sees, a word is common when COMMON_SHARE of them hold it,
# and more than COMMON_MIN in proportion to the share of the store they are (at least this).
SCOPE_COMMON_MIN = 5
SCOPED_POSTINGS = 1000  # postings walked at most to judge the prompt's words in the session's scope


def is_common(df: int, total: int) -> bool:
    """True when so many memories hold a word that it says nothing about which is meant."""
    return df > max(COMMON_MIN, COMMON_SHARE * total)


def common_forms(
    index: SearchIndex, roots: Sequence[MemoryRoot], now: datetime, project: str | None,
    forms: dict[str, tuple[str, ...]], df: dict[str, int], total: int,
) -> frozenset[str]:  # fmt: skip
    """The held forms common among the memories this session sees (its project's and the
    machine-wide ones), not the whole store's: a word most of another project's memories
    hold may decide here, one most of this project's hold may not. Counted in the scope
    for the rarer forms (postings within SCOPED_POSTINGS); the commonest, and phrases,
    keep the store's verdict."""
    held = sorted({f for fs in forms.values() for f in fs if df.get(f, 0) > SCOPE_COMMON_MIN}, key=lambda f: (df[f], f))
    if not held:
        return frozenset()
    seen = index.scope_size(roots, now, project)
    if seen >= total:  # the session sees the whole store: its verdict is the store's
        return frozenset(f for f in held if is_common(df[f], total))
    limit = int(max(SCOPE_COMMON_MIN, COMMON_MIN * seen / max(1, total), COMMON_SHARE * seen))
    common, ask, budget = set(), [], SCOPED_POSTINGS
    for form in held:
        if df[form] <= limit:
            continue  # fewer memories of the store hold it than would make it common here
        if " " in form or form.startswith(STARTS) or df[form] > budget:
            if is_common(df[form], total):
                common.add(form)
            continue
        budget -= df[form]
        # The scope holds at least df of them less the memories it does not see: that
        # may settle the verdict without walking a posting.
        if df[form] - (total - seen) > limit:
            common.add(form)
        else:
            ask.append(form)
    counts = index.scoped_counts(ask, roots, now, project, limit)
    return frozenset(common | {f for f in ask if counts[f] > limit})


def search_terms(terms: Sequence[str], forms: dict[str, tuple[str, ...]], df: dict[str, int], common: frozenset[str]) -> list[str]:
    """The tokens that find the candidates: the held forms of the rarest deciding terms
    (a phrase by its rarest bigram), while their postings stay within SEARCH_POSTINGS
    beyond the rarest term's. A memory found by common words alone could never pass, and
    their postings are what costs."""
    chosen: dict[str, None] = {}
    postings = 0
    held = {t: max(df.get(f, 0) for f in forms[t]) for t in terms}
    deciding = [t for t in terms if held[t] and common.isdisjoint(forms[t])]
    for term in sorted(deciding, key=lambda t: (held[t], terms.index(t))):
        # its own forms first, then its glossary's: a large concept is searched by the
        # forms that fit, not dropped whole
        tokens = [t for t in dict.fromkeys(min(parts(f), key=lambda p: df.get(p, 0)) for f in forms[term] if df.get(f)) if t not in chosen]
        fit = 0
        while fit < len(tokens) and len(chosen) + fit < MAX_SEARCH_TOKENS and (
            not chosen or postings + sum(df[t] for t in tokens[: fit + 1]) <= SEARCH_POSTINGS
        ):
            fit += 1
        if not fit and tokens:
            break
        chosen.update(dict.fromkeys(tokens[:fit]))
        postings += sum(df[t] for t in tokens[:fit])
    return list(chosen)
