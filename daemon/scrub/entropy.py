"""High-entropy tokens anywhere: a generated secret of a format nobody listed.

A token is a run of base64/url-safe characters long enough to be a key; it counts when its
shape is random (see shape.looks_random) and it is not one of the random-looking things
that are not secrets: hex digests and commit ids, UUIDs, `sha256=`/`integrity` values,
base64 data URIs and blobs, SSH public keys, base64 that decodes to text, URL paths.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from daemon.scrub.shape import PUBLIC_PREFIXES, looks_random

Span = tuple[int, int, str]

# (21 is the length of a nanoid, the default id of many JavaScript tools: Next.js build ids.)
MIN_LEN = 22
# (The guard after the first character lets the engine skip ahead to a token character.)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-](?<![A-Za-z0-9+/=_\-].)[A-Za-z0-9+/_\-]{%d,}={0,2}(?![A-Za-z0-9+/=_\-])" % (MIN_LEN - 1))
_DIGIT = re.compile(r"[0-9]")
# Words right before a token that say it is a digest, a public key or encoded data.
_NOT_SECRET_BEFORE = re.compile(
    r"(?i)(?:\?b\?|(?<![A-Za-z])(?:sha(?:1|224|256|384|512)?|md5|blake2[bs]?|h1|integrity|digest|hash|checksum|etag|nonce|"
    r"base64,|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp[0-9]+|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com|"
    r"commit|revision|rev|oid|blob|tree|object|fingerprint|salt|iv|uuid|guid|id))[\"']?[ \t]*[:=\-~]?[ \t]*[\"'(]?$"
)
# A name that ends in a digest's word (`CodeSha256`, `content_md5`, `fileHash`), and an AWS
# ARN's resource part (`arn:aws:dms:us-east-1:123456789012:endpoint:<id>`).
_DIGEST_NAME_BEFORE = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5|hash|digest|checksum|fingerprint)[\"']?[ \t]*[:=][ \t]*[\"']?$")
_ARN_BEFORE = re.compile(r"arn:aws[\w\-]*:[^\s\"']*[:/]$")
# A name that ends in `Id`/`ID`/`_id` (`jobId`, `MultipartUploadId`, `CLIENT_ID: Final =`):
# the value is an id of something, not a credential (a session's id is one, so it is not
# let off here).
_ID_NAME_BEFORE = re.compile(
    r"(?:(?<![Ss]ession)(?<![Ss]ecret)(?<=[A-Za-z0-9])(?:Id|ID|Ids|IDs)|(?<![Ss]ession)(?<!SESSION)(?<![Ss]ecret)(?<!SECRET)[_\-.](?:id|ids|ID|IDs))"
    r"[\"']?(?:[ \t]*:[ \t]*[A-Za-z_][\w\[\]., |]*?)?[ \t]*[:=][ \t]*[\"']?[ \t]*$"
)
# Base64 of a file's magic bytes: gzip, zip, PNG, JPEG, GIF, PDF, bzip2, xz, zstd, WebAssembly.
_DATA_PREFIXES = ("H4sI", "UEsDB", "iVBORw0KGgo", "/9j/", "R0lGOD", "JVBERi0", "QlpoO", "/Td6WFo", "KLUv/", "AGFzbQ")
# A hexadecimal literal, float or not (`0x6487ed5110b460p-53`, `0xDEADBEEF00000000`).
_HEX_LITERAL = re.compile(r"0[xX][0-9a-fA-F_]*\.?[0-9a-fA-F_]*(?:[pP][+\-]?[0-9]+)?")
# Hex (or a UUID) behind a vendor's prefix that says secret or live: `zrb_live_<hex>`,
# `acme-sk-<uuid>`. (Hex alone is a digest or an id; `pk`, publishable, is left out.)
_PREFIXED_HEX = re.compile(
    r"[A-Za-z]{1,12}[_\-](?:[A-Za-z]{1,8}[_\-])?(?<=[_\-])(?:live|prod|production|sk|rk|secret|sec|key|token|tok|api|pat)[_\-]"
    r"(?:[0-9a-f]{32,}|[0-9A-F]{32,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)
_HASHED_HOST = re.compile(r"\|1\|(?:[A-Za-z0-9+/]+=*\|)?$")
_AWS_WORDS = ("aws", "akia", "asia", "secret access key")


def _decodes_to_text(token: str) -> bool:
    """True when `token` is base64 of printable text (an encoded sentence, JSON, a certificate
    field), which a generated secret is not. A token cut from a longer blob may start at any
    of four alignments, so each is tried."""
    altchars = b"-_" if ("-" in token or "_" in token) else None
    for skip in range(4):
        body = token[skip:]
        body = body[: len(body) - len(body) % 4]
        try:
            raw = base64.b64decode(body, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(raw) < 12:
            continue
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            # A MIME encoded word in Latin-1 (`=?iso-8859-1?b?…`): mostly ASCII text.
            decoded = raw.decode("latin-1")
            if sum(1 for c in decoded if " " <= c <= "~") < 0.8 * len(decoded):
                continue
        if sum(1 for c in decoded if c.isprintable() or c in "\t\r\n") / len(decoded) > 0.95:
            return True
    return False


# A name that starts its line and is given a value: `PracticalPy31520261027 = "…"`.
_NAME_ASSIGNED = re.compile(r"[ \t]*(?::[^=\n]*)?=(?!=)")
_PATH_WORD = re.compile(r"[a-z]{3,}(?:[\-_][a-z]+)*")


def _random_core(token: str, padded: bool = False) -> bool:
    """Judge a token by its parts: `TLS_AES_128_GCM_SHA256`, `N14x509_object_st4` or
    `chacha20poly1305_encrypt` are names made of short pieces; a path is judged segment by
    segment; a generated token has a long random stretch even when a prefix (`sk_live_`) or
    a url-safe `-`/`_` splits it. (Base64 with `=` padding is no path.)"""
    if "/" in token and "+" not in token and not padded:
        parts = token.split("/")
        if len(parts) >= 3 and any(_PATH_WORD.fullmatch(part) for part in parts):
            return False  # `/111122223333/vaults/my-vault/archives/<id>`: an id in a path
        return any(_random_core(part) for part in parts if len(part) >= MIN_LEN)
    if "_" in token or "-" in token:
        parts = re.split(r"[_\-]", token)
        longest = max(parts, key=len)
        if len(longest) < 20 and all(part.isalpha() for part in parts if part is not longest):
            return False  # `chacha20poly1305_encrypt`: a name with a number in one of its words
        return looks_random(longest, 16) and looks_random(token, MIN_LEN)
    return looks_random(token, MIN_LEN)


def _in_blob(text: str, start: int, end: int) -> bool:
    """True when the token fills its line and a neighbouring line is another such run: a
    base64 blob (a certificate, an image, a test vector), not a key someone pasted."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if end - start < 40 or (line_end - line_start) - (end - start) > 12:
        return False
    for a, b in ((text.rfind("\n", 0, max(0, line_start - 1)) + 1, line_start - 1), (line_end + 1, text.find("\n", line_end + 1))):
        if a < 0 or b < 0 and a >= len(text):
            continue
        neighbour = text[a : b if b >= 0 else len(text)].strip().strip("\"',\\n")
        if len(neighbour) >= 40 and re.fullmatch(r"[A-Za-z0-9+/=_\-]+", neighbour):
            return True
    return False


def _in_url_path(text: str, start: int, token: str) -> bool:
    """Inside a URL (no space since its scheme), in its host (`gdrive://<folder id>/`) or past
    it in its path (`scielo.br/j/pope/a/<id>/`), not in its query or userinfo."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    after = text[start + len(token) : start + len(token) + 1]
    if after == "@":  # userinfo: structure.py judges it
        return False
    if before.endswith("://") and (after in ("/", "") or "/" in token):  # `gdrive://<id>/`: a host
        return True
    scheme = before.rfind("://")
    if scheme < 0:
        return False
    rest = before[scheme + 3 :]
    if any(c in rest for c in " \t\"'<>`@") or "?" in rest or "=" in rest[rest.rfind("/") :]:
        return False
    return "/" in rest or "/" in token or (not rest and after in ("/", ""))


def find_tokens(text: str, runs: list[tuple[int, int]]) -> Iterator[Span]:
    """Random-looking tokens that are not digests, ids, public keys or encoded text (each
    inside one of `runs`, the text's scan.token_runs())."""
    spans = [m.span() for lo, hi in runs if hi - lo >= MIN_LEN for m in _TOKEN.finditer(text, lo, hi)]
    for start, end in spans:
        token = text[start:end]
        if token.startswith("//"):  # `https://<token>@host`: the slashes are the URL's
            start += len(token) - len(token.lstrip("/"))
            token = token.lstrip("/")
        core = token.rstrip("=").strip("-")  # (`--boundary--` of a MIME part, `--flag`)
        if not _DIGIT.search(core) or core.isdigit():  # most long runs in code: names, no digit
            continue
        # Cheapest first: a prefix, the shape, then the words before it.
        if core.startswith(PUBLIC_PREFIXES):
            continue
        if _PREFIXED_HEX.fullmatch(core):  # `zrb_live_<hex>`: hex behind a secret's prefix
            yield start, end, "high_entropy"
            continue
        if not looks_random(core, MIN_LEN) or not _random_core(core, token.endswith("=")):
            continue
        if core.startswith(_DATA_PREFIXES) or _HEX_LITERAL.fullmatch(core):
            continue
        if text.startswith(("(", "...", "…"), end) or "example" in core.lower() or _NAME_ASSIGNED.match(text, end) and not text[text.rfind("\n", 0, start) + 1 : start].strip():
            continue  # `_VarUInt64ByteSizeNoTag(size)`, `PracticalPy31520261027 = …`: names; `kFiKa1VZ…`: an example
        if any(p.search(text, max(0, start - 60), start) for p in (_NOT_SECRET_BEFORE, _ID_NAME_BEFORE, _DIGEST_NAME_BEFORE, _ARN_BEFORE)):
            continue
        if text[start - 1 : start] == "|" and _HASHED_HOST.search(text, max(0, start - 64), start):
            continue  # a known_hosts line's hashed host: `|1|<salt>|<hash>`
        if _in_url_path(text, start, token) or _in_blob(text, start, end) or _decodes_to_text(core):
            continue
        near = text[max(0, start - 160) : end + 80].lower()
        kind = "aws_secret_key" if len(token) == 40 and any(w in near for w in _AWS_WORDS) else "high_entropy"
        yield start, end, kind
