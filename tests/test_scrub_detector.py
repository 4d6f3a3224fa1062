"""The scrubber as a detector, not a list: credentials of formats it has never seen, bound
to the contexts people write them in, are caught; real code and prose with no credential
come out untouched."""

from __future__ import annotations

import base64
import random
import string
import sysconfig
from pathlib import Path

import pytest

from daemon.scrub import find_secrets, redact

_rng = random.Random(17)
ALNUM = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = ALNUM) -> str:
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet != ALNUM or (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
            return value


# Shapes of generated credentials, none with a prefix the scrubber lists.
SHAPES = {
    "base62-24": lambda: _rand(24),
    "base62-40": lambda: _rand(40),
    "urlsafe-43": lambda: _rand(43, ALNUM + "_-"),
    "hex-32": lambda: _rand(32, "0123456789abcdef"),
    "hex-64": lambda: _rand(64, "0123456789abcdef"),
    "base64-32-bytes": lambda: base64.b64encode(bytes(_rng.randrange(256) for _ in range(32))).decode(),
    "base36-30": lambda: _rand(30, string.ascii_lowercase + string.digits),
    "base32-52": lambda: _rand(52, "abcdefghijklmnopqrstuvwxyz234567"),
    "vendor-prefix": lambda: f"zq{_rng.choice('abcdefgh')}_live_{_rand(32)}",
    "dotted": lambda: f"{_rand(12)}.{_rand(30)}",
    "uuid": lambda: "-".join(_rand(n, "0123456789abcdef") for n in (8, 4, 4, 4, 12)),
}
# Contexts a credential is written in; `{v}` is the value, `{N}` a vendor's name.
CONTEXTS = [
    "{N}_API_KEY={v}",
    "export {N}_TOKEN={v}",
    '{{"{n}ApiKey": "{v}"}}',
    "{n}_secret: {v}",
    "{n}:\n  client_secret: '{v}'",
    '[{n}]\ntoken = "{v}"',
    'client = {N}Client(api_key="{v}")',
    "{n} --token {v} deploy",
    "{n} login --password={v}",
    "curl -H 'Authorization: Bearer {v}' https://api.{n}.io",
    "curl -H 'X-{N}-Key: {v}' https://api.{n}.io",
    "https://api.{n}.io/v1/items?access_token={v}",
    "the {n} token is {v}",
    "set {N}_PASSWORD to {v} in the env file",
    "https://bot:{v}@{n}.example.com/hook",
]


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for shape, make in SHAPES.items():
        for i, context in enumerate(CONTEXTS):
            vendor = _rand(6, string.ascii_lowercase)
            value = make()
            out.append((f"{shape}-{i}", context.format(v=value, n=vendor, N=vendor.upper()), value))
    return out


@pytest.mark.parametrize("name,text,value", _cases(), ids=[c[0] for c in _cases()])
def test_an_unseen_format_in_a_keyword_context_is_caught(name, text, value):
    out = redact(text)
    assert value not in out, out
    assert find_secrets(text)


@pytest.mark.parametrize("shape", ["base62-24", "base62-40", "urlsafe-43", "base64-32-bytes", "vendor-prefix"])
def test_a_random_token_with_no_name_at_all_is_caught(shape):
    value = SHAPES[shape]()
    out = redact(f"then it printed {value} and exited")
    assert value not in out


ORDINARY = [
    "api_key=api_key", "token = tokens[i]", "password: string;", "pwd = os.getcwd()", "secrets.token_urlsafe(32)",
    "pip-24.0.dist-info/RECORD,sha256=Q2mP7c1XlU8JdLk3sFq0ZrTbVw4yN9hGxA6eK5oIuCs,1234",
    '"Value": "0123456789abcdef0123456789abcdef"', "docker run -u 1000:1000 alpine", "if is_encrypted: password is None",
    "token: str", "self.api_key = api_key", "password = getpass.getpass()", "key = self._make_key(args)",
    "${{ secrets.GITHUB_TOKEN }}", "password: ${{ secrets.DB_PASSWORD }}", "export TOKEN=$(gh auth token)",
    '"integrity": "sha512-3kfB0YJ5i8bA6dW9PGq3vJ2mTc8XzR1hN5uLsKoE7yQwVd4FpZg0aHtMxC6nIeUr2lS9jOb1fDkW7cYvA5mN3Q=="',
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "password_file = /etc/app/password.txt", "token_type = 'bearer'", "PASSWORD_MIN_LENGTH = 12",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@host",
    "ssh -p 2222 host", "def check(password: Optional[str] = None):", "const token = req.headers.authorization;",
    "session ses_dd43a8927ffeobDTG4q0T2CLlw, message msg_dd43a8927ffeobDTG4q0T2CLlx",
    "test_password_reset_with_expired_token_returns_400", "TLS_AES_128_GCM_SHA256", "HAVE_GCC_ASM_FOR_X64",
    "the secret is in the vault", "the key is 42 characters long", "password is_encrypted flag",
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/",
    "Subject: =?utf-8?b?w6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6k=?=",
    "see https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
    "password: !vault |", "wget --ask-password https://example.com",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_and_prose_survive(text):
    assert redact(text) == text


def _stdlib_sample() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for pkg in ("email", "http", "urllib", "json", "logging", "asyncio") for p in (root / pkg).glob("*.py"))


def test_the_standard_library_is_left_alone():
    """Real code with no credential: at most one redaction per MB (the acceptance bar)."""
    size = redactions = 0
    for path in _stdlib_sample():
        text = path.read_text(encoding="utf-8")
        size += len(text.encode())
        redactions += redact(text).count("[REDACTED:")
    assert size > 500_000
    assert redactions <= size / 1e6
