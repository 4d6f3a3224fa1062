"""The scrubber: table-driven, secrets out, ordinary text (SHAs, UUIDs, base64) intact."""

from __future__ import annotations

import base64

import pytest

from daemon.scrub import find_secrets, redact
from tests.secrets_catalogue import CATALOGUE, FORMATS

SECRETS = [
    ("openai_key", "key sk-proj-Ab3dEf5hIj7kLm9nOp1qRs3tUv5wXy7zAb9cDe1fGh3iJk here", "sk-proj-Ab3dEf5hIj7kLm9nOp1qRs3tUv5wXy7zAb9cDe1fGh3iJk"),
    ("openai_key", "OPENAI=sk-abcdefghijklmnopqrstuvwxyz0123", "sk-abcdefghijklmnopqrstuvwxyz0123"),
    ("anthropic_key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"),
    ("github_token", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("github_token", "gho_abcdefghijklmnopqrstuvwxyz0123456789 x", "gho_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("slack_token", "xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl"),
    ("stripe_key", "sk_live_abcdefghijklmnop1234", "sk_live_abcdefghijklmnop1234"),
    ("stripe_key", "rk_live_abcdefghijklmnop1234", "rk_live_abcdefghijklmnop1234"),
    ("aws_access_key_id", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("google_api_key", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAx"),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("auth_header", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),
    ("auth_header", "Authorization: Basic dXNlcjpwYXNzd29yZGxvbmc=", "dXNlcjpwYXNzd29yZGxvbmc="),
    ("url_credentials", "postgres://admin:s3cretpw@db.internal:5432/app", "s3cretpw"),
    ("assignment", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("assignment", '{"api_key": "abcdef123456"}', "abcdef123456"),
    ("assignment", "password: correcthorsebattery", "correcthorsebattery"),
    ("assignment", "client_secret = 'zyxwvu987654'", "zyxwvu987654"),
    ("assignment", "export GITLAB_TOKEN=glpat1234567890", "glpat1234567890"),
    ("huggingface_token", "HF token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH ok", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    ("azure_key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=Zm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg==;", "Zm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg=="),
    ("azure_sas", "https://x.blob.core.windows.net/c?sv=2022&sig=abcDEF123%2Bxyz456%3Dqrs789tuv", "abcDEF123%2Bxyz456%3Dqrs789tuv"),
    ("cli_password", "mysql -u root -pHunter2Secret -h db", "Hunter2Secret"),
]

CLEAN = [
    "commit 0123456789abcdef0123456789abcdef01234567",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    base64.b64encode(b"the quick brown fox jumps over the lazy dog").decode(),
    "export OPENAI_API_KEY=$OPENAI_API_KEY",
    "token = os.environ['TOKEN']",
    "password: ${DB_PASSWORD}",
    "read the token docs; a password policy applies",
    "OPENAI_API_KEY is read by client.py",
    "https://example.com/path?q=1",
    "sk-learn is a library; task-runner is a tool",
    "mkdir -p build && cp -p a b",
    "mysql -u root -p   # prompts for the password",
    "Reset the password, then log in again.",
    "the password is incorrect",
    "password policy: see docs/security.md",
    "the token was revoked",
    "/home/dev/src/webapp/config/secrets/credentials.example.yaml",
    "src/auth/token_refresh.py and tests/test_password_reset.py",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "git show 3f9a1c2b7d4e8f6a0b1c2d3e4f5a6b7c8d9e0f1a",
    "export AWS_PROFILE=dev; aws s3 ls s3://my-bucket/some/long/prefix/path/ok",
    "curl -H 'Authorization: Bearer ${TOKEN}' https://api.example.com",
    "docker login ghcr.io --password-stdin",
    "the API_KEY env var: OPENAI_API_KEY",
    "git clone https://github.com/acme/app && docker run -u 1000:1000 acme/app",
    "curl -sf https://example.com/health | docker run -u 1000:1000 alpine",
    "see https://docs.docker.com/engine/reference/run/#user for -u uid:gid",
    "the example is `curl -u user:pass https://example.com`, with your own values",
    "vllm serve --api-key\ndisable_thinking = true",
]


@pytest.mark.parametrize("kind,text,secret", SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)])
def test_secret_is_redacted_visibly(kind, text, secret):
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert kind in find_secrets(text)


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_text_survives(text):
    assert redact(text) == text
    assert not find_secrets(text)


def test_redaction_is_idempotent_and_keeps_context():
    text = "use OPENAI_API_KEY=sk-proj-Ab3dEf5hIj7kLm9nOp1qRs3tUv5wXy7zAb9cDe1fGh3iJk in client.py"
    once = redact(text)
    assert redact(once) == once
    assert once.startswith("use OPENAI_API_KEY=") and once.endswith(" in client.py")


def test_catalogue_is_broad_and_its_near_misses_share_nothing():
    assert len(FORMATS) >= 150
    for case in CATALOGUE:
        for other in CATALOGUE:
            for value in other.values:
                assert not any(value[i : i + 12] in case.near_miss for i in range(max(1, len(value) - 11)))


@pytest.mark.parametrize("case", CATALOGUE, ids=[f"{c.kind}-{i}" for i, c in enumerate(CATALOGUE)])
def test_catalogue_secret_is_redacted(case):
    out = redact(case.text)
    for value in case.values:
        assert value not in out
    assert f"[REDACTED:{case.kind}]" in out
    assert case.kind in find_secrets(case.text)
    assert redact(out) == out


@pytest.mark.parametrize("case", CATALOGUE, ids=[f"{c.kind}-{i}" for i, c in enumerate(CATALOGUE)])
def test_catalogue_near_miss_survives(case):
    assert redact(case.near_miss) == case.near_miss
    assert find_secrets(case.near_miss) == []


def test_near_misses_around_a_secret_survive_in_the_same_text():
    text = "request 550e8400-e29b-41d4-a716-446655440000 used AKIAZ3V7Q2K9M4N8P1R6 at src/app.py"
    assert redact(text) == "request 550e8400-e29b-41d4-a716-446655440000 used [REDACTED:aws_access_key_id] at src/app.py"
