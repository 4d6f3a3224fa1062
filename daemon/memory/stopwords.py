"""Filler that never decides what a prompt is about: stop words of four languages and more.

The `stop-words` package's lists (English, Chinese, Japanese, Korean) and the English
inflections of their words (moved, going), and from the lexicon (`daemon.lexicon`): a few
words of chat about memory itself (`chat_stop`), the words of every bug report (`weak`:
fix, fails, error, in each language), the English list's words that name things in
software (`en/stop_keep`); broad words, which decide only beside a word that is not broad
(`broad`, `actions`). A CJK bigram is filler when it is a stop word, when both its
characters are one-character stop words, when it holds a Chinese function character
(`zh/function_chars`), or when it is all hiragana (grammar).
Pure; the lists are read once.
"""

from __future__ import annotations

from functools import lru_cache

from daemon import lexicon
from daemon.memory import tokenize
from daemon.memory.script_re import NonAscii

STOP_LANGUAGES = ("en", "zh", "ja", "ko")


def _every(table: str) -> frozenset[str]:
    """A lexicon table's words in every language that has it."""
    return frozenset(w for lang in lexicon.languages(table) for w in lexicon.words(lang, table))


# Words of chat about memory and sessions that the lists lack (`<lang>/chat_stop.tsv`).
EXTRA_STOP = _every("chat_stop")
# Words of every bug report (`<lang>/weak.tsv`): a prompt and a memory that share only
# these share no topic, so they are filler here too.
WEAK = _every("weak")
# Words the English list holds that name things in software: they may decide.
KEEP = lexicon.words("en", "stop_keep")
# Broad words (`<lang>/broad.tsv`): an object every project of one kind has (a pod, a DAG,
# an image). A memory holding one says what it is about only with a word of the prompt
# that is not broad.
BROAD = _every("broad")
# Actions done to anything (`en/actions.tsv`): broad, and in a memory's body one is a word
# in passing, not one of the two words that make evidence (run the unit tests is not about
# a note that ran them).
ACTIONS = _every("actions")
_HIRAGANA = NonAscii("[\u3040-\u309f]")
# Chinese function characters (`zh/function_chars.tsv`): a bigram holding one spans a
# word boundary or is grammar; the characters of content words are other ones.
_ZH_PARTICLES = lexicon.words("zh", "function_chars")
CJK = NonAscii("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")


_INFLECTED = (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("es", ""), ("s", ""))


def _inflected_stop(token: str, stops: frozenset[str]) -> bool:
    """True when an English word is a stop word with an ending (moved, going, thinks,
    getting); a word the lists keep for software (tests, states, pages) is none."""
    if len(token) < 4 or not token.isascii() or not token.isalpha():
        return False
    for ending, back in _INFLECTED:
        if token.endswith(ending):
            base = token[: -len(ending)] + back
            if len(base) >= 2 and base[-1] == base[-2] and not back and ending in ("ing", "ed"):
                base = base[:-1]  # getting: get
            if len(base) >= 2 and base in stops:
                return True
    return False


@lru_cache(maxsize=1)
def stop_tokens() -> tuple[frozenset[str], frozenset[str]]:
    """Return (stop tokens, one-character CJK stop words), built once from the lists (and
    kept in the state folder for the next command: `wordtables`)."""
    from daemon.memory import wordtables

    sources = (__file__, tokenize.__file__, wordtables.module_of("stop_words"))
    built = wordtables.table("stop tokens", sources, _build_stop_tokens, _two_lists)
    return frozenset(built[0]), frozenset(built[1])


def _two_lists(value: object) -> bool:
    from daemon.memory.wordtables import strings

    return isinstance(value, list) and len(value) == 2 and all(strings(v) for v in value) and len(value[0]) >= 500


def _build_stop_tokens() -> list[list[str]]:
    from stop_words import get_stop_words

    words = {w for lang in STOP_LANGUAGES for w in get_stop_words(lang)} | EXTRA_STOP | WEAK
    singles = {w for w in words if len(w) == 1 and CJK.match(w)}
    tokens: set[str] = set()
    for word in words:
        if word in KEEP:
            continue
        found = tokenize.tokens(word)
        # A longer CJK stop word of the lists gives no bigrams (a Japanese word of the list inside a Korean sentence is a
        # word of its own); our own few do.
        if len(found) == 1 or not CJK.search(word) or word in EXTRA_STOP or word in WEAK:
            tokens.update(t for t in found if t not in KEEP)
    if len(tokens) < 500:  # the lists ship with the package: their absence is a broken install
        raise RuntimeError("the stop-words package gave almost no stop words: reinstall memoryd")
    return [sorted(tokens), sorted(singles)]


def is_broad(term: str) -> bool:
    """True when a word alone names no topic: a tool, platform or language, an object of
    every project (`BROAD`), an action done to anything (`ACTIONS`)."""
    return term in BROAD or term in ACTIONS


def is_action(term: str) -> bool:
    """True when a word is an action done to anything (`ACTIONS`): upgrade, install, run."""
    return term in ACTIONS


@lru_cache(maxsize=16384)
def is_stop(token: str) -> bool:
    """True when a token is filler that must never decide what a prompt is about: a stop
    word, or an English inflection of one (moved, going, thinks: move, go, think)."""
    stops, singles = stop_tokens()
    if token in stops or _inflected_stop(token, stops):
        return True
    if len(token) == 2 and CJK.match(token):
        # Japanese content words are kanji and katakana; hiragana is grammar or okurigana.
        if _HIRAGANA.search(token) or token[0] in _ZH_PARTICLES or token[1] in _ZH_PARTICLES:
            return True
        return token[0] in singles and token[1] in singles
    return len(token) == 1 and (token in singles or not token.isalnum() or token.isascii())
