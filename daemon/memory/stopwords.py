"""Filler that never decides what a prompt is about: stop words of four languages and more.

The `stop-words` package's lists (English, Chinese, Japanese, Korean), a few words of chat
about memory itself, and the words of every bug report (fix, fails, error, 失败, エラー,
실패). A CJK bigram is filler when it is a stop word, when both its characters are
one-character stop words (的是, 我们), when it holds a Chinese function character, or
when it is all hiragana (grammar: します). Pure; the lists are read once.
"""

from __future__ import annotations

import re
from functools import lru_cache

from daemon.memory import tokenize

STOP_LANGUAGES = ("en", "zh", "ja", "ko")
# Words of chat about memory and sessions that the lists lack.
EXTRA_STOP = frozenset(
    "hey hi hello thanks please remind remember recall recalled earlier again still check checking "
    "figure figured wondering basically yeah gonna wanna talking talk tell telling session sessions "
    "memory memories question questions thing things stuff".split()
    + ["一下", "请问", "帮我", "如何", "什么", "为什么", "怎么", "怎样", "问题", "之前", "上次", "现在", "应该"]
    + ["教えて", "ください", "どうして", "なぜ", "どう", "方法", "前回", "以前", "について"]
    + ["어떻게", "왜", "뭐", "무엇", "해주세요", "알려", "주세요", "이전", "지난번", "관련"]
)
# Words of every bug report, in four languages: a prompt and a memory that share only
# these share no topic, so they are filler here too.
WEAK = frozenset(
    "fix fixed fixes fixing fail fails failed failing failure failures error errors broken broke break "
    "breaks bug bugs issue issues problem problems wrong work works working worked help look looking "
    "try trying tried change changed changes use using used add added make made".split()
    + ["失败", "错误", "问题", "报错", "修复", "修改", "出错", "看看", "使用", "添加"]
    + ["失敗", "エラ", "ラー", "不具", "具合", "修正", "問題", "追加", "変更"]
    + ["실패", "오류", "에러", "문제", "수정", "추가", "변경", "사용"]
)
# Words the English list holds that name things in software: they may decide.
KEEP = frozenset(
    "test tests build run state states system systems order open close page pages value values group "
    "groups member members home number numbers name names line lines point points area areas case cases "
    "side new old world face".split()
)
_HIRAGANA = re.compile("[\u3040-\u309f]")
# Chinese function characters: a bigram holding one spans a word boundary (境的, 署到)
# or is grammar (我们); the characters of content words are other ones.
_ZH_PARTICLES = frozenset("的了着吗呢吧啊呀是把被这那们么我你他她它与及或但就都也还又很太到得地")
CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")


@lru_cache(maxsize=1)
def stop_tokens() -> tuple[frozenset[str], frozenset[str]]:
    """Return (stop tokens, one-character CJK stop words), built once from the lists."""
    from stop_words import get_stop_words

    words = {w for lang in STOP_LANGUAGES for w in get_stop_words(lang)} | EXTRA_STOP | WEAK
    singles = frozenset(w for w in words if len(w) == 1 and CJK.match(w))
    tokens: set[str] = set()
    for word in words:
        if word in KEEP:
            continue
        found = tokenize.tokens(word)
        # A longer CJK stop word of the lists gives no bigrams (関係 in 관계가 있다 is a
        # word of its own); our own few do.
        if len(found) == 1 or not CJK.search(word) or word in EXTRA_STOP or word in WEAK:
            tokens.update(t for t in found if t not in KEEP)
    if len(tokens) < 500:  # the lists ship with the package: their absence is a broken install
        raise RuntimeError("the stop-words package gave almost no stop words: reinstall memoryd")
    return frozenset(tokens), singles


def is_stop(token: str) -> bool:
    """True when a token is filler that must never decide what a prompt is about."""
    stops, singles = stop_tokens()
    if token in stops:
        return True
    if len(token) == 2 and CJK.match(token):
        # Japanese content words are kanji and katakana; hiragana is grammar or okurigana.
        if _HIRAGANA.search(token) or token[0] in _ZH_PARTICLES or token[1] in _ZH_PARTICLES:
            return True
        return token[0] in singles and token[1] in singles
    return len(token) == 1 and (token in singles or not token.isalnum() or token.isascii())
