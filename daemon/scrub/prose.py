"""Secrets handed over in a sentence, in any language a user types in: "the password is X",
"das Passwort lautet X", "le mot de passe est X", the same glued in Chinese or Japanese, "login is admin / X".

The names of a password, token, key or secret and the little words that hand a value over
("is", "ist", "est", and their CJK particles) are data: `daemon/lexicon/<lang>/secret_prose.tsv`. A name is
found in one Aho-Corasick pass; a value counts when it comes right after the name and a
colon, or after one of its language's link words within a few words, and when it has the
shape of one (a password must merely look like one; a token or key must look generated).
The names are found with the other detectors' words in one pass (anchors.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

from daemon import lexicon
from daemon.scrub.scan import anchored, find_anchored
from daemon.scrub.shape import classes, entropy, is_code, looks_generated, password_like, word_share

Span = tuple[int, int, str]
TABLE = "secret_prose"
_REACH = 60  # how far past the name a link word may stand ("password for admin changed to X")
# What may stand between a link (or the name) and its value: spaces, a colon, a quote.
# (None for a CJK link, which the value follows unspaced; an alphabetic one ends
# at a word boundary.)
_GAP = re.compile(r"(?:[ \t]*[:=：][ \t]*|[ \t]+)?[\"'`«“„「『]?")
# A value: no space, no quote, and none of the punctuation a CJK sentence goes on with.
_VALUE = re.compile(r"[^\s\"'`«»“”„「」『』，。、；！？（）【】]+")
_DIGIT = re.compile(r"[0-9]")
_ESCAPED = re.compile(r"%0[AD]|\\[nrt]")
_BASE32_DIGIT = re.compile(r"[2-7]")
_BASE32_SEED = re.compile(r"[A-Z2-7]{16,64}={0,6}|[a-z2-7]{16,64}")
_NAME_WITH_NUMBER = re.compile(r"[a-z]{2,}[0-9]{1,3}[a-z]{0,4}")
_LABELLED_DIGEST = re.compile(r"(?P<label>.+?)[\-_:.](?:[0-9a-f]{32,}|[0-9A-F]{32,})")
_CODE_AFTER = frozenset("=()[]{},;\"'`<>/\\|_")
_VALUE_CHAR = re.compile(r"[0-9!@#$%^&*+=?~]")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,}|[A-Za-z0-9]{4}(?: [A-Za-z0-9]{4}){3}")
_WORDS_ONLY = re.compile(r"[ \t][\w \t'’\-]*")  # (words between a name and its colon, no quote or comma)
# A value, a link word and at most two short words right before a name ("X is the password").
_BEFORE_NAME = re.compile(r"(?:^|(?<=[\s\"'`(]))[\"'`]?(?P<val>[^\s\"'`]{6,64}?)[\"'`]?[ \t]+(?P<link>\w+)(?:[ \t]+\w{1,6}){0,2}[ \t]+$", re.M)
_GROUPS = re.compile(r"(?P<g>[A-Za-z0-9]{4})(?:[ \-][A-Za-z0-9]{4}){3,}(?![A-Za-z0-9])")
_SECOND = re.compile(r"[ \t]*/[ \t]*[\"'`]?(?P<val>[^\s\"'`/]{4,})")
_USER_PAIR = re.compile(r"[A-Za-z][\w.\-]{0,31}:(?P<pw>[^\s:]{6,})")


def _particles(role: str) -> list[str]:
    """The particles of one role in `all/secret_particles.tsv`, longest first."""
    found = {row[0] for _, row in lexicon.every("secret_particles") if len(row) > 1 and row[1] == role}
    return sorted(found, key=lambda p: (-len(p), p))


# Stripped from a value's start (a particle, or a full-width or plain colon).
_CJK_PARTICLES = "".join(_particles("lead")) + "\uff1a:"
# A value glued to the name after it by a particle (no space in between).
_BEFORE_CJK_NAME = re.compile(
    r"(?:^|(?<=[^\x21-\x7e]))(?P<val>[\x21-\x7e]{6,64}?)[ \t]*(?:"
    + "|".join(map(re.escape, _particles("glued")))
    + r")[^\x00-\x7f\s]{0,4}$",
    re.M,
)
_COLON = re.compile(r"[:：](?=[ \t])")
_CJK_VALUE_END = re.compile(r"[^\x00-\x7f]")


class _Names:
    """The names (phrase → strong?, languages) and the link words, from every table."""

    def __init__(self) -> None:
        names: dict[str, tuple[bool, frozenset[str]]] = {}
        links: dict[str, set[str]] = {}
        for lang, row in lexicon.every(TABLE):
            if len(row) < 2 or row[1] not in ("strong", "name", "link"):
                raise lexicon.LexiconError(f"{lang}/{TABLE}.tsv: {row!r}: expected a phrase and strong, name or link")
            if row[1] == "link":
                links.setdefault(lang, set()).add(row[0].lower())
        for lang, row in lexicon.every(TABLE):
            if row[1] != "link":
                strong, langs = names.get(row[0].lower(), (False, frozenset()))
                names[row[0].lower()] = (strong or row[1] == "strong", langs | {lang})
        self.names = names
        # The link words of every language, for every name: people mix languages ("el
        # password es X", "der Token ist X"), and a value must still look like a secret.
        self.links = _Links([link for words in links.values() for link in words])


@lru_cache(maxsize=1)
def _tables() -> _Names:
    return _Names()


def names() -> tuple[str, ...]:
    """The names of a secret in every language (lower-cased), for anchors.Anchors."""
    return tuple(_tables().names)


def _spaced(char: str) -> bool:
    """A letter of a script that spaces its words (Latin, Cyrillic, Greek, Arabic, Hebrew,
    Devanagari, Hangul), or a digit: one next to a name makes it part of a longer word."""
    return char.isalnum() and (char.isascii() or not unicodedata.name(char, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")))


def _bounded(text: str, start: int, end: int) -> bool:
    """A name that is a word of its own (Korean glues particles after a name)."""
    if start and _spaced(text[start]) and _spaced(text[start - 1]):
        return False
    return end >= len(text) or not (_spaced(text[end - 1]) and _spaced(text[end])) or "\uac00" <= text[end - 1] <= "\ud7af"


class _Links:
    """A name's link words: those of a spaced script are whole words of the window (one
    pass over its words, a set lookup each), the others (CJK particles) found anywhere."""

    def __init__(self, links: list[str]) -> None:
        self.words = frozenset(link for link in links if _spaced(link[0]) and _WORD.fullmatch(link))
        # (A colon is no link of its own: a name's colon is judged apart, `key_id: X` is a field.)
        self.glued = tuple(sorted({link for link in links if link not in self.words and link not in (":", "：")}, key=len, reverse=True))

    def ends(self, window: str) -> list[int]:
        """Where each link in `window` (lower-cased) ends, in order."""
        found = [m.end() for m in _SPACED_WORD.finditer(window) if m.group() in self.words]
        for link in self.glued:
            at = window.find(link)
            while at >= 0:
                found.append(at + len(link))
                at = window.find(link, at + 1)
        return sorted(found)

    def at(self, window: str, pos: int) -> bool:
        """True when a link starts at `pos` of `window`."""
        m = _WORD.match(window, pos)
        return bool(m and m.group() in self.words) or window.startswith(self.glued, pos)


_WORD = re.compile(r"\w+")
# A word between spaces (a link is one: not the `a` of `noreply.a-seed.example`).
_SPACED_WORD = re.compile(r"(?:(?<=\s)|^)[\w'’]+(?=\s|$|[:,])")


def _value_after(text: str, pos: int, limit: int) -> tuple[int, int] | None:
    gap = _GAP.match(text, pos, limit)
    if not gap:
        return None
    m = _VALUE.match(text, gap.end(), limit)
    if not m:
        return None
    start, value = m.start(), m.group()
    lead = len(value) - len(value.lstrip(_CJK_PARTICLES))  # (a Chinese particle, "changed to", before the value)
    start, value = start + lead, value[lead:]
    cut = _CJK_VALUE_END.search(value)  # (the CJK sentence goes on after the value)
    end = start + (cut.start() if cut else len(value))
    groups = _GROUPS.match(text, start, limit)
    if groups and groups.end() > end:  # a setup key written in groups: `jbsw y3dp ehpk 3pxp`
        return start, groups.end()
    while end > start and text[end - 1] in ".,;:!?)]}>":
        end -= 1
    if end > start and (pair := _USER_PAIR.fullmatch(text, start, end)):
        start = pair.start("pw")  # ("creds are admin:X": the user stays)
    return (start, end) if end > start else None


def _beyond_doubt(value: str, strong: bool) -> bool:
    """A value with no link word to hand it over: a password mixing three kinds of
    character, a token that looks generated."""
    if strong:  # (symbols are a password's, not a token's: judged by its words, not its alphabet)
        return len(value) >= 8 and classes(value) >= 3 and _judge(value, True) and word_share(value) < 0.5
    return _judge(value, False)


def _judge(value: str, strong: bool) -> bool:
    if value.startswith(("*", "_", "~")) or _ESCAPED.search(value):  # Markdown emphasis: "is **not** for you"
        return False  # (`empfehlen!%0A`: a message's escaped line end)
    if strong:
        # (`migrate password hashes to argon2id`: a name with a number, a hash's or a format's)
        return password_like(value) and not _NAME_WITH_NUMBER.fullmatch(value)
    if _BASE32_SEED.fullmatch(value) and _BASE32_DIGIT.search(value) and entropy(value) >= 3.0:
        return True  # a TOTP seed: upper-case base32, whose letters run together by chance
    # (`Cache saved with key: node-cache-Linux-x64-npm-<sha256>`: a label and a digest)
    digest = _LABELLED_DIGEST.fullmatch(value)
    if digest and len(re.findall(r"[A-Za-z]{2,}", digest.group("label"))) >= 2:
        return False
    return looks_generated(value, 16, allow_hex=True, words=0.6, floor=0.75) and not is_code(value)


def find_sentences(text: str, low: str, hits: list[tuple[int, int, str]]) -> Iterator[Span]:
    """Values handed over after a secret's name in a sentence, in every language of the
    lexicon; `hits` are the names' places in `low` (anchors.Anchors, group `prose`).
    (A name is bounded here: it may follow `_`, as in `DB_PASSWORD to X`.)"""
    tables = _tables()
    for start, end, name in hits:
        after = text[end : end + 1]
        if after in _CODE_AFTER or after == ":" and text[start - 1 : start] in ("_", "-", ".") or not _bounded(text, start, end):
            continue  # (`db_password=`, `api_token: str`, `secret",`: code, which keywords.py reads)
        strong, _ = tables.names[name]
        line_end = text.find("\n", end)
        limit = min(end + 200, line_end if line_end >= 0 else len(text))
        if not (_VALUE_CHAR if strong else _TOKEN_RUN).search(text, end, limit):
            # (no value after the name can look like a password without one of these, or a
            # token without a run of its characters)
            yield from _value_before(text, start, strong, tables.links)
            continue
        # `Passwort: X`; in `db_password: X` the name is an identifier's, which keywords.py judges.
        named = text[start - 1 : start] not in ("_", "-", ".") and text[end : end + 2].lstrip(" \t")[:1] in (":", "：")
        tries = [end] if named else []
        window = low[end : min(limit, end + _REACH)]
        links = tables.links
        tries.extend(end + link_end for link_end in links.ends(window))
        # ("пароль от базы: X": words, then a colon; `key_id: X` is a field, keywords.py's)
        tries.extend(end + colon.end() for colon in _COLON.finditer(window) if _WORDS_ONLY.fullmatch(window, 0, colon.start()))
        # The value right after the name: before its link in a verb-final language ("şifresi
        # X olarak ayarlandı"), in a title ("VPN — Şifre X", "wifi password X"), glued to a CJK
        # name ("new password X", glued in Chinese): then it must look generated beyond doubt.
        glued = not _spaced(text[end - 1]) and text[end : end + 1].isascii() and text[end : end + 1].isalnum()
        spaced = text[end : end + 1] in (" ", "\t")
        direct = _value_after(text, end, limit) if (glued or spaced) and (_DIGIT.search(text, end, min(limit, end + 24)) or _GROUPS.match(text, end + 1, limit)) else None
        if direct:
            value = text[direct[0] : direct[1]].replace(" ", "")  # (a setup key in groups, joined)
            if links.at(low, direct[1] + 1 if text[direct[1] : direct[1] + 1] in (" ", "\t") else direct[1]) or _beyond_doubt(value, strong):
                tries.append(end)
        found = False
        for pos in sorted(set(tries)):
            span = _value_after(text, pos, limit)
            if span and strong and (pair := _SECOND.match(text, span[1], limit)):
                span = pair.span("val")  # ("Zugangsdaten: admin / X": a user, then its password)
            if span and _judge(text[span[0] : span[1]].replace(" ", ""), strong):
                yield span[0], span[1], "password"
                found = True
                break
        if not found:
            yield from _value_before(text, start, strong, links)


def _value_before(text: str, start: int, strong: bool, links: _Links) -> Iterator[Span]:
    """The value before a password's name: "X is the password", "X ist das Passwort", "use X
    as the password", the same in Japanese (a particle glued between them)."""
    if not strong:
        return
    line_start = text.rfind("\n", 0, start) + 1
    before = _BEFORE_NAME.search(text, line_start, start)
    if before and before.group("link").lower() in links.words and _beyond_doubt(before.group("val"), strong):
        yield before.start("val"), before.end("val"), "password"
    elif not _spaced(text[start]) and (glued := _BEFORE_CJK_NAME.search(text, line_start, start)) and _beyond_doubt(glued.group("val"), strong):
        yield glued.start("val"), glued.end("val"), "password"


_LOGIN, _LOGIN_WORDS = anchored(
    ("login", "log-in", "credentials?", "creds", "user(?:name)?", "account"),
    r"\b[^\n]{0,40}?(?:\b(?:is|are|with)\b|[:=])[ \t]*[\"'`]?"
    r"[\w.@+][\w.@+\-]{0,63}[\"'`]?[ \t]+/[ \t]+[\"'`]?(?P<val>[^\s\"'`/\-][^\s\"'`/]{3,})",
)


def find_logins(text: str, low: str, starts: list[int] | None = None) -> Iterator[Span]:
    """"the login is admin / X", "credentials: deploy / X" (`starts`: where _LOGIN_WORDS
    start in `low`, when already found)."""
    if " /" in text or "\t/" in text:  # (what _LOGIN needs after the user name)
        for m in find_anchored(_LOGIN, low, _LOGIN_WORDS, starts):
            value = text[m.start("val") : m.end("val")].rstrip(".,;:!?)]")
            if password_like(value):
                yield m.start("val"), m.start("val") + len(value), "password"
