"""Pure: what kind of statement a sentence is, from its wording, in several languages.

Two tables. A *label* opens a sentence and names its kind outright ("Decision:",
"原因：", "교훈:"). A *cue* is wording inside a sentence that marks its kind ("root
cause", "改为", "고쳤"). Latin-script cues match whole words; CJK and Hangul cues match
anywhere, since those scripts put no spaces between a word and its particles.
"""

from __future__ import annotations

import re

from daemon.capture.distill.memo import per_session
from daemon.capture.distill.prefilter import Prefiltered, prefiltered

# Kinds, in the order a sentence is tested when it has no label.
FINDING, LESSON, GOTCHA, DECISION, FIX, FOLLOWUP = "finding", "lesson", "gotcha", "decision", "fix", "followup"

_LABELS: dict[str, tuple[str, ...]] = {
    LESSON: ("lessons? learned", "lesson", "learned", "takeaway", "教训", "经验", "教訓", "学び", "교훈", "배운 점"),
    GOTCHA: ("gotcha", "pitfall", "caveat", "watch out", "beware", "坑", "陷阱", "注意事项", "落とし穴", "ハマりどころ",
             "注意点", "함정", "주의"),
    DECISION: ("decision", "decided", "convention", "policy", "rule", "决定", "决策", "约定", "規約", "決定", "方針",
               "결정", "규칙", "방침"),
    FINDING: ("root cause", "cause", "finding", "found", "原因", "根因", "发现", "判明", "원인", "발견"),
    FIX: ("fixed", "fix", "solution", "workaround", "resolved", "修复", "解决", "修正", "対策", "解決", "해결", "수정"),
    FOLLOWUP: ("follow-?ups?", "todo", "next steps?", "后续", "待办", "下一步", "今後", "残タスク", "次のステップ", "후속",
               "다음 단계", "할 일"),
}

_CUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # kind: (Latin whole-word cues, CJK/Hangul cues matched anywhere)
    LESSON: (("lesson", "learned", "takeaway"), ("教训", "教訓", "교훈")),
    GOTCHA: (("gotcha", "pitfall", "beware", "watch out", "caveat"), ("坑", "落とし穴", "ハマ", "함정", "주의해야")),
    FINDING: (
        ("root cause", "turns out", "turned out", "caused by", "the reason", "is configured", "is defined", "lives in",
         "is set", "does not exist", "doesn't exist", "never committed", "stopped on", "exceeded", "found",
         "the problem was", "the issue was", "because of"),
        ("原因", "根因", "发现", "原来", "导致", "由于", "问题在于", "判明", "わかった", "分かった", "起因", "のせい",
         "원인", "발견", "알고 보니", "때문", "문제는"),
    ),
    DECISION: (
        ("decision", "decided", "we will", "we'll use", "chose", "instead of", "rather than", "always", "never",
         "convention", "policy", "going with", "must"),
        ("决定", "约定", "一律", "而不是", "统一", "必须", "決定", "決めた", "常に", "ではなく", "代わりに", "方針", "必ず",
         "결정", "대신", "항상", "하기로", "반드시"),
    ),
    FIX: (
        ("fix", "fixed", "fixes", "workaround", "resolved", "solved", "now uses", "now reads", "changed", "replaced",
         "switched"),
        ("修复", "已修改", "改用", "改为", "解决", "修正", "対策", "解決", "直し", "変更", "置き換え", "해결", "고쳤",
         "바꿨", "수정", "변경", "고침"),
    ),
    FOLLOWUP: (
        ("follow-up", "followup", "todo", "next step", "remaining", "still need", "later", "should also", "consider",
         "rotate"),
        ("后续", "待办", "下一步", "还需要", "今後", "要対応", "残り", "検討", "후속", "다음 단계", "나중에", "검토"),
    ),
}

# Wording that makes a sentence a decision or a finding even inside a turn's conclusion.
_STRONG: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    DECISION: (("decided", "decision", "convention", "policy", "going forward", "from now on"),
               ("决定", "约定", "決定", "方針", "결정", "하기로")),
    FINDING: (("root cause", "turns out", "turned out", "caused by"), ("根因", "原因是", "原因は", "判明", "원인은")),
    LESSON: (("lesson", "learned"), ("教训", "教訓", "교훈")),
}

# Anchored at the start, so cheap as it is: no prefilter in front.
_LABEL_RE = re.compile(
    r"^\W{0,4}(?P<label>" + "|".join(f"(?P<{k}>{'|'.join(v)})" for k, v in _LABELS.items()) + r")\W{0,2}\s*[:：]\s*",
    re.IGNORECASE,
)


# Any memory kind's label word, with the spaces inside it left out: a text without one
# (its whitespace and bold markers removed too) has no labelled block a memory is made of.
_MEMORY_LABEL_WORD = prefiltered(
    "|".join(w.replace(" ", "") for k in (LESSON, GOTCHA, DECISION) for w in _LABELS[k]), re.IGNORECASE
)
# A heading line as `blocks` drops it (no character `str.splitlines` splits at inside it).
_HEADING = re.compile("(?m)^[ \t]*#{1,6}[ \t]+[^.。!！?？:：\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*$")


def may_hold_memory_label(text: str) -> bool:
    """False when no block of `text` (`turns.blocks`) can open with a lesson, gotcha or decision
    label: a quick look that spares most notes the parse. A block is the text's lines with
    markup, bold markers and line breaks taken out and headings dropped, so a label word it
    opens with stands in the text with at most whitespace or `**` inside it."""
    # `str.split` splits at what `\s` matches; `**` pairs go first, as a left-to-right scan takes them.
    return _MEMORY_LABEL_WORD.found("".join(_HEADING.sub("", text).replace("**", "").split()))


def _cue_regex(latin: tuple[str, ...], cjk: tuple[str, ...]) -> Prefiltered:
    # `\bw1\b|\bw2\b` matches as `\b(?:w1|w2)\b` does, and each word is an alternative a prefilter can pick.
    words = [rf"\b{w}\b".replace(" ", r"\s+") for w in latin]
    return prefiltered("|".join(words + list(map(re.escape, cjk))), re.IGNORECASE)


_CUE_RE = {kind: _cue_regex(*pair) for kind, pair in _CUES.items()}
_STRONG_RE = {kind: _cue_regex(*pair) for kind, pair in _STRONG.items()}
CLASSIFY_ORDER = (LESSON, GOTCHA, FINDING, DECISION, FIX)
MEMORY_KINDS = (LESSON, GOTCHA, DECISION)  # labelled lines that also become memories


@per_session
def label_of(sentence: str) -> tuple[str, str] | None:
    """The kind a sentence's opening label names, and the text after the label."""
    match = _LABEL_RE.match(sentence)
    if not match:
        return None
    kind = next(k for k in _LABELS if match.group(k))
    return kind, sentence[match.end() :].strip()


@per_session
def has_cue(sentence: str, kind: str) -> bool:
    return _CUE_RE[kind].found(sentence)


# "always" / "never" make a rule only as one ("never call X", "we always…", "…; never hard-code it"),
# not in a description of behaviour ("the effect never clears it").
_BARE_ALWAYS = re.compile(r"(?i)\b(?:always|never)\b")
_RULE_ALWAYS = re.compile(r"(?i)(?:^|[;:,—–]\s*|\b(?:we|you|should|must|to)\s+)(?:always|never)\b")


def _is_decision(sentence: str) -> bool:
    found = _CUE_RE[DECISION].search(sentence)
    if not found:
        return False
    if not _BARE_ALWAYS.fullmatch(found.group(0)):
        return True
    others = _CUE_RE[DECISION].sub(lambda m: "" if _BARE_ALWAYS.fullmatch(m.group(0)) else m.group(0), sentence)
    return _CUE_RE[DECISION].found(others) or bool(_RULE_ALWAYS.search(sentence))


@per_session
def kind_of(sentence: str) -> str | None:
    """The kind of a sentence: its label's, else its first cue's (followups excluded)."""
    labelled = label_of(sentence)
    if labelled:
        return labelled[0]
    return next(
        (kind for kind in CLASSIFY_ORDER if (_is_decision(sentence) if kind == DECISION else _CUE_RE[kind].found(sentence))),
        None,
    )


@per_session
def strong_kind(sentence: str) -> str | None:
    """The kind of a sentence whose wording leaves no doubt (a decision, a root cause), or None."""
    return next((kind for kind, regex in _STRONG_RE.items() if regex.found(sentence)), None)


# --- decisive findings and plans ------------------------------------------------------

_DECISIVE_RE = _cue_regex(
    ("found it", "found the bug", "found the problem", "found the cause", "found the culprit", "found the issue",
     "is the problem", "was the problem", "is the culprit", "was the culprit", "is the cause", "was the cause",
     "is the real cause", "the real cause", "the actual cause", "the real problem", "culprit", "confirmed", "confirms",
     "root cause", "turns out", "turned out", "caused by", "pinpointed", "tracked it down", "narrowed it down",
     "the cause is", "the cause was", "the problem is", "the issue is", "the bug is", "is what's causing", "is causing the",
     "that explains", "this explains", "which explains", "explains why", "the reason is", "that's why", "this is why"),
    ("找到了", "找到原因", "原因是", "根因", "确认了", "已确认", "确认是", "可以确认", "问题出在", "罪魁祸首", "真正的原因",
     "判明", "原因は", "原因が分か", "突き止め", "真因", "確認できました", "と確認", "ことを確認",
     "问题在于", "是因为", "が原因", "其实是", "实际上是", "原来是", "実は", "알고 보니", "难怪", "这就是为什么", "原因在于", "理由は",
     "ためでした", "이유는", "原因でした", "때문입니다", "때문이었", "원인은", "원인이", "찾았습니다", "찾았다", "확인됐", "확인되었", "확인했", "밝혀", "범인은", "진짜 원인"),
)
# Wording that makes a statement a guess, not a finding.
_HEDGE_RE = _cue_regex(
    ("probably", "maybe", "might", "perhaps", "i think", "i suspect", "likely", "possibly", "could be", "my guess",
     "i bet", "my bet", "presumably", "i guess", "my hunch", "i assume"),
    ("可能", "也许", "大概", "猜", "我觉得", "だと考え", "と思い", "かもしれ", "おそらく", "たぶん", "아마", "같습니다", "추측"),
)
# Guesses the hedge table's whole words miss: "应该是…" (should be = probably), "…だと思います".
_GUESS_RE = prefiltered(r"应该是|估计|怀疑|と思います|と思われ|ようです|みたいです|것 같|듯합니다|것으로 보입니다")
# Narration of what the agent is about to do, at a sentence's start: not a result.
NARRATION = re.compile(
    r"^(let me|let's|i'll|i will|now i|first,|next,|i'm going to|going to|让我|我来|我先|まず|次に|확인해|먼저)", re.I
)
# A plan anywhere in a sentence ("…so I'll fix the hook", "should fix the apply"): never a fix.
_INTENT_RE = prefiltered(
    r"(?i)\b(?:i'll|i will|i'm going to|i am going to|let me|we need to|i need to|next i|plan to|going to try|will try)\b"
    r"|我会|我来|让我|我先|打算|准备|接下来|将会|してみます|しましょう|するつもり|予定です|にします。?$|します。?$"
    r"|하겠습니다|할게요|해 보겠|할 예정|하려고"
)
# An expectation ("should go through now") is not a fix either, though it may be a claim that fails.
_SHOULD_RE = prefiltered(r"(?i)\b(?:should|ought to)\b|应该|べき|はずです|해야 합")


def names_cause(sentence: str) -> bool:
    """Wording of a finding, settled or only guessed ("the cause is probably X")."""
    return _DECISIVE_RE.found(sentence)


@per_session
def is_decisive(sentence: str) -> bool:
    """A finding stated as settled ("found it", "X is the culprit", "原因是", "判明", "원인은"), not hedged."""
    return _DECISIVE_RE.found(sentence) and not _HEDGE_RE.found(sentence)


@per_session
def is_hedged(sentence: str) -> bool:
    """A statement made as a guess ("I think…", "probably", "应该是", "だと思います", "아마")."""
    return _HEDGE_RE.found(sentence) or _GUESS_RE.found(sentence)


@per_session
def is_intent(sentence: str) -> bool:
    """What the agent is about to do ("Let me…", "…so I'll fix the hook", "修正します"), not what it did."""
    return bool(NARRATION.match(sentence)) or _INTENT_RE.found(sentence)


@per_session
def is_plan(sentence: str) -> bool:
    """An intent or an expectation ("should fix the apply"): never a fix that worked."""
    return is_intent(sentence) or _SHOULD_RE.found(sentence)
