"""How common a word is in general language: the half of a word's weight a small store cannot give.

A store of 20 memories cannot tell "building" from "lockfile": each is in one of them. The
`wordfreq` package's frequency lists (English, Chinese, Japanese, Korean: books, subtitles,
the web, Wikipedia…) can: "building" is an everyday word, "lockfile" no everyday text
holds. `specificity(term)` turns a word's Zipf frequency (log10 of its count per billion
words: "the" ~7.7, "building" 5.3, "tile" 3.7, "lockfile" none) into a factor between
FLOOR and 1 that relevance multiplies the store's own IDF by, so the weights are right in
a 20-memory store (the general half decides) and in a 100k one (the store's half does).

The lists are read from wordfreq's data files (its cBpack format: a header, then lists
of words by frequency, one list per centibel) without importing the package (its import
pulls in ftfy, langcodes and regex: ~0.15 s a short command would pay), one language at
a time, when a prompt first has a word of its script. A word the lists lack (a tool's
name, an identifier, a typo) is as specific as a word can be.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from pathlib import Path

from daemon.memory.script_re import NonAscii

ZIPF_RARE = 3.0  # at or below this a word is fully specific (async 2.3, docker 3.0)
ZIPF_EVERYDAY = 7.0  # the commonest words ("the" 7.7) are at the floor
FLOOR = 0.25  # an everyday word still weighs this share: it may add, it rarely decides
LIST = "small"  # wordfreq's smaller lists: the 30-40k commonest words of each language, 4 ms to read

_HANGUL = NonAscii("[\uac00-\ud7af]")
_KANA = NonAscii("[\u3040-\u30ff]")
_HAN = NonAscii("[\u3400-\u9fff\uf900-\ufaff]")


def _data_folder() -> Path | None:
    from importlib.util import find_spec

    spec = find_spec("wordfreq")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@lru_cache(maxsize=8)
def _zipf_table(lang: str, size: str = LIST) -> dict[str, float]:
    """Word → Zipf frequency for one language, from wordfreq's cBpack list."""
    import msgpack  # wordfreq's own dependency

    folder = _data_folder()
    if folder is None:
        raise RuntimeError("wordfreq is missing: reinstall memoryd (pip install -e . or pipx reinstall)")
    path = folder / f"{size}_{lang}.msgpack.gz"
    try:
        packed = msgpack.unpackb(gzip.decompress(path.read_bytes()), raw=False)
    except (OSError, ValueError) as error:
        raise RuntimeError(f"wordfreq's list {path} cannot be read ({error}): reinstall memoryd") from error
    header, *bins = packed
    if not isinstance(header, dict) or header.get("format") != "cB":
        raise RuntimeError(f"wordfreq's list {path} is not in the cBpack format this version reads")
    # bin i holds the words of frequency 10^(-i/100): Zipf = 9 - i/100
    return {word: 9 - i / 100 for i, words in enumerate(bins) for word in words}


def _languages(text: str) -> tuple[str, ...]:
    if text.isascii():
        return ("en",)
    if _HANGUL.search(text):
        return ("ko",)
    if _KANA.search(text):
        return ("ja",)
    if _HAN.search(text):
        return ("zh", "ja")
    return ("en",)


@lru_cache(maxsize=16384)
def zipf(word: str) -> float:
    """The word's Zipf frequency in general language (0 when the lists lack it): the
    highest of the languages its script is written in (Chinese characters: Chinese or
    Japanese). A Korean word is looked up without the particles glued to its end (the
    lists hold the word, not the word with each particle): its longest start the Korean
    list holds, of two syllables or more."""
    langs = _languages(word)
    if langs == ("ko",):
        table = _zipf_table("ko")
        return next((table[word[:n]] for n in range(len(word), 1, -1) if word[:n] in table), 0.0)
    return max((_zipf_table(lang).get(word, 0.0) for lang in langs), default=0.0)


@lru_cache(maxsize=4096)
def rare_zipf(word: str) -> float:
    """An English word's Zipf frequency in wordfreq's large list (320k words, rare ones
    too: struct 2.5, ingres 2.1; ~0.1 s to read, once, when first asked): tells a rare
    real word from a typo. 0 when the list lacks it."""
    return _zipf_table("en", "large").get(word, 0.0)


def specificity(word: str) -> float:
    """Between FLOOR (an everyday word) and 1 (a word no everyday text holds)."""
    share = (ZIPF_EVERYDAY - zipf(word)) / (ZIPF_EVERYDAY - ZIPF_RARE)
    return min(1.0, max(FLOOR, share))
