"""Filler that never decides what a prompt is about: stop words of four languages and more.

The `stop-words` package's lists (English, Chinese, Japanese, Korean) and the English
inflections of their words (moved, going), a few words of chat about memory itself, and
the words of every bug report (fix, fails, error, 失败, エラー, 실패); and broad words,
which decide only beside a word that is not broad (`BROAD`, `ACTIONS`). A CJK bigram is filler when
it is a stop word, when both its characters are one-character stop words (的是, 我们),
when it holds a Chinese function character, or when it is all hiragana (grammar: します).
Pure; the lists are read once.
"""

from __future__ import annotations

from functools import lru_cache

from daemon.memory import tokenize
from daemon.memory.script_re import NonAscii

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
# Broad words: a tool, platform or language, a file format, an object every project of one
# has (a pod, a DAG, an image), or an action done to anything (upgrade, install, run). A memory holding
# one of them says what it is about only with a word of the prompt that is not broad: a
# question about tokio's select! is not about the tokio upgrade, nor a pnpm question
# about the pnpm lockfile. Words as the prompt has them, with their common inflections.
BROAD = frozenset(
    "python golang go rust java kotlin swift javascript js typescript ts node nodejs deno bun npm pnpm yarn "
    "react vue angular svelte next nextjs nuxt django flask fastapi rails spring docker compose kubernetes "
    "k8s kubectl helm terraform tf ansible git github gitlab tmux ssh vim neovim emacs vscode bash zsh shell "
    "linux macos windows ubuntu debian aws gcp azure airflow pandas numpy spark kafka redis postgres "
    "postgresql mysql sqlite mongodb nginx cargo tokio gradle maven android ios xcode webpack vite jest "
    "pytest playwright cypress tailwind stripe retrofit firebase "
    "pod pods dag dags image images container containers cluster namespace repo repository app "
    "json yaml yml csv parquet xml toml sql html css".split()
)
# Actions done to anything: broad, and in a memory's body one is a word in passing, not one
# of the two words that make evidence (run the unit tests is not about a note that ran them).
ACTIONS = frozenset(
    "upgrade upgrades upgraded upgrading bump bumped bumping install installed installing run runs running "
    "rerun start started starting stop stopped restart update updated updating rename refactor set setup".split()
)
_HIRAGANA = NonAscii("[\u3040-\u309f]")
# Chinese function characters: a bigram holding one spans a word boundary (境的, 署到)
# or is grammar (我们); the characters of content words are other ones.
_ZH_PARTICLES = frozenset("的了着吗呢吧啊呀是把被这那们么我你他她它与及或但就都也还又很太到得地")
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
        # A longer CJK stop word of the lists gives no bigrams (関係 in 관계가 있다 is a
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
