"""The forms a prompt's word may take in a memory, looked up at query time.

A memory says "deployment", "not Send", "nanoseconds" or a word in another language; the
prompt says "deploys", "cannot be sent", `ns` or `time.Now`. The index keeps every
memory's words as they are (no stemmed copy to store or rebuild); a prompt's word is
looked up in the forms that may stand for it:

- English inflections and derivations: candidates made by changing the word's ending
  (deploy → deploys, deployed, deploying, deployment), kept only when the Snowball
  stemmer (PyStemmer) gives them the word's own stem, and only when a memory holds them;
- irregular verbs, both ways (sent ↔ send, paid ↔ pay: `en/irregular_verbs.tsv`);
- the glossary (`<lang>/glossary.tsv` in `daemon.lexicon`): abbreviations and the words
  they stand for (ns, env, k8s), the words of one concept in English, Chinese, Japanese
  and Korean, so that a question asked in one language finds a memory written in
  another, the words developers use for one symptom (stuck, hang, queued) and status
  codes (429, 504). A CJK word of the glossary stands as one unit of the prompt (its
  character bigrams are matched as a phrase, in order).

Pure functions over the lexicon's tables; the caller looks the forms up in the index.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from daemon import lexicon
from daemon.memory import tokenize
from daemon.memory.script_re import NonAscii

def _irregular() -> dict[str, str]:
    """Irregular past forms and participles → their verb (`en/irregular_verbs.tsv`)."""
    return {row[0].casefold(): row[1].casefold() for row in lexicon.rows("en", "irregular_verbs") if len(row) > 1}


IRREGULAR = _irregular()
# The verb → its irregular forms: a prompt's "pay" finds a memory's "paid" too.
IRREGULAR_FORMS: dict[str, tuple[str, ...]] = {}
for _form, _verb in IRREGULAR.items():
    IRREGULAR_FORMS[_verb] = (*IRREGULAR_FORMS.get(_verb, ()), _form)


def glossary_lines() -> list[tuple[str, ...]]:
    """The glossary (`<lang>/glossary.tsv`: word, its concept's English head word) as one
    line of words per concept, the head first; a phrase's words joined by `+`."""
    lines: dict[str, list[str]] = {}
    for _lang, row in sorted(lexicon.every("glossary"), key=lambda lr: lr[0] != "en"):
        if len(row) < 2:
            continue
        word, head = row[0].replace(" ", "+"), row[1].replace(" ", "+")
        words = lines.setdefault(head, [head])
        if word not in words:
            words.append(word)
    return [tuple(words) for words in lines.values()]


_LATIN = re.compile(r"[a-zµ]+")
STARTS = "^"  # a form marked so is found only where a word starts (a word, not the same letters inside a longer one)
_SPACED = NonAscii("[\uac00-\ud7af\u30a0-\u30ff]")  # Hangul, katakana: words have edges


def parts(form: str) -> list[str]:
    """The tokens of a form (a phrase: its bigrams)."""
    return form.lstrip(STARTS).split()
# Endings tried on a word's stem; a candidate counts only when it has the word's stem.
# Inflections, and -ment (deploy, deployment); not -ion or -er, whose stems join other
# words (production and product, builder and build).
_ENDINGS = ("", "s", "es", "e", "ed", "ing", "ment", "ments")


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import Stemmer  # PyStemmer: the Snowball stemmers in C
    except ImportError as error:  # a dependency since the word forms: an old install
        raise RuntimeError("PyStemmer is missing: reinstall memoryd (pip install -e . or pipx reinstall)") from error
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The word's Snowball (English) stem."""
    return _stemmer().stemWord(word)


def canonical(token: str) -> str:
    """The word a token stands for when it is an irregular verb form (sent → send)."""
    return IRREGULAR.get(token, token)


@lru_cache(maxsize=8192)
def candidate_forms(word: str) -> tuple[str, ...]:
    """The word and the strings that may be forms of it (deploy → deploys, deployment …),
    unverified: `is_form` tells which are, for the few a memory holds. Its plain plural
    or singular always (PDFs: the stemmer keeps pdfs); the others only when the word is
    itself its stem with an ending (production is product + ion: no form of product)."""
    plain = plain_forms(word)
    if not (word.isascii() and word.isalpha() and len(word) >= 3):
        return (*plain, *IRREGULAR_FORMS.get(word, ()))
    root = stem(word)
    # cach: cache, caches; a root ending in a vowel or y takes no e (deploy: no deploye)
    made = dict.fromkeys(root + ending for ending in _ENDINGS if root[-1] not in "aeiouyw" or ending[:1] != "e" or ending == "ed")
    if root.endswith("e"):  # time: timed, timing
        made.update(dict.fromkeys((root + "d", root[:-1] + "ing")))
    if root.endswith("i"):  # verifi: verify, verifies, verified
        made.update(dict.fromkeys((root[:-1] + "y", root + "es", root + "ed")))
    if len(root) <= 4 and root[-1] not in "aeiouwxy":  # run: running, pod: podded
        made.update(dict.fromkeys((root + root[-1] + "ing", root + root[-1] + "ed")))
    irregular = IRREGULAR_FORMS.get(word, ())
    return tuple(dict.fromkeys((*plain, *made, *irregular))) if word in made else (*plain, *irregular)


def is_form(word: str, form: str) -> bool:
    """True when `form` (one of `candidate_forms(word)`) is a form of the word."""
    return form in plain_forms(word) or form in IRREGULAR_FORMS.get(word, ()) or stem(form) == stem(word)


def forms_of(word: str, candidates: list[str]) -> list[str]:
    """Those of `candidates` (of `candidate_forms(word)`) that are forms of the word,
    stemmed in one call."""
    if not candidates:
        return []
    plain, root = (*plain_forms(word), *IRREGULAR_FORMS.get(word, ())), stem(word)
    return [f for f, its in zip(candidates, _stemmer().stemWords(candidates)) if f in plain or its == root]


@lru_cache(maxsize=4096)
def inflections(word: str) -> tuple[str, ...]:
    """The forms of the word that are forms of it (`candidate_forms`, verified)."""
    return tuple(forms_of(word, list(candidate_forms(word))))


def plain_forms(word: str) -> tuple[str, ...]:
    """The word, its singular and its plural (the plain -s only)."""
    single = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    return tuple(dict.fromkeys((word, single, single + "s")))


@dataclass(frozen=True)
class Concept:
    """One concept of the glossary: its English word first, then the others; and every word of it
    as it is looked up (`alternatives`)."""

    words: tuple[str, ...]
    forms: tuple[str, ...]

    def alternatives(self) -> tuple[str, ...]:
        """Every word of the concept as it is looked up: token streams, space-joined
        (a CJK word is the phrase of its bigrams), English words with their inflections."""
        return self.forms


def _alternatives(words: tuple[str, ...]) -> list[str]:
    """A concept's words as they are looked up (see `Concept.alternatives`)."""
    out: dict[str, None] = {}
    for word in words:
        if "+" in word:  # a phrase: its words in a row, and written as one
            out[" ".join(t for w in word.split("+") for t in tokenize.tokens(w))] = None
            out[word.replace("+", "")] = None
            continue
        found = tokenize.tokens(word)
        if len(found) == 1 and found[0].isascii():
            out.update(dict.fromkeys(inflections(found[0])))
        elif found:
            out[(STARTS if _SPACED.match(word) else "") + " ".join(found)] = None
    return list(out)


@lru_cache(maxsize=1)
def _concepts() -> tuple[dict[str, Concept], dict[str, Concept], dict[str, Concept]]:
    """(English word or abbreviation or number → concept, its stem → concept, CJK word →
    concept); a word on several lines stands for the union of their words. Built once
    (and kept in the state folder for the next command: `wordtables`)."""
    from daemon.memory import wordtables

    sources = (__file__, tokenize.__file__, wordtables.module_of("Stemmer"))
    concepts, *tables = wordtables.table("concepts", sources, _build_concepts, _concept_tables)
    made = [Concept(tuple(words), tuple(forms)) for words, forms in concepts]
    latin, stems, cjk = ({key: made[number] for key, number in table.items()} for table in tables)
    return latin, stems, cjk


def _concept_tables(value: object) -> bool:
    from daemon.memory.wordtables import strings

    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[0], list)):
        return False
    concepts = value[0]
    return all(isinstance(c, list) and len(c) == 2 and strings(c[0]) and strings(c[1]) for c in concepts) and all(
        isinstance(table, dict) and all(isinstance(n, int) and 0 <= n < len(concepts) for n in table.values())
        for table in value[1:]
    )


def _build_concepts() -> list:
    """[each concept's words and alternatives, then the three tables as key → number of its concept]."""
    lines = [tuple(unicodedata.normalize("NFKC", w).casefold() for w in line) for line in glossary_lines()]
    latin: dict[str, dict[str, None]] = {}
    stems: dict[str, dict[str, None]] = {}
    cjk: dict[str, dict[str, None]] = {}
    for words in lines:
        for word in words:
            key = word.replace("+", "")
            if _LATIN.fullmatch(key) or key.isdigit():
                latin.setdefault(key, {}).update(dict.fromkeys(words))
                stems.setdefault(stem(key), {}).update(dict.fromkeys(words))
            elif len(word) >= 2:
                cjk.setdefault(word, {}).update(dict.fromkeys(words))
    numbers: dict[tuple[str, ...], int] = {}  # one concept per distinct set of words
    tables = [{k: numbers.setdefault(tuple(v), len(numbers)) for k, v in table.items()} for table in (latin, stems, cjk)]
    return [[[list(words), _alternatives(words)] for words in numbers], *tables]


@lru_cache(maxsize=16384)
def concept_of(term: str) -> Concept | None:
    """The glossary concept an English word, abbreviation or status code stands for, if any."""
    latin, stems, _ = _concepts()
    return latin.get(term) or (stems.get(stem(term)) if term.isascii() and term.isalpha() and len(term) >= 4 else None)


_ANY_CJK = NonAscii("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@lru_cache(maxsize=1)
def _cjk_matcher() -> lexicon.Matcher:
    """The glossary's CJK words, in one Aho-Corasick matcher (a Korean word is found
    where a word starts: the lexicon's boundary rule)."""
    return lexicon.Matcher(_concepts()[2])


def cjk_concepts(text: str) -> list[tuple[str, Concept]]:
    """The glossary's CJK words in `text` (its phrase of bigrams, the concept), read left
    to right, the longest word at each place first and none overlapping the one before (a
    long katakana word, not its first half), a word found once."""
    if not _ANY_CJK.search(text):
        return []
    longest: dict[int, lexicon.Found] = {}
    for hit in _cjk_matcher().find(text):
        if hit.start not in longest or hit.end > longest[hit.start].end:
            longest[hit.start] = hit
    found: dict[str, Concept] = {}
    at = 0
    for start in sorted(longest):
        if start >= at:
            hit = longest[start]
            found.setdefault(" ".join(tokenize.tokens(hit.phrase)), hit.value)
            at = hit.end
    return list(found.items())
