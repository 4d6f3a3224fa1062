"""Pure: a note's one-line description, which says what was done, in the session's language.

The description is where the session ended: the first sentence of the Outcome (the last
turn's conclusion leads it). A sentence that only says something was done ("Fixed.",
"修正しました。", "빌드가 성공했습니다.") carries nothing a reader can use, so the one after it
joins it, or the next candidate is taken.
"""

from __future__ import annotations

import re

from daemon.capture.distill.tables import RegexTable
from daemon.capture.distill.supersede import retraction_scope
from daemon.capture.distill.turns import clip_sentences, key, sentences, weight

DESCRIPTION_CHARS = 200
_SHORT_RETRACTION = 80  # a retraction or a sentence naming nothing, lighter than this, takes the next one
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# What a bare "done" is made of. The catch-all comes first: it matches where no word can
# start (a word starts at a letter, `_` starts none), so the order changes no match and a
# non-word character is taken at its first try. Only the rows whose words a text holds are
# tried (tables.py): the table is tried at every character, and most texts hold few of them.
_DONE = RegexTable("distill_done", "(?i)")
# Something a reader can look up: a path, a symbol, a code span, a number.
_IDENT = re.compile(r"`[^`]+`|[\w-]*[./_][\w./-]+|\b[a-z]+[A-Z]\w*|\b[A-Z]{2,}\w*|\d")
_NO_RESULT = {
    "en": ("No result stated; touched {}.", "No result stated in the session."),
    "zh": ("会话未说明结果；涉及 {}。", "会话中没有说明结果。"),
    "ja": ("結果の記載なし。触れたファイル: {}。", "セッションに結果の記載はありません。"),
    "ko": ("결과가 적혀 있지 않음; 다룬 파일: {}.", "세션에 결과가 적혀 있지 않습니다."),
}


def language_of(texts: list[str]) -> str:
    """"ko", "ja", "zh" or "en": the script the user wrote in."""
    text = " ".join(texts)
    if len(_HANGUL.findall(text)) >= 4:
        return "ko"
    if len(_KANA.findall(text)) >= 3:
        return "ja"
    return "zh" if len(_HAN.findall(text)) >= 4 else "en"


def has_content(sentence: str) -> bool:
    """More than a bare "done": a name to look up, or words beyond "fixed", "修正しました"."""
    rest = _DONE.sub(" ", sentence)
    return bool(_IDENT.search(rest)) or weight(" ".join(rest.split())) >= 20


def _from(text: str, asked: str) -> str:
    parts = sentences(text) or [text]
    for index, first in enumerate(parts):
        k = key(first)
        if not k or k == asked or asked.startswith(k):
            continue
        after = parts[index + 1] if index + 1 < len(parts) else ""
        bare = weight(first) < _SHORT_RETRACTION and (retraction_scope(first) or not _IDENT.search(first))
        if bare and has_content(after):
            # "Waiting for the iframe did not help.", "まだ解決していません。": where things stand needs the next sentence.
            joined = clip_sentences([first, after], DESCRIPTION_CHARS)
            if after[:20] in joined:
                return joined
        if has_content(first):
            return clip_sentences([first], DESCRIPTION_CHARS)
        later = next((p for p in parts[index + 1 :] if has_content(p)), "")
        if later:
            return clip_sentences([first, later], DESCRIPTION_CHARS)
    return ""


def description(candidates: list[str], first_ask: str, files: list[str], language: str) -> str:
    """The first candidate sentence with content (never the user's own question), else a fallback."""
    touched = [line.split("`")[1] for line in files if line.startswith("`")][:3]
    with_files, bare = _NO_RESULT.get(language, _NO_RESULT["en"])
    fallback = with_files.format(", ".join(touched)) if touched else bare
    asked = key(first_ask)
    for text in candidates:
        found = _from(text, asked) if text else ""
        if found:
            return found
    return fallback
