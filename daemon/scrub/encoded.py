"""Secrets wrapped in base64: decoded and scanned again, to a bounded depth.

A Kubernetes Secret's `data:` values, a Docker config's `auth`, a token pasted through
`base64 -w0`: what they decode to is a DSN with a password, a JSON config, a key block, a
JWT or `user:password`. A run of base64 characters that decodes to text is handed back to
the whole scrubber (`rescan`); when that finds a secret, the encoded run is one.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from daemon.scrub.shape import classes, password_like

Span = tuple[int, int, str]

MIN_LEN = 16  # 12 bytes: `user:passw0rd` and up
MAX_LEN = 16384  # (a longer blob is an image or an archive, not a pasted secret)
# (Standard or url-safe: decode() rejects a run that mixes the two alphabets.)
_B64 = re.compile(r"[A-Za-z0-9+/_\-](?<![A-Za-z0-9+/=_\-].)[A-Za-z0-9+/_\-]{%d,}={0,2}(?![A-Za-z0-9+/=_\-])" % (MIN_LEN - 1))
# Decoded `user:password`, what HTTP basic credentials and registry `auth` fields hold.
_USER_PASSWORD = re.compile(r"[\w.@+\-]{1,64}:(?P<pw>[^\s:]{6,128})")
_MIXED = re.compile(r"[0-9+/=]")
_WORD_OF_ONE = re.compile(r"[\x21-\x7e]{8,64}")
_TEXT_START = frozenset("IJKLMNOPQRSTUVWXYZabcdef")


def decode(token: str) -> str | None:
    """The text `token` is the base64 (standard or url-safe, padded or not) of, or None
    when it is not base64 or decodes to bytes that are not mostly printable text."""
    body = token.rstrip("=")
    if len(body) % 4 == 1:
        return None
    altchars = b"-_" if ("-" in body or "_" in body) else None
    if altchars and ("+" in body or "/" in body):
        return None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):  # (UnicodeDecodeError is a ValueError: binary)
        return None
    printable = sum(1 for c in decoded if c.isprintable() or c in "\t\r\n")
    return decoded if len(decoded) >= 8 and printable >= 0.95 * len(decoded) else None


def find_encoded(text: str, runs: list[tuple[int, int]], rescan: Callable[[str], list[str]]) -> Iterator[Span]:
    """Base64 runs (inside scan.token_runs()) whose decoded text holds a secret: what
    `rescan` finds in it (the kinds), `user:password`, or a password by itself."""
    for lo, hi in runs:
        if hi - lo < MIN_LEN or hi - lo > MAX_LEN:
            continue
        for m in _B64.finditer(text, lo, hi):
            token = m.group()
            # Base64 of text starts each 3 bytes with a printable character's top 6 bits (`I`
            # to `f`); code's long runs are names (`some_function_name`), with no digit or `+/=`.
            if token[0] not in _TEXT_START or token[4] not in _TEXT_START or not _MIXED.search(token) or token.isdigit():
                continue
            decoded = decode(token)
            if decoded is None:
                continue
            kinds = rescan(decoded)
            pair = _USER_PASSWORD.fullmatch(decoded.strip())
            if kinds:
                yield m.start(), m.end(), kinds[0]
            elif pair and password_like(pair.group("pw")):
                yield m.start(), m.end(), "basic_auth_credentials"
            elif _WORD_OF_ONE.fullmatch(decoded) and password_like(decoded) and classes(decoded) >= 3:
                yield m.start(), m.end(), "password"  # (a password encoded by itself: `echo … | base64 -d`)
