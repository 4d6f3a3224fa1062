"""Credentials in places without an assignment operator, and sentences in other languages.

Each value is random (fixed seed) and placed the way code, config and people write it; each
place has a near miss of the same syntax that holds no secret and must survive unchanged.
"""

from __future__ import annotations

import random
import string

import pytest

from daemon.scrub import redact

_rng = random.Random("places")


def _pw() -> str:
    while True:
        value = "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(_rng.randint(10, 18)))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


PLACES = [
    "define('DB_PASSWORD', '{v}');",
    'props.setProperty("mail.smtp.password", "{v}");',
    '<add key="ClearTextPassword" value="{v}" />',
    '<property name="password" value="{v}"/>',
    'conn = pymysql.connect("db.internal", "app", "{v}", "shop")',
    '$db = mysqli_connect("localhost", "root", "{v}", "shop");',
    'new NetworkCredential("svc-deploy", "{v}")',
    'ftp.login("backup", "{v}")',
    'user.setPassword("{v}");',
    'dsn := "app:{v}@tcp(10.0.0.5:3306)/shop?parseTime=true"',
    "sqlplus scott/{v}@//db.internal:1521/ORCL",
    "sqlplus -s system/{v}@PRODDB",
    "Driver={{ODBC Driver 18 for SQL Server}};Server=db;UID=sa;PWD={{{v}}};",
    "az login --service-principal -u 0a3e5758-d349-4dfd-8232-a521aa7adc4d -p {v}{v} --tenant example",
    "Set-Cookie: PHPSESSID={v}{v}; path=/; HttpOnly",
    "VPN — Şifre {v}{v}",
    "el password es {v}",
    "{v} is the password for the staging db",
    "use {v} as the password",
    "wifi password {v}",
    "新密码{v}",
    "sessionid={v}{v}",
    'curl -b "sessionid={v}{v}" https://app.example.com/api',
    "pw for the staging box: {v}",
    "TOTP secret for admin: JBSWY3DPEHPK3PXP{v}",
    "Cookie: connect.sid=s%3A{v}{v}.{v}{v}",
    # Sentences, in the languages of the lexicon.
    "das Passwort ist {v}",
    "Das neue Kennwort lautet {v}.",
    "le mot de passe est {v}",
    "la contraseña de la base de datos es {v}",
    "a senha do servidor é {v}",
    "la password del database è {v}",
    "het wachtwoord is {v}",
    "hasło do bazy to {v}",
    "пароль от базы: {v}",
    "veritabanı şifresi {v} olarak ayarlandı",
    "数据库密码是{v}，别外传",
    "パスワードは {v} です",
    "비밀번호는 {v} 입니다",
]
NEAR_MISSES = [
    "define('WP_DEBUG', true);",
    'props.setProperty("password", "${db.password}");',
    '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
    '<add key="Timeout" value="30" />',
    "conn = pymysql.connect(host, user, password, db)",
    'mysqli_connect("localhost", "root", $password, "shop");',
    'ftp.login("backup", os.environ["FTP_PASSWORD"])',
    '__all__ = ("Context", "ContextVar", "Token", "copy_context")',
    "uses: actions/checkout@v4 and docker/build-push-action@v5",
    "sqlplus / as sysdba",
    "das Passwort ist falsch",
    "le mot de passe est trop court",
    "la contraseña es obligatoria",
    "密码是必填项",
    "パスワードは8文字以上です",
    "비밀번호는 필수입니다",
    "Set-Cookie: lang=en-US; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT; HttpOnly",
    "Cache saved with key: node-cache-Linux-x64-npm-ecc5a2548dbca798a16043caece50b010ef83367439bca5c9827169baa7daa9e",
    "db: migrate password hashes to argon2id",
    "a password base64-encoded by itself",
    "Author: Seed maintainers <maintainers@users.noreply.a-seed-eb950d00.example>",
    "session_id = 7227c724-fbdd-d22d-ba03-2a3168c0be80",
    'session_id: "ses_dd43a8927ffeobDTG4q0T2CLlw"',  # a note's own frontmatter, as the Cognee sink sends it
    "the password field is required",
    "see the README key: CONTRIBUTINGGUIDELINES",
    "the key ring has four keys: home work shed car",
]


@pytest.mark.parametrize("place", PLACES)
def test_a_credential_in_this_place_is_redacted(place: str) -> None:
    value = _pw()
    text = place.format(v=value)
    out = redact(text)
    assert value not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_the_same_syntax_without_a_secret_survives(text: str) -> None:
    assert redact(text) == text


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


def test_base64_that_decodes_to_a_secret_is_redacted() -> None:
    import json

    pw = _pw()
    cases = [
        "data:\n  DATABASE_URL: " + _b64(f"postgres://app:{pw}@db.internal:5432/app") + "\n",
        "  .dockerconfigjson: " + _b64(json.dumps({"auths": {"ghcr.io": {"auth": _b64(f"ci:{pw}")}}})),
        "  credentials: " + _b64(f"deploy:{pw}"),
        "echo " + _b64(f"export DB_PASSWORD={pw}") + " | base64 -d | sh",
    ]
    for text in cases:
        encoded = text.split(": ")[-1].split()[0] if ": " in text else text.split()[1]
        out = redact(text)
        assert encoded not in out, out


def test_base64_of_ordinary_text_or_a_certificate_survives() -> None:
    cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUK1\n-----END CERTIFICATE-----"
    for text in ("  ca.crt: " + _b64(cert), "  greeting: " + _b64("hello world, this is fine"), "  user: " + _b64("deploy")):
        assert redact(text) == text


URL_SECRETS = [
    ("https://api.weather.example/v2/{hex}/forecast", "hex"),
    ("https://example.com/hooks/{tok}", "tok"),
    ("curl 'https://api.openweathermap.org/data/2.5/weather?appid={hex}&q=London'", "hex"),
    ("https://maker.ifttt.com/trigger/door/with/key/{tok}", "tok"),
    ("https://bucket.s3.amazonaws.com/file.pdf?X-Amz-Signature={hex}{hex}", "hex"),
]
URL_NEAR_MISSES = [
    "https://docs.google.com/document/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456789AbCdEf/edit",
    "https://github.com/org/repo/commit/9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a",
    "https://files.pythonhosted.org/packages/3f/2a/9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c9d8e7f6a5b4c/pkg-1.0.tar.gz",
    "https://example.com/blog/how-to-rotate-keys-in-2024",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
    "https://cdn.example.com/static/js/main.3f2a1b0c.chunk.js",
    "https://api.example.com/v1/users/12345/orders?page=2&per_page=50",
]


@pytest.mark.parametrize("template,shape", URL_SECRETS)
def test_a_key_in_a_url_path_or_query_is_redacted(template: str, shape: str) -> None:
    hexes = "".join(_rng.choice("0123456789abcdef") for _ in range(32))
    tok = _pw() + _pw()
    text = template.format(hex=hexes, tok=tok)
    out = redact(text)
    assert (hexes if shape == "hex" else tok) not in out, out


@pytest.mark.parametrize("text", URL_NEAR_MISSES)
def test_ids_slugs_digests_and_routes_in_urls_survive(text: str) -> None:
    assert redact(text) == text


_H = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
_P = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYWRtaW4iOnRydWUsImlhdCI6MTUxNjIzOTAyMn0"


@pytest.mark.parametrize("wrapping", ["wrapped", "spaced", "concatenated"])
def test_a_jwt_in_pieces_is_redacted_whole(wrapping: str) -> None:
    sig = "".join(_rng.choice(string.ascii_letters + string.digits + "_-") for _ in range(342))
    jwt = f"{_H}.{_P}.{sig}"
    text = {
        "wrapped": "\n".join(jwt[i : i + 76] for i in range(0, len(jwt), 76)),
        "spaced": f"{_H}. {_P} . {sig}",
        "concatenated": f'token = "{_H}." +\n    "{_P}." +\n    "{sig}"',
    }[wrapping]
    out = redact(text)
    assert _P[8:40] not in out and sig[100:140] not in out, out


def test_a_key_block_quoted_or_numbered_is_redacted() -> None:
    body = ["".join(_rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(64)) for _ in range(4)]
    numbered = "1  -----BEGIN RSA PRIVATE KEY-----\n" + "".join(f"{i + 2}  {line}\n" for i, line in enumerate(body)) + "6  -----END RSA PRIVATE KEY-----"
    quoted = 'key = "-----BEGIN PRIVATE KEY-----\\n" +\n' + "".join(f'  "{line}\\n" +\n' for line in body) + '  "-----END PRIVATE KEY-----\\n"'
    for text in (numbered, quoted):
        out = redact(text)
        assert not any(line in out for line in body), out


def test_a_setup_key_written_in_groups_is_redacted_whole() -> None:
    groups = " ".join("".join(_rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(4)) for _ in range(8))
    out = redact(f"Your setup key: {groups}")
    assert not any(group in out for group in groups.split()), out
