"""Secret patterns: redact() for everything memoryd writes, looks_secret() for the guard.

Pure functions over strings. Redactions stay visible as `[REDACTED:kind]` so a reader
knows something was there. This is defence in depth, not a complete DLP system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    # Lower-case substrings one of which every match contains: a cheap test that lets
    # most text skip the regex entirely (the scrubber runs on everything written).
    triggers: tuple[str, ...]
    # Which group holds the secret; 0 = the whole match. Other text in the match is kept.
    group: int = 0


def _rule(kind: str, triggers: tuple[str, ...], regex: str, group: int = 0) -> Rule:
    return Rule(kind, re.compile(regex), triggers, group)


# Secret-ish value: long enough and not a placeholder word.
_VALUE = r"[^\s'\"`,;]{6,}"
_ASSIGN_KEYS = (
    r"password|passwd|pwd|secret|client_secret|token|access_token|refresh_token|auth_token"
    r"|api_key|apikey|api-key|private_key|secret_key|access_key|aws_secret_access_key"
)

# Order matters: specific provider formats first, generic assignments last.
RULES: tuple[Rule, ...] = (
    _rule(
        "private_key",
        ("private key",),
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _rule("anthropic_key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    _rule("openai_key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _rule("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    _rule("github_token", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{30,}"),
    _rule("slack_token", ("xox",), r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    _rule("stripe_key", ("_live_", "_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _rule("aws_access_key_id", ("akia", "asia", "abia", "acca"), r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    _rule("google_api_key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    _rule("huggingface_token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    # Azure storage / service bus connection strings and SAS tokens.
    _rule("azure_key", ("accountkey=", "sharedaccesskey="), r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})", 1),
    _rule("azure_sas", ("sig=",), r"(?i)[?&]sig=([A-Za-z0-9%+/=]{20,})", 1),
    # `mysql -pSECRET` / `mysqldump … -pSECRET`: the password glued to the flag.
    _rule("cli_password", ("mysql", "mariadb"), r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p([^\s'\"]{4,})", 1),
    _rule("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _rule("auth_header", ("bearer", "basic", "token"), r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=\-]{16,})", 1),
    _rule("url_credentials", ("://",), r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"]+:([^\s@/'\"]+)@", 1),
    # AWS secret keys: 40 base64-ish chars, only when named (a bare one is indistinguishable).
    _rule(
        "aws_secret_key",
        ("aws",),
        r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})",
        1,
    ),
    # KEY=value / "key": "value" / key: value (env, JSON, YAML). The key may carry a
    # prefix (OPENAI_API_KEY, DB_PASSWORD), hence the [\w.-]* before it.
    _rule(
        "assignment",
        ("pass", "pwd", "secret", "token", "key"),
        rf"(?i)\b[\w.-]*(?:{_ASSIGN_KEYS})[\"']?\s*(?::|=|:=)\s*[\"']?({_VALUE})",
        1,
    ),
)

# Values that name a secret without being one: env references, placeholders, masks.
_HARMLESS = re.compile(
    r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\*+|x+|\.\.\.|null|none|true|false|"
    r"changeme|redacted|\[REDACTED[^\]]*\]?|os\.environ.*|process\.env.*|getenv.*|env\(.*)$",
    re.IGNORECASE,
)


def _is_placeholder(value: str) -> bool:
    value = value.strip("'\"`")
    return bool(_HARMLESS.match(value)) or value.startswith("[REDACTED")


# One scan finds which triggers occur; only rules with a trigger present run.
_TRIGGERS = re.compile("|".join(sorted({re.escape(t) for r in RULES for t in r.triggers}, key=len, reverse=True)))


def _candidate_rules(text: str) -> list[Rule]:
    found = set(_TRIGGERS.findall(text.lower()))
    if not found:
        return []
    return [rule for rule in RULES if found.intersection(rule.triggers)]


def redact(text: str) -> str:
    """Return `text` with every secret replaced by `[REDACTED:kind]`."""
    for rule in _candidate_rules(text):
        text = rule.pattern.sub(lambda m, r=rule: _replace(m, r), text)
    return text


def _replace(match: re.Match[str], rule: Rule) -> str:
    secret = match.group(rule.group)
    if rule.group and _is_placeholder(secret):
        return match.group(0)
    marker = f"[REDACTED:{rule.kind}]"
    if rule.group == 0:
        return marker
    start, end = match.span(rule.group)
    base = match.start(0)
    whole = match.group(0)
    return whole[: start - base] + marker + whole[end - base :]


def find_secrets(text: str) -> list[str]:
    """Return the kinds of secret found in `text` (empty when clean)."""
    kinds = []
    for rule in _candidate_rules(text):
        for match in rule.pattern.finditer(text):
            if rule.group and _is_placeholder(match.group(rule.group)):
                continue
            kinds.append(rule.kind)
            break
    return kinds


def looks_secret(text: str) -> bool:
    """True when `text` holds something that looks like a credential."""
    return bool(find_secrets(text))
