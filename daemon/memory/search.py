"""Search over the index: BM25 whose cost follows what the query touches, not the store.

Two things in FTS5 grow with the store for a word most memories hold: BM25's weight of a
word walks that word's whole posting list (in C, tens of nanoseconds a posting), and
ranking scores and sorts every match (far more). So:

- how many memories hold a word is read from the `term` table (one lookup per word);
- a free-text search (a session's first prompt) uses only its rarest words while their
  postings stay within POSTINGS_BUDGET (at least the rarest one); a prefix stands for its
  commonest few words within that budget;
- at most RANK_CAP matches are ranked, the most recently indexed first: below that many
  the result is exactly the full ranking, above it a word that common picks little out
  anyway and newest-first is the tie-break memoryd uses everywhere.

`SearchQueries` is mixed into the index's read half (`IndexQueries`).
"""

from __future__ import annotations

import math
import sqlite3
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from daemon.memory import tokenize
from daemon.memory.index_schema import SELECT

if TYPE_CHECKING:
    from daemon.memory.roots import MemoryRoot
    from daemon.memory.tree import Memory

# Field weights for BM25: a title hit counts most, then description and tags, then body.
WEIGHTS = (4.0, 2.0, 2.0, 1.0)
# How much a recall counter lifts a score: a small, logarithmic nudge, never a takeover.
HIT_BOOST = 0.05
POSTINGS_BUDGET = 2000  # postings BM25 weighs at most (beyond the rarest word's)
RANK_CAP = 400  # matches ranked at most: the most recently indexed ones
PREFIX_EXPANSIONS = 16  # words one prefix stands for, at most (the commonest first)
PREFIX_TERMS = 8  # query words a prefix retry expands, at most
NEAR_ROWS = 1000  # terms compared with a word that may be a typo, at most
TERMS_KEPT = 50_000  # term counts kept between prompts, at most
RANKINGS_KEPT = 128  # search_any answers kept between prompts, at most (prompts share their rarest words)
_SCAN_TERMS = 4000  # vocabulary entries read per prefix, at most
_LAST = "\U0010ffff"


@dataclass(frozen=True)
class Hit:
    """One search result: the memory (without body), its preview and its final score."""

    memory: Memory
    preview: str
    score: float


@dataclass(frozen=True)
class SearchResult:
    """Ranked hits and how they were found: every term ('strict'), any prefix, or not at all."""

    hits: list[Hit]
    mode: Literal["strict", "prefix", "none"]
    terms: list[str]


def rarest_within_budget(terms: Sequence[str], counts: Mapping[str, int], budget: int = POSTINGS_BUDGET) -> list[str]:
    """The rarest terms (in query order on ties) while their postings stay within `budget`: at least one."""
    chosen: list[str] = []
    postings = 0
    for term in sorted(terms, key=lambda t: (counts.get(t, 0), terms.index(t))):
        if chosen and postings + counts.get(term, 0) > budget:
            break
        chosen.append(term)
        postings += counts.get(term, 0)
    return chosen


class SearchQueries:
    """BM25 search, bounded (mixed into IndexQueries, which provides `_memory` and `_visible`)."""

    _db: sqlite3.Connection

    def doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories hold each term (absent terms: none), from the term table, in
        the terms' order (as SQLite returns them). Kept until the index changes: a
        prompt's words and their forms (~50 lookups) recur from session to session."""
        if not terms:
            return {}
        known = self._term_counts()
        asked = sorted(set(terms))
        missing = [t for t in asked if t not in known]
        if missing:
            if len(known) + len(missing) > TERMS_KEPT:
                known.clear()
                missing = asked  # the asked terms that were kept went with the rest
            marks = ", ".join("?" * len(missing))
            found = dict(self._db.execute(f"SELECT term, docs FROM term WHERE term IN ({marks})", missing))
            known.update((term, found.get(term)) for term in missing)
        return {t: docs for t in asked if (docs := known[t]) is not None}

    def near_term(self, word: str, distance: int) -> str | None:
        """The word of the index's vocabulary closest to `word` (a typo: hydartion →
        hydration), within `distance` edits (a swap of two letters is one: optimal string
        alignment, rapidfuzz), its first two letters the same, three from 8 letters (a
        range of the term table, at most NEAR_ROWS: typos fall mostly later in a word, and
        a prompt's new words must stay cheap); the one more memories hold on a tie;
        None when there is none. Kept until the index changes, like `doc_counts`."""
        kept = self._term_counts()
        key = f"\0near\0{distance}\0{word}"  # no token holds a NUL: no clash with the counts
        if key in kept:
            return kept[key]  # type: ignore[return-value]
        from rapidfuzz.distance import OSA
        from rapidfuzz.process import extract

        start = word[: 3 if len(word) >= 8 else 2]
        rows = self._db.execute(
            "SELECT term, docs FROM term WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ? LIMIT ?",
            (start, start + "\uffff", len(word) - distance, len(word) + distance, NEAR_ROWS),
        ).fetchall()
        docs = dict(rows)
        found = extract(word, list(docs), scorer=OSA.distance, score_cutoff=distance, limit=8)
        best = min(found, key=lambda f: (f[1], -docs[f[0]], f[0]), default=None)
        near = best[0] if best is not None and best[0] != word else None
        kept[key] = near  # type: ignore[assignment]
        return near

    def _term_counts(self) -> dict[str, int | None]:
        """term → docs (None: absent) while the index stays as it is (any write, by this
        connection or another, moves `total_changes` or `data_version`)."""
        version = (self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes)
        kept = self.__dict__.get("_terms_kept")
        if kept is None or kept[0] != version:
            kept = self.__dict__["_terms_kept"] = (version, {})
        return kept[1]

    def _rankings(self, now: datetime) -> OrderedDict[tuple, tuple[list[Hit], dict[str, tuple[str, ...]]]]:
        """`search_any` answers kept while the index stays as it is and no memory expires:
        they hold for any `now` between the last expiry at or before the `now` they were
        made for and the next one after it (a memory expiring in between would change them)."""
        version = (self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes)
        moment = now.timestamp()
        kept = self.__dict__.get("_rankings_kept")
        if kept is None or kept[0] != version or not kept[1] <= moment < kept[2]:
            last, following = self._db.execute(
                "SELECT (SELECT expires_ts FROM doc WHERE expires_ts <= ? ORDER BY expires_ts DESC LIMIT 1), "
                "(SELECT expires_ts FROM doc WHERE expires_ts > ? ORDER BY expires_ts LIMIT 1)",
                (moment, moment),
            ).fetchone()
            kept = (version, -math.inf if last is None else last, math.inf if following is None else following, OrderedDict())
            self.__dict__["_rankings_kept"] = kept
        return kept[3]

    def search(
        self,
        query: str,
        scopes: Sequence[MemoryRoot],
        limit: int = 10,
        *,
        now: datetime | None = None,
        hits: Mapping[str, int] | None = None,
        prefix_retry: bool = True,
        project: str | None = None,
    ) -> SearchResult:
        """Return the best `limit` memories in `scopes` for `query`.

        BM25 (title weighted highest) with a small boost from recall counters; equal
        scores go newest first. A query whose every term finds nothing together is
        retried as a prefix OR, so `migrat` still finds "migration strategy".
        `project` (a canonical worktree, "" for none) keeps, of the global tree, the
        machine-wide memories and that project's only, as a session's block does; None
        searches every project's.
        """
        terms = tokenize.query_tokens(query)
        if not terms or not scopes or limit < 1:
            return SearchResult([], "none", terms)
        where, params = self._visible(scopes, now or datetime.now(UTC), keep_global_hard_rules=False, project=project)  # type: ignore[attr-defined]
        found = self._ranked(tokenize.strict_match(terms), where, params, limit, hits or {})
        if found:
            return SearchResult(found, "strict", terms)
        if prefix_retry:
            found = self._ranked(self._prefix_expression(terms), where, params, limit, hits or {})
            if found:
                return SearchResult(found, "prefix", terms)
        return SearchResult([], "none", terms)

    def _prefix_expression(self, terms: Sequence[str]) -> str:
        """An OR of the words each term is a prefix of (the commonest few, within budget)."""
        parts: dict[str, None] = {}
        postings = 0
        for term in terms[:PREFIX_TERMS]:
            rows = self._db.execute(
                "SELECT term, docs FROM (SELECT term, docs FROM term WHERE term >= ? AND term < ? LIMIT ?) "
                "ORDER BY docs DESC, term LIMIT ?",
                (term, term + _LAST, _SCAN_TERMS, PREFIX_EXPANSIONS),
            ).fetchall()
            if not rows:
                parts[tokenize.quote(term) + "*"] = None  # FTS5 folds diacritics the table does not
                continue
            for number, (word, docs) in enumerate(rows):
                if number and postings + docs > POSTINGS_BUDGET:
                    break
                if tokenize.quote(word) not in parts:
                    parts[tokenize.quote(word)] = None
                    postings += docs
        return " OR ".join(parts)

    def search_any(
        self,
        text: str,
        scopes: Sequence[MemoryRoot],
        limit: int,
        now: datetime,
        max_terms: int = 6,
        *,
        project: str | None = None,
        exclude_id: str | None = None,
        counts: Mapping[str, int] | None = None,
        streams: dict[str, tuple[str, ...]] | None = None,
    ) -> list[Hit]:
        """Return the best `limit` memories holding any of the rarest words of `text`.

        For long free text (a session's first prompt): words that most memories hold say
        nothing about which one is meant and make BM25 rank half the index, so only the
        rarest few that occur at all are searched. No hit counters: the order is stable.
        `project` filters as `visible` does; `exclude_id` leaves one memory out (a session's
        own note); `counts` are the terms' document counts when the caller has them;
        `streams`, when given, gets path → each hit's token streams (title, description,
        tags, body; a token is in one when " token " is), read with its preview.
        Kept until the index changes (see `_rankings`): a prompt's rarest words are often
        an earlier prompt's, and the ranking is most of the cost of an answer.
        """
        terms = tokenize.query_tokens(text)
        if not terms or not scopes or limit < 1:
            return []
        counts = self.doc_counts(terms) if counts is None else counts
        present = [t for t in terms if counts.get(t)]
        if not present:
            return []
        chosen = rarest_within_budget(present, counts)[:max_terms]
        where, params = self._visible(scopes, now, keep_global_hard_rules=False, project=project)  # type: ignore[attr-defined]
        if exclude_id is not None:
            where += " AND d.id != ?"
            params.append(exclude_id)
        expression = " OR ".join(tokenize.quote(t) for t in chosen)
        # Kept by what decides the answer but the time (see `_rankings`)
        key = (expression, tuple((r.key, r.scope) for r in scopes), project, exclude_id, limit)
        rankings = self._rankings(now)
        kept = rankings.get(key)
        if kept is None:
            found: dict[str, tuple[str, ...]] = {}
            kept = rankings[key] = (self._ranked(expression, where, params, limit, {}, found), found)
            while len(rankings) > RANKINGS_KEPT:
                rankings.popitem(last=False)
        else:
            rankings.move_to_end(key)
        if streams is not None:
            streams.update(kept[1])
        return list(kept[0])

    def _ranked(
        self, expression: str, where: str, params: Sequence[object], limit: int, hits: Mapping[str, int],
        streams: dict[str, tuple[str, ...]] | None = None,
    ) -> list[Hit]:
        """The best `limit` visible matches of `expression`, among the RANK_CAP most recently indexed."""
        weights = ", ".join(str(w) for w in WEIGHTS)
        # Fetch more than asked so the hit boost can reorder near-ties; BM25 is
        # negative (lower is better), so boosting multiplies it by a factor above 1.
        pool = max(limit * 3, 30)
        # CROSS JOIN keeps FTS5 the outer loop, walking its postings newest first and
        # stopping after RANK_CAP visible ones. The pool is ranked from what that walk
        # read already; only the `limit` winners' rows are read in full (see `_hits`).
        rows = self._db.execute(
            f"SELECT * FROM (SELECT doc_fts.rowid AS rowid, bm25(doc_fts, {weights}) AS score, "
            f"d.sort_ts AS sort_ts, d.path AS path, d.id AS id FROM doc_fts CROSS JOIN doc d ON d.rowid = doc_fts.rowid "
            f"WHERE doc_fts MATCH ? AND {where} ORDER BY doc_fts.rowid DESC LIMIT ?) ORDER BY score, sort_ts DESC LIMIT ?",
            [expression, *params, RANK_CAP, pool],
        ).fetchall()
        # Nine significant digits: float noise must not defeat the newest-first tie-break.
        if hits:
            ranked = [
                (float(f"{raw * (1 + HIT_BOOST * math.log1p(hits.get(memory_id, 0))):.9g}"), -sort_ts, path, rowid)
                for rowid, raw, sort_ts, path, memory_id in rows
            ]
        else:  # no counters (a context's candidates): no boost
            ranked = [(float(f"{raw:.9g}"), -sort_ts, path, rowid) for rowid, raw, sort_ts, path, _ in rows]
        ranked.sort(key=lambda item: item[:3])
        return self._hits(ranked[:limit], streams)

    def _hits(self, best: Sequence[tuple], streams: dict[str, tuple[str, ...]] | None = None) -> list[Hit]:
        """(score, -sort_ts, path, rowid) winners, best first → Hits, with their previews
        (and their token streams into `streams`: see `search_any`)."""
        if not best:
            return []
        # Previews live beside the token streams; read them for the winners only. Plain
        # tuples: a Row's lookup by name costs more than the Memory built from it.
        marks = ", ".join("?" * len(best))
        sql = (
            f"SELECT d.rowid, {SELECT}, coalesce(t.preview, ''), t.t_title, t.t_description, t.t_tags, t.t_body "
            f"FROM doc d LEFT JOIN doc_text t ON t.rowid = d.rowid WHERE d.rowid IN ({marks})"
        )
        cursor = self._db.cursor()
        cursor.row_factory = None
        found = {row[0]: row for row in cursor.execute(sql, [rowid for *_, rowid in best])}
        roots: dict[str, MemoryRoot] = {}
        hits = []
        for score, _, _, rowid in best:
            row = found.get(rowid)
            if row is None:  # a row another connection deleted since the ranking is no hit any more
                continue
            *_, preview, title, description, tags, body = row
            hits.append(Hit(self._memory(row, roots, 1), preview, score))  # type: ignore[attr-defined]
            if streams is not None and title is not None:  # a space at both ends: see `search_any`
                streams[row[1]] = (f" {title} ", f" {description} ", f" {tags} ", f" {body} ")
        return hits
