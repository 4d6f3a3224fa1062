"""Credentials inside a URL's path and query: `/hooks/<token>`, `api.host/v2/<key>/…`,
`?appid=<hex>`, a random path segment or query value.

The userinfo (`user:pw@`) is structure.py's. Here each path segment and query value is
judged by its shape and by the word before it (lexicon `all/secret_url.tsv`): after a `key`
word (`hooks`, `token`, `sig`, `appid`) any generated value counts, hex and UUIDs included;
after an `id` word (`/d/`, `/commit/`, `?v=`) none does; elsewhere only a value random by
shape beyond doubt, never hex, a slug, a version, a route or a file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from daemon import lexicon
from daemon.scrub.keywords import judge_name
from daemon.scrub.shape import is_hex, is_placeholder, looks_generated, looks_random

Span = tuple[int, int, str]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{1,15}$")
_URL_BODY = re.compile(r"[^\s\"'<>`\\|{}^\[\]]+")
_VERSION = re.compile(r"v[0-9]{1,2}(?:\.[0-9]+)?|[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TRAILING = ".,;:!?)]}*"
_FILE_TYPE = re.compile(r"\.(?:json|xml|txt|html?|csv|php|aspx?)$")


@lru_cache(maxsize=1)
def _roles() -> dict[str, str]:
    roles = {}
    for row in lexicon.rows("all", "secret_url"):
        if len(row) != 2 or row[1] not in ("key", "id"):
            raise lexicon.LexiconError(f"all/secret_url.tsv: {row!r}: expected a word and `key` or `id`")
        roles[row[0].lower()] = row[1]
    return roles


def _hexlike(value: str) -> bool:
    return is_hex(value.replace("-", ""))


def _keyed(value: str) -> bool:
    """A value after a `key` word: generated, hex and UUIDs included."""
    if len(value) < 16 or is_placeholder(value) or "%" in value:
        return False
    return (_hexlike(value) and len(value) >= 20) or looks_generated(value, 16, allow_hex=True, words=0.6, floor=0.7)


def _random(value: str, min_len: int = 24) -> bool:
    """A value with no word before it to vouch for it: random by shape beyond doubt, not
    hex, not a file name or a slug (`main.3f2a1b0c.js`, `how-to-x-9f8e7d`)."""
    if len(value) < min_len or "." in value or "%" in value or _hexlike(value) or is_placeholder(value):
        return False
    if "-" in value or "_" in value:
        parts = re.split(r"[\-_]", value)
        if sum(len(part) for part in parts if part.isalpha() and part.islower()) >= len(value) / 3:
            return False  # a slug: words joined by dashes
    return looks_random(value, min_len)


def find_url_secrets(text: str) -> Iterator[Span]:
    """Secret path segments and query values of every URL in `text`."""
    roles = _roles()
    at = text.find("://")
    while at >= 0:
        body = _URL_BODY.match(text, at + 3)
        scheme = _SCHEME.search(text, max(0, at - 16), at)
        if not body or not scheme:
            at = text.find("://", at + 3)
            continue
        start, end = body.span()
        while end > start and text[end - 1] in _TRAILING:
            end -= 1
        yield from _judge_url(text, start, end, roles)
        at = text.find("://", end)


def _judge_url(text: str, start: int, end: int, roles: dict[str, str]) -> Iterator[Span]:
    url = text[start:end]
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    path, query = url[:cut], url[cut + 1 :] if url[cut : cut + 1] == "?" else ""
    host, _, rest = path.partition("/")
    host = host.rpartition("@")[2].lower()
    api_host = host.startswith(("api.", "hooks.", "webhook.", "webhooks."))
    pos = start + len(host) + (len(path) - len(host) - len(rest))
    previous, keyed = "", False
    for i, segment in enumerate(rest.split("/")):
        role = roles.get(previous.lower())
        keyed = keyed or role == "key"  # (`/trigger/pipeline/<token>/run`: past a key word)
        stem = _FILE_TYPE.sub("", segment)  # (`/messages/<token>.json`)
        if stem and role != "id":
            if role == "key":
                secret = _keyed(stem)
            elif i == 0 and _hexlike(stem) and len(stem) >= 32:
                secret = True  # a capability URL: `https://hc-ping.com/<uuid>`
            elif _VERSION.fullmatch(previous) or (api_host and not previous) or keyed:
                secret = (_hexlike(stem) and len(stem) >= 32) or _random(stem, 20)
            else:
                secret = _random(stem)
            if secret:
                yield pos, pos + len(stem), "url_credentials"
        pos += len(segment) + 1
        previous = segment
    if not query:
        return
    pos = start + cut + 1
    for pair in query.split("&"):
        name, eq, value = pair.partition("=")
        value_start = pos + len(name) + 1
        pos += len(pair) + 1
        lname = name.lower()
        if not eq or not value or roles.get(lname) == "id" or lname.endswith(("id", "_id")) and roles.get(lname) != "key":
            continue
        if roles.get(lname) != "key" and judge_name(name):
            continue  # (`&password=`: keywords.py judges those)
        if _keyed(value) if roles.get(lname) == "key" else _random(value):
            yield value_start, value_start + len(value), "url_credentials"
