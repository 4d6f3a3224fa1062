"""Credentials in code and config syntaxes that have no assignment operator.

- a name and a value as two string arguments or a key/value pair of attributes: PHP's
  `define('DB_PASSWORD', '…')`, `props.setProperty("password", "…")`, NuGet's and
  web.config's `<add key="ClearTextPassword" value="…"/>`, Spring's `<property name=… value=…>`;
- a password as a positional argument of a call that takes one: `connect("h", "u", "…")`,
  `login("u", "…")`, `new NetworkCredential("u", "…")` (the calls: lexicon
  `all/secret_calls.tsv`, each with the first argument a password may be);
- connection strings without a scheme: Go's `user:pw@tcp(host)`, Oracle's `user/pw@//host`
  (or after `sqlplus`, `connect`), ODBC's braced `PWD={…}`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from daemon import lexicon
from daemon.scrub.keywords import judge_name, judge_value
from daemon.scrub.shape import is_placeholder, password_like

Span = tuple[int, int, str]

# `'DB_PASSWORD', '…'`: a secret's name as a string, then a value as the next string.
PAIR_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
_STRING_PAIR = re.compile(
    r"(?:pass|pwd|secret|token|key|auth|cred)[A-Za-z0-9_.\-]*(?P<q>[\"'])[ \t]*,[ \t]*(?P<v>[\"'])(?P<val>[^\"'\n]{1,200})(?P=v)"
)
# (What comes before `value=` in a key/value pair of attributes, searched backwards from it.)
_QUOTES_COMMA = re.compile(r"[\"'][ \t]*,[ \t]*[\"']")
_KEY_BEFORE = re.compile(r"\b(?:key|name)[ \t]*=[ \t]*(?P<q>[\"'])(?P<name>[^\"'<>\n]{1,80})(?P=q)[ \t]+$", re.I)
_VALUE_AFTER = re.compile(r"value[ \t]*=[ \t]*(?P<v>[\"'])(?P<val>[^\"'<>\n]{1,200})(?P=v)")
_GO_DSN_BEFORE = re.compile(r"(?<![\w/:])[\w.\-]{1,64}:(?P<val>[^\s@/:'\"]{3,128})$")
_GO_PROTOCOLS = ("tcp(", "tcp6(", "unix(", "udp(")
_ORACLE_EZ_BEFORE = re.compile(r"(?<![\w/.\-])[\w$#]{1,30}/(?P<val>[^\s@/'\"]{3,64})$")
ORACLE_WORDS = ("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl", "conn")
_ORACLE_COMMAND = re.compile(
    r"(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl|conn)(?:ect)?[ \t]+(?:-[a-z]+[ \t]+)*[\"']?[\w$#]{1,30}/(?P<val>[^\s@/'\"]{3,64})@[\w.\-/]",
)
_BRACED = re.compile(r"(?:pwd|password)[ \t]*=[ \t]*\{(?P<val>(?:[^}\n]|\}\})+)\}")


@lru_cache(maxsize=1)
def _calls() -> dict[str, int]:
    """The calls a password is passed to (lower-cased, with their `(`) and each one's first
    password argument."""
    first: dict[str, int] = {}
    for row in lexicon.rows("all", "secret_calls"):
        if len(row) != 2 or not row[1].isdigit() or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", row[0]):
            raise lexicon.LexiconError(f"all/secret_calls.tsv: {row!r}: expected a call's name and an argument number")
        for call in (f"{row[0].lower()}(", f"{row[0].lower()} ("):
            first[call] = int(row[1])
    return first


def call_words() -> tuple[str, ...]:
    """The calls' words, for anchors.Anchors (group `call`)."""
    return tuple(_calls())


_DIGIT = re.compile(r"[0-9]")
_NAMED_FOR_SECRET = re.compile(r"(?:password|passwd|passphrase|secret|token|credential)s?[ \t]*\($")
_CALL_REST = re.compile(r"[a-z0-9_]*[ \t]*\(")


def _arguments(text: str, pos: int) -> list[tuple[int, int, bool]]:
    """The top-level arguments of the call whose `(` is just before `pos`: (start, end,
    quoted) of each, a quoted one without its quotes; [] when it does not close soon."""
    args, depth, start, i, n = [], 0, pos, pos, min(len(text), pos + 400)
    while i < n:
        c = text[i]
        if c in "\"'`":
            close = text.find(c, i + 1, n)
            if close < 0:
                return []
            i = close + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append((start, i))
                return [_strip(text, s, e) for s, e in args]
            depth -= 1
        elif c == "," and depth == 0:
            args.append((start, i))
            start = i + 1
        i += 1
    return []


def _strip(text: str, start: int, end: int) -> tuple[int, int, bool]:
    while start < end and text[start] in " \t\r\n":
        start += 1
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    if text.startswith('\\"', start) and text.startswith('\\"', end - 2) and end - start >= 4:
        return start + 2, end - 2, True  # (quotes escaped in a JSON string: `\"pw\"`)
    quoted = end - start >= 2 and text[start] in "\"'`" and text[end - 1] == text[start]
    return (start + 1, end - 1, True) if quoted else (start, end, False)


def _positional(value: str) -> bool:
    """A positional literal that is a password, not a host, user, database or DSN."""
    return password_like(value) and not any(c in value for c in "/:@=; ")


def find_places(text: str, low: str, hits: dict[str, list[tuple[int, int, str]]]) -> Iterator[Span]:
    """Credentials given without an operator: string pairs, key/value attributes, positional
    arguments, Go, Oracle and ODBC connection strings. `hits`: anchors.Anchors' groups
    `pair` (PAIR_WORDS), `call` (call_words()) and `oracle` (ORACLE_WORDS)."""
    if "'" in text or '"' in text:
        yield from _string_pairs(text, low, hits["pair"])
        if "value" in low:
            yield from _key_values(text, low)
        yield from _positionals(text, low, hits["call"], hits["pair"])
    if "@" in text:
        yield from _connection_strings(text, low, hits["oracle"])
    if "{" in text:
        for start, _, _ in hits["pair"]:  # (`pass`, `pwd`: what a braced ODBC password follows)
            m = _BRACED.match(low, start) if low.startswith(("pwd", "password"), start) else None
            if m and (not start or low[start - 1] in ";\"' \t\n") and not is_placeholder(m.group("val")):
                yield m.start("val"), m.end("val"), "password"


def _string_pairs(text: str, low: str, hits: list[tuple[int, int, str]]) -> Iterator[Span]:
    if not _QUOTES_COMMA.search(text):
        return  # (no two strings side by side)
    done = -1
    for start, _, _ in hits:
        m = _STRING_PAIR.match(low, start) if start >= done else None
        if not m:
            continue
        done = m.end()
        quote = m.group("q")
        begin = low.rfind(quote, 0, m.start()) + 1
        name = text[begin : m.start("q")]
        if begin and re.fullmatch(r"[\w.\-]+", name) and (need := judge_name(name)):
            value = text[m.start("val") : m.end("val")]
            # (Two strings side by side may be two names: `('Token', 'copy_context')`.)
            if judge_value(value, need, True, False, name) and (password_like(value) or need != "literal"):
                yield m.start("val"), m.end("val"), "assignment"


def _key_values(text: str, low: str) -> Iterator[Span]:
    at = low.find("value")
    while at >= 0:
        key = _KEY_BEFORE.search(text, max(0, at - 120), at) if low[at + 5 : at + 7].lstrip(" \t")[:1] == "=" else None
        value = _VALUE_AFTER.match(text, at) if key else None
        if key and value and (need := judge_name(key.group("name"))):
            if judge_value(value.group("val"), need, True, False, key.group("name")):
                yield value.start("val"), value.end("val"), "assignment"
        at = low.find("value", at + 5)


def _positionals(text: str, low: str, hits: list[tuple[int, int, str]], words: list[tuple[int, int, str]]) -> Iterator[Span]:
    first = _calls()
    for start, end, call in hits:
        if start and (low[start - 1].isalnum() or low[start - 1] in "_$"):
            continue  # (`reconnect(`, `$login(`)
        strings = [(s, e) for s, e, quoted in _arguments(text, end)[first[call] - 1 :] if quoted]
        for i, (s, e) in enumerate(strings):
            # (A string with another after it may be the user: `auth("deploy-bot", "…")`.)
            if _positional(text[s:e]) and (i == len(strings) - 1 or _DIGIT.search(text, s, e)):
                yield s, e, "password"
    # Any other call whose name holds `pass`, `cred` or `auth` (`Cred::userpass_plaintext(`,
    # `setCredentials(`): a password is one of its string arguments after the first.
    done = -1
    for start, end, word in words:
        if word not in ("pass", "cred", "auth") or start < done:
            continue
        call = _CALL_REST.match(low, end)
        if not call:
            continue
        done = call.end()
        # (`withPassword("X")`, `.password("X")`: a call named after the secret takes it first)
        first_arg = 0 if _NAMED_FOR_SECRET.search(low, start, call.end()) else 1
        for s, e, quoted in _arguments(text, call.end())[first_arg:]:
            if quoted and _positional(text[s:e]) and _DIGIT.search(text, s, e):  # (`"x-request-id"` is no password)
                yield s, e, "password"


def _connection_strings(text: str, low: str, hits: list[tuple[int, int, str]]) -> Iterator[Span]:
    """Go's `user:pw@tcp(host)`, Oracle's `user/pw@//host` and `sqlplus user/pw@tns`."""
    at = text.find("@")
    while at >= 0:
        before = None
        if low.startswith(_GO_PROTOCOLS, at + 1):
            before = _GO_DSN_BEFORE.search(text, max(0, at - 200), at)
        elif text.startswith("//", at + 1):
            before = _ORACLE_EZ_BEFORE.search(text, max(0, at - 100), at)
        if before and _given(before.group("val")):
            yield before.start("val"), before.end("val"), "url_credentials"
        at = text.find("@", at + 1)
    for start, _, _ in hits:
        m = _ORACLE_COMMAND.match(low, start)
        if m and (not start or not low[start - 1].isalnum()) and _given(m.group("val")):
            yield m.start("val"), m.end("val"), "password"


def _given(value: str) -> bool:
    """A value written out, not a placeholder or a reference (`$PW`, `{pw}`, `%s`, `<pw>`)."""
    return not is_placeholder(value) and not value.startswith(("$", "{", "%", "<"))
