"""Secrets recognised by the structure around them: key blocks, URLs, credential files.

Private keys of every armour (PEM and OpenSSH, PuTTY, bodies cut from their BEGIN line),
the password in a URL's userinfo, `.netrc` and `.pgpass` lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from daemon.scrub.scan import find_anchored
from daemon.scrub.shape import is_placeholder, looks_random, password_like

Span = tuple[int, int, str]

_PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
# The DER start of a private key's base64 (PKCS#1/#8 RSA, SEC1 EC, OpenSSH): a body
# pasted without its BEGIN line still starts like this; a certificate does not.
_KEY_BODY_START = r"(?:MII[A-Za-z0-9+/]{3}IBA[AD]|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE|MC4CAQAw|b3BlbnNzaC1rZXktdjE)"
_KEYS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # A BEGIN line with a body after it (past armour headers such as `Proc-Type:`, and the
    # quotes, `+`, `\n` and line numbers of a key written as code or quoted from a listing),
    # to its END line or the end of the text; the armour alone is a constant in code.
    ("-----begin", re.compile(
        rf"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        rf"(?=(?:\s|\\[rn]|[\"'`+,;|]|[0-9]{{1,4}}[:.|)]?[ \t]|[A-Za-z\-]+:[^\n]*)*[A-Za-z0-9+/=]{{16}})[\s\S]*?(?:{_PEM_END}|\Z)"
    )),
    # A body whose BEGIN line was cut off: base64 lines that run into the END line…
    ("-----end", re.compile(rf"(?m)(?:^[ \t]*[A-Za-z0-9+/=]{{16,100}}[ \t]*\r?\n)+[ \t]*{_PEM_END}")),
    # …or that start like a DER/OpenSSH private key (escaped \n as in JSON included).
    (
        "",
        re.compile(
            rf"(?<![A-Za-z0-9+/]){_KEY_BODY_START}[A-Za-z0-9+/=]{{16,}}"
            rf"(?:[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]{{4,}})*(?:\s*{_PEM_END})?"
        ),
    ),
    # PuTTY: the private lines and their MAC (the header and public lines are not secret).
    ("putty-user-key-file", re.compile(r"(?m)^Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n(?:[A-Za-z0-9+/=]+[ \t]*\r?\n?)+(?:Private-MAC:[ \t]*[0-9a-fA-F]+)?")),
)


# What every pattern above needs in the text (armour dashes, a DER/OpenSSH start, PuTTY's
# private lines): one search rejects the text that holds none.
_ANY_KEY = re.compile(r"-----|MII|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE|MC4CAQAw|b3BlbnNzaC1rZXktdjE|Private-Lines:")


def find_keys(text: str, low: str) -> Iterator[Span]:
    """Private key blocks: PEM/OpenSSH/PGP armour, headless bodies, PuTTY private lines."""
    if not _ANY_KEY.search(text):
        return
    for trigger, pattern in _KEYS:
        if trigger and trigger not in low:
            continue
        if not trigger and not any(s in text for s in ("MII", "MHcCAQEE", "MIGkAgEBBD", "MIHcAgEBBE", "MC4CAQAw", "b3BlbnNzaC1rZXktdjE")):
            continue
        for m in pattern.finditer(text):
            yield m.start(), m.end(), "private_key"


# After `://`: the userinfo of a URL (the scheme before it is not needed to judge it).
# (A password with a raw `/` is no valid URL, but base64 pasted into one has them: such a
# password must look random, and cannot be a port before a path.)
_URL = re.compile(r"://(?P<user>[^\s:/@'\"<>`]*)(?::(?P<pw>[^\s@'\"<>`]*?))?@(?=[\w\[])")


def find_url_credentials(text: str) -> Iterator[Span]:
    """`scheme://user:password@host`, and a token standing alone as the user (`https://<token>@…`)."""
    for m in _URL.finditer(text):
        password, user = m.group("pw"), m.group("user")
        if password and "/" in password and not looks_random(password, 16, allow_hex=True, words=0.6):
            continue
        if password:
            if (
                not is_placeholder(password)
                and not password.startswith(("$", "%", "{", "[", "<"))  # `[password]`, `<pw>`
                and len(password) >= 3
                and "%20" not in password
                and not (password.isdigit() and len(password) <= 5)  # `host:port@` in a bad URL
                and not re.match(r"[0-9]{1,5},", password)  # `h1:port,h2:port`: hosts, not userinfo
                and password != user  # `postgres:postgres@localhost`: a default anyone guesses
            ):
                yield m.start("pw"), m.end("pw"), "url_credentials"
        elif user and looks_random(user, 16, allow_hex=True):
            yield m.start("user"), m.end("user"), "url_credentials"


# (run over the lower-cased text) `machine h login u password p` on one line, in netrc's
# grammar ("the default user has no password until", "set default password for" are
# sentences), or a
# `password p` line of a multi-line entry.
_NETRC = re.compile(r"(?<![a-z])(?:machine[ \t]+\S+(?:[ \t]+(?:login|account|port)[ \t]+\S+)*|default(?:[ \t]+(?:login|account|port)[ \t]+\S+)+)[ \t]+password[ \t]+(?P<val>\"[^\"\n]+\"|[^\s]+)|password[ \t]+(?P<alone>[^\s:=]+)[ \t]*$", re.M)
# What every match of it starts with: sought by scan.find_anchored (the engine, which has no
# first character to skip ahead to past the look-behind, would try both branches everywhere).
_NETRC_WORDS = ("machine", "default", "password")
_MAC = re.compile(r"[ \t]*[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{0,4}){3,}[ \t]*$", re.M)  # MAC and IPv6 addresses
_PGPASS_PORT = re.compile(r":(?:[0-9]{1,5}|\*):")
_PGPASS_WORD = re.compile(r"(?:(?:[A-Za-z0-9\-]+\.)+[A-Za-z][A-Za-z0-9\-]*|localhost|\*):(?:[0-9]{1,5}|\*):(?:[A-Za-z_][\w.\-]*|\*):(?:[A-Za-z_][\w.@\-]*|\*):(?P<val>\S+)")
# What both entry patterns need: a port, two more fields and a value after it.
_PGPASS_SHAPE = re.compile(r":(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:\S")
_PGPASS = re.compile(r"[ \t]*(?:[A-Za-z0-9_.\-]+|\*|\[[0-9a-fA-F:]+\]):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(?P<val>[^\s]+)[ \t]*")


def find_credential_files(text: str, low: str, starts: list[int] | None = None) -> Iterator[Span]:
    """`.netrc` lines (`machine h login u password p`) and `.pgpass` lines (`h:port:db:user:pw`)
    (`starts`: where _NETRC_WORDS start in `low`, when already found)."""
    if "password" in low:
        for m in find_anchored(_NETRC, low, _NETRC_WORDS, starts):
            group = "val" if m.group("val") else "alone"
            if group == "alone" and low[low.rfind("\n", 0, m.start()) + 1 : m.start()].strip():
                continue  # `password X` must start its line
            # (Punctuation after it is the sentence's: "… `password p`)" in a docstring.)
            value = text[m.start(group) : m.end(group)]
            value = value if value.startswith('"') else value.rstrip(".,;:!?)`'\"")
            if group == "val" and len(value) >= 3 and not is_placeholder(value) and not value.startswith(("$", "[REDACTED")) or password_like(value):
                yield m.start(group), m.start(group) + len(value), "netrc_password"
    if not _PGPASS_SHAPE.search(text):  # (`10:51:59 INFO`: a time has no fields after it)
        return
    seen = -1
    for port in _PGPASS_PORT.finditer(text):
        # A line of its own, or a word of a sentence whose host reads as one (`db.internal`,
        # `localhost`): `2001:658:22a:cafe:200::1` is an IPv6 address, not an entry.
        line_start = text.rfind("\n", 0, port.start()) + 1
        line_end = text.find("\n", port.end())
        line_end = len(text) if line_end < 0 else line_end
        word_start = max(text.rfind(c, line_start, port.start()) for c in " \t\"'`") + 1
        word_start = max(word_start, line_start)
        if word_start == seen:
            continue
        seen = word_start
        m = _PGPASS.fullmatch(text, line_start, line_end)
        if not m:  # (a word of a sentence, or a line's first word with words after it)
            word_end = min((i for i in (text.find(c, port.end(), line_end) for c in " \t\"'`") if i >= 0), default=line_end)
            m = _PGPASS_WORD.fullmatch(text, word_start, word_end)
        if not m or _MAC.match(text, m.start()) or is_placeholder(m.group("val")) or m.group("val").startswith(("$", "[REDACTED")):
            continue
        if re.fullmatch(r"[0-9a-fA-F:.]+", m.group("val")) and (":" in m.group("val") or len(m.group("val")) <= 4):
            continue  # `0:0:0:0:0:0:0:1`, `scsi-0:0:1:0`: an address, no password
        yield m.start("val"), m.end("val"), "pgpass_password"


# Between two pieces of a JWT: the dot with spaces round it, a string closed and reopened
# (`"…" +\n "…"`, `\n` escapes), or a line break where the token was wrapped.
_JWT_JOIN = re.compile(r"[ \t]*(?:[\"'`][ \t]*\+?[ \t]*(?:\\n)?[ \t]*(?:\r?\n[ \t]*)?\+?[ \t]*[\"'`]|\\n|\r?\n)[ \t]*|[ \t]+")
_JWT_PIECE = re.compile(r"[A-Za-z0-9_\-.]+")
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")


def find_wrapped_jwts(text: str) -> Iterator[Span]:
    """JWTs written in pieces: wrapped at 76 columns, spaced round their dots, concatenated
    from strings. (One in a piece is a known format, formats.tsv's.)"""
    at = text.find("eyJ")
    while at >= 0:
        compact, end, pos, joined = [], at, at, False
        while True:
            piece = _JWT_PIECE.match(text, pos)
            if not piece:
                break
            compact.append(piece.group())
            end = pos = piece.end()
            join = _JWT_JOIN.match(text, pos)
            if not join or not _JWT_PIECE.match(text, join.end()):
                break
            gap = join.group()
            line = text[text.rfind("\n", 0, pos) + 1 : pos].lstrip(" \t\"'`+")
            # A bare line break or space joins only a wrapped line or a spaced dot.
            if not any(c in gap for c in "\"'`\\") and not ("\n" in gap and len(line) >= 60 or "\n" not in gap and "." in (text[pos - 1], text[join.end()])):
                break
            joined, pos = True, join.end()
        token = "".join(compact)
        if joined and _JWT.match(token):
            yield at, end, "jwt"
        at = text.find("eyJ", max(end, at + 3))
