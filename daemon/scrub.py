"""Secret patterns: redact() for everything memoryd writes, find_secrets() for the guard.

Pure functions over strings. Redactions stay visible as `[REDACTED:kind]` so a reader
knows something was there. This is defence in depth, not a complete DLP system: each
rule is a documented token format or a credential named by its context, and each has a
near miss in tests/test_scrub.py that must stay untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
    # A last look at a match the regex alone cannot judge (its context, its shape).
    accept: Callable[[re.Match[str]], bool] | None = None


def _rule(
    kind: str,
    triggers: tuple[str, ...],
    regex: str,
    group: int = 0,
    accept: Callable[[re.Match[str]], bool] | None = None,
) -> Rule:
    return Rule(kind, re.compile(regex), triggers, group, accept)


# Secret-ish value: long enough and not a placeholder word.
_VALUE = r"[^\s'\"`,;]{6,}"
_ASSIGN_KEYS = (
    r"password|passwd|pwd|secret|client_secret|token|access_token|refresh_token|auth_token"
    r"|api_key|apikey|api-key|private_key|secret_key|access_key|aws_secret_access_key"
)
# The end of a token: not followed by another token character (`\b` fails after a `-`).
_END = r"(?![A-Za-z0-9_\-])"
_PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
# The DER start of a private key's base64 (PKCS#1/#8 RSA, SEC1 EC, OpenSSH): a body
# pasted without its BEGIN line still starts like this; a certificate does not.
_KEY_BODY_START = r"(?:MII[A-Za-z0-9+/]{3}IBA[AD]|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE|b3BlbnNzaC1rZXktdjE)"


def _aws_context(match: re.Match[str]) -> bool:
    """A 40-character base64 word is an AWS secret key only near AWS words, and only when
    it mixes cases and digits (a SHA-1 or a path does not)."""
    word = match.group(0)
    if not (re.search(r"[a-z]", word) and re.search(r"[A-Z]", word) and re.search(r"[0-9]", word)):
        return False
    text = match.string
    near = text[max(0, match.start() - 160) : match.end() + 80].lower()
    return "aws" in near or "akia" in near or "asia" in near or "secret access key" in near


def _password_like(match: re.Match[str]) -> bool:
    """"the password is X": X counts when it has a digit or a symbol, or is long; a plain
    word ("the password is stored in the vault") does not."""
    value = match.group(1)
    return len(value) >= 16 or bool(re.search(r"[0-9!@#$%^&*_+=~/\\|<>?-]", value))


# Order matters: specific provider formats first, generic assignments last.
RULES: tuple[Rule, ...] = (
    # -- private keys -----------------------------------------------------------------
    _rule(
        "private_key",
        ("private key",),
        rf"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:{_PEM_END}|\Z)",
    ),
    # A body whose BEGIN line was cut off: base64 lines that run into the END line…
    _rule("private_key", ("-----end",), rf"(?m)(?:^[ \t]*[A-Za-z0-9+/=]{{16,100}}[ \t]*\r?\n)+[ \t]*{_PEM_END}"),
    # …or that start like a DER/OpenSSH private key (escaped \n as in JSON included).
    _rule(
        "private_key",
        ("mii", "mhccaqee", "migkagebbd", "mihcagebbe", "b3blbnnzac1rzxktdje"),
        rf"\b{_KEY_BODY_START}[A-Za-z0-9+/=]{{16,}}(?:[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]{{4,}})*(?:\s*{_PEM_END})?",
    ),
    # -- model providers ----------------------------------------------------------------
    _rule("anthropic_key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    _rule("openai_key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}"),
    _rule("huggingface_token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    _rule("groq_key", ("gsk_",), rf"\bgsk_[A-Za-z0-9]{{48,}}{_END}"),
    _rule("xai_key", ("xai-",), rf"\bxai-[A-Za-z0-9]{{60,}}{_END}"),
    _rule("replicate_token", ("r8_",), rf"\br8_[A-Za-z0-9]{{37}}{_END}"),
    _rule("perplexity_key", ("pplx-",), rf"\bpplx-[A-Za-z0-9]{{40,}}{_END}"),
    _rule("google_api_key", ("aiza",), rf"\bAIza[0-9A-Za-z_\-]{{35}}{_END}"),
    _rule("google_oauth_secret", ("gocspx-",), rf"\bGOCSPX-[A-Za-z0-9_\-]{{28}}{_END}"),
    _rule("google_oauth_token", ("ya29.",), r"\bya29\.[A-Za-z0-9_\-]{20,}"),
    # -- code hosts and package registries ----------------------------------------------
    _rule("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    _rule("github_token", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{30,}"),
    _rule(
        "gitlab_token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glft-", "glimt-"),
        r"\bgl(?:pat|dt|rt|ptt|soat|cbt|ft|imt)-[A-Za-z0-9_\-]{20,}",
    ),
    _rule("npm_token", ("npm_",), rf"\bnpm_[A-Za-z0-9]{{36}}{_END}"),
    _rule("pypi_token", ("pypi-",), r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    _rule("rubygems_token", ("rubygems_",), rf"\brubygems_[0-9a-f]{{48}}{_END}"),
    _rule("docker_hub_token", ("dckr_pat_",), r"\bdckr_pat_[A-Za-z0-9_\-]{27,}"),
    # Docker's config.json: "auth": base64("user:password").
    _rule("docker_auth", ('"auth"',), r"\"auth\"\s*:\s*\"([A-Za-z0-9+/]{12,}={0,2})\"", 1),
    # -- chat and messaging -------------------------------------------------------------
    _rule("slack_token", ("xox",), r"\bxox[abprse]-[A-Za-z0-9-]{10,}"),
    _rule("slack_app_token", ("xapp-",), r"\bxapp-[0-9]-[A-Za-z0-9\-]{20,}"),
    _rule(
        "slack_webhook",
        ("hooks.slack.com",),
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{16,}",
    ),
    _rule(
        "discord_webhook",
        ("discord",),
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{20,}",
    ),
    _rule("telegram_bot_token", (":aa",), rf"(?<![0-9])[0-9]{{8,10}}:AA[A-Za-z0-9_\-]{{33}}{_END}"),
    # -- payments, mail, SaaS -----------------------------------------------------------
    _rule("stripe_key", ("_live_", "_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _rule("stripe_webhook_secret", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/]{24,}"),
    _rule("square_token", ("eaaa", "sq0atp-", "sq0csp-"), r"\b(?:EAAA[A-Za-z0-9_\-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,})"),
    _rule("shopify_token", ("shpat_", "shpss_", "shpca_", "shppa_"), rf"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{{32}}{_END}"),
    _rule("twilio_api_key", ("sk",), rf"\bSK[0-9a-fA-F]{{32}}{_END}"),
    _rule("sendgrid_key", ("sg.",), r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    _rule("mailgun_key", ("key-",), rf"\bkey-[0-9a-f]{{32}}{_END}"),
    _rule("mailchimp_key", ("-us",), rf"\b[0-9a-f]{{32}}-us[0-9]{{1,2}}{_END}"),
    _rule("atlassian_token", ("atatt3",), r"\bATATT3[A-Za-z0-9_\-=]{60,}"),
    _rule("linear_key", ("lin_api_",), rf"\blin_api_[A-Za-z0-9]{{40}}{_END}"),
    _rule("notion_token", ("secret_", "ntn_"), rf"\b(?:secret_[A-Za-z0-9]{{43}}|ntn_[A-Za-z0-9]{{40,}}){_END}"),
    _rule("postman_key", ("pmak-",), rf"\bPMAK-[0-9a-f]{{24}}-[0-9a-f]{{34}}{_END}"),
    _rule("newrelic_key", ("nrak-",), rf"\bNRAK-[A-Z0-9]{{27}}{_END}"),
    _rule("sentry_token", ("sntrys_", "sntryu_"), r"\bsntry[su]_[A-Za-z0-9+/=_.\-]{40,}"),
    # -- cloud and infrastructure -------------------------------------------------------
    _rule("aws_access_key_id", ("akia", "asia", "abia", "acca"), rf"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}{_END}"),
    _rule("digitalocean_token", ("_v1_",), rf"\bdo[por]_v1_[a-f0-9]{{64}}{_END}"),
    _rule("databricks_token", ("dapi",), rf"\bdapi[0-9a-f]{{32}}(?:-[0-9])?{_END}"),
    _rule("vault_token", ("hvs.", "hvb."), r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}"),
    _rule("terraform_token", (".atlasv1.",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}"),
    _rule("doppler_token", ("dp.",), r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    _rule("grafana_token", ("glsa_", "glc_"), r"\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})"),
    _rule("supabase_token", ("sbp_",), rf"\bsbp_[a-f0-9]{{40}}{_END}"),
    _rule("pulumi_token", ("pul-",), rf"\bpul-[a-f0-9]{{40}}{_END}"),
    _rule("planetscale_token", ("pscale_",), r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.\-]{32,}"),
    _rule("netlify_token", ("nfp_",), rf"\bnfp_[A-Za-z0-9]{{36,}}{_END}"),
    _rule("buildkite_token", ("bkua_",), rf"\bbkua_[a-f0-9]{{40}}{_END}"),
    _rule("onepassword_token", ("ops_eyj",), r"\bops_eyJ[A-Za-z0-9+/=_\-]{40,}"),
    _rule("age_secret_key", ("age-secret-key-1",), rf"\bAGE-SECRET-KEY-1[0-9A-Z]{{58}}{_END}"),
    # Azure storage / service bus connection strings and SAS tokens.
    _rule("azure_key", ("accountkey=", "sharedaccesskey="), r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})", 1),
    _rule("azure_sas", ("sig=",), r"(?i)[?&]sig=([A-Za-z0-9%+/=]{20,})", 1),
    # -- credentials named by their context ----------------------------------------------
    # `mysql -pSECRET` / `mysqldump … -pSECRET`: the password glued to the flag.
    _rule("cli_password", ("mysql", "mariadb"), r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p([^\s'\"]{4,})", 1),
    # `twine upload -p X`, `sshpass -p X`, `docker login -p X`: the password after the flag.
    _rule(
        "cli_password",
        ("twine", "sshpass", " login"),
        r"\b(?:twine|sshpass|(?:docker|podman|helm registry|buildah|skopeo) login)\b[^\n]*?\s-p\s*[\"']?([^\s'\"]{4,})",
        1,
    ),
    # `--password X`, `--token=X`, `--api-key X` (not --password-stdin, not --token-file).
    _rule(
        "cli_password",
        ("--pass", "--token", "--api-key", "--apikey", "--secret", "--auth-token"),
        r"(?i)--(?:password|passwd|token|api-key|apikey|secret|auth-token)(?:=|[ \t]+)[\"']?([^\s'\"]{6,})",
        1,
    ),
    # `curl -u user:password`, `--user user:password` (a lone user makes curl prompt). The
    # command word must start the command, and the flag belong to it: `https://… && docker
    # run -u 1000:1000` is a uid:gid, not a password.
    _rule(
        "basic_auth_credentials",
        ("-u", "--user"),
        r"(?<![\w/.:-])(?:curl|wget|http|https|xh)(?=\s)[^\n|;&]*?\s(?:-u\s*|--user[=\s]\s*)[\"']?[^\s:'\"]+:([^\s'\"`]+)",
        1,
    ),
    _rule("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _rule("auth_header", ("bearer", "basic", "token"), r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=\-]{16,})", 1),
    _rule("url_credentials", ("://",), r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"]+:([^\s@/'\"]+)@", 1),
    # AWS secret keys: 40 base64-ish chars when named, or bare near AWS words.
    _rule(
        "aws_secret_key",
        ("aws",),
        r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})",
        1,
    ),
    _rule("aws_secret_key", ("aws", "akia", "asia"), r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])", 0, _aws_context),
    # Prose: "the password is hunter2xyz", "passphrase was …".
    _rule(
        "password",
        ("pass",),
        r"(?i)\b(?:password|passphrase|passwd|passcode)\s+(?:is|was|will be|would be)\s*[:=]?\s*[\"'`]?"
        r"([^\s\"'`]*[^\s\"'`.,;:!?)\]])",
        1,
        _password_like,
    ),
    # KEY=value / "key": "value" / key: value (env, JSON, YAML). The key may carry a
    # prefix (OPENAI_API_KEY, DB_PASSWORD, //registry/:_authToken), hence the [\w.-]*.
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
    r"changeme|redacted|pass|password|passwd|pwd|secret|token|"
    r"\[REDACTED[^\]]*\]?|os\.environ.*|process\.env.*|getenv.*|env\(.*)$",
    re.IGNORECASE,
)


def _is_placeholder(value: str) -> bool:
    value = value.strip("'\"`")
    return bool(_HARMLESS.match(value)) or value.startswith("[REDACTED")


def _trie_pattern(words: set[str]) -> str:
    """A regex matching any of `words`, shaped as a trie so that each position of the text
    costs one branch per distinct next character, not one try per word."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


_TRIGGERS = {t for rule in RULES for t in rule.triggers}
# A lookahead finds a trigger at every position, overlapping ones included; at one
# position only the longest is reported, so the triggers inside it are added back.
_TRIGGER_SCAN = re.compile(f"(?=({_trie_pattern(_TRIGGERS)}))")
_INSIDE = {t: frozenset(u for u in _TRIGGERS if u in t) for t in _TRIGGERS}
# Trigger → positions in RULES of the rules it lets run (order matters when redacting).
_RULES_OF = {t: frozenset(i for i, rule in enumerate(RULES) if t in rule.triggers) for t in _TRIGGERS}


def _candidate_rules(text: str) -> list[Rule]:
    # One scan finds which triggers occur; only the rules with a trigger present run.
    found = set(_TRIGGER_SCAN.findall(text.lower()))
    if not found:
        return []
    present = set().union(*(_INSIDE[t] for t in found))
    return [RULES[i] for i in sorted(set().union(*(_RULES_OF[t] for t in present)))]


def _is_secret(match: re.Match[str], rule: Rule) -> bool:
    if rule.group and _is_placeholder(match.group(rule.group)):
        return False
    return rule.accept is None or rule.accept(match)


def redact(text: str) -> str:
    """Return `text` with every secret replaced by `[REDACTED:kind]`."""
    for rule in _candidate_rules(text):
        text = rule.pattern.sub(lambda m, r=rule: _replace(m, r), text)
    return text


def _replace(match: re.Match[str], rule: Rule) -> str:
    if not _is_secret(match, rule):
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
    kinds: list[str] = []
    for rule in _candidate_rules(text):
        if rule.kind not in kinds and any(_is_secret(m, rule) for m in rule.pattern.finditer(text)):
            kinds.append(rule.kind)
    return kinds


def looks_secret(text: str) -> bool:
    """True when `text` holds something that looks like a credential."""
    return bool(find_secrets(text))
