"""Known credential formats: a prefix and the shape of what follows it.

The formats are public facts (providers document them; gitleaks, detect-secrets and
GitHub's secret-scanning partners list them). All of them are compiled into one regular
expression whose alternatives form a trie over the prefixes, so the text is scanned once,
in C, whatever the number of formats; the group that matched names the kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# The end of a token: not followed by another token character (`\b` fails after a `-`).
END = r"(?![A-Za-z0-9_\-])"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_B62 = "A-Za-z0-9"
_URLSAFE = "A-Za-z0-9_\\-"


@dataclass(frozen=True)
class Format:
    kind: str
    prefixes: tuple[str, ...]
    body: str  # what follows a prefix, a regex (the END guard is added unless it ends in `$`)
    end: bool = True


def F(kind: str, prefixes: str | tuple[str, ...], body: str, end: bool = True) -> Format:
    return Format(kind, (prefixes,) if isinstance(prefixes, str) else prefixes, body, end)


# fmt: off
FORMATS: tuple[Format, ...] = (
    # -- model providers
    F("anthropic_key", "sk-ant-", rf"[{_URLSAFE}]{{16,}}", end=False),
    F("openai_key", "sk-", rf"(?:proj-|svcacct-|admin-|or-v1-|None-)?[{_URLSAFE}]{{20,}}", end=False),
    F("openai_session_key", "sess-", rf"[{_B62}]{{40}}"),
    F("huggingface_token", ("hf_", "api_org_"), rf"[{_B62}]{{30,}}", end=False),
    F("groq_key", "gsk_", rf"[{_B62}]{{48,}}"),
    F("xai_key", "xai-", rf"[{_B62}]{{60,}}"),
    F("replicate_token", "r8_", rf"[{_B62}]{{37}}"),
    F("perplexity_key", "pplx-", rf"[{_B62}]{{40,}}"),
    F("langsmith_key", ("lsv2_pt_", "lsv2_sk_"), r"[0-9a-f]{32}_[0-9a-f]{10}"),
    F("pinecone_key", "pcsk_", rf"[{_B62}]{{4,8}}_[{_B62}]{{40,}}"),
    F("fireworks_key", "fw_", rf"[{_B62}]{{24,}}"),
    F("elevenlabs_key", "sk_", r"[0-9a-f]{48}"),
    F("nvidia_key", "nvapi-", rf"[{_URLSAFE}]{{60,}}"),
    F("google_api_key", "AIza", rf"[{_URLSAFE}]{{35}}"),
    F("google_oauth_secret", "GOCSPX-", rf"[{_URLSAFE}]{{28}}"),
    F("google_oauth_token", "ya29.", rf"[{_URLSAFE}]{{20,}}", end=False),
    # -- code hosts, CI and package registries
    F("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), rf"[{_B62}]{{30,}}", end=False),
    F("github_token", "github_pat_", rf"[{_B62}_]{{30,}}", end=False),
    F("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glft-", "glimt-", "glffct-", "glagent-", "gloas-"), rf"[{_URLSAFE}]{{20,}}", end=False),
    F("gitlab_runner_token", "GR1348941", rf"[{_URLSAFE}]{{20,}}"),
    F("bitbucket_token", "ATBB", rf"[{_B62}]{{32,}}"),
    F("atlassian_token", ("ATATT3", "ATCTT3"), rf"[{_URLSAFE}=]{{60,}}", end=False),
    F("sourcegraph_token", "sgp_", r"(?:local_|[0-9a-f]{16}_)?[0-9a-f]{40}"),
    F("circleci_token", ("CCIPAT_", "CCIPRJ_"), rf"[{_B62}]{{22}}_[0-9a-f]{{40}}"),
    F("sonarqube_token", ("squ_", "sqp_", "sqa_"), r"[0-9a-f]{40}"),
    F("buildkite_token", "bkua_", r"[a-f0-9]{40}"),
    F("npm_token", "npm_", rf"[{_B62}]{{36}}"),
    F("pypi_token", "pypi-AgE", rf"[{_URLSAFE}]{{50,}}", end=False),
    F("rubygems_token", "rubygems_", r"[0-9a-f]{48}"),
    F("docker_hub_token", ("dckr_pat_", "dckr_oat_"), rf"[{_URLSAFE}]{{27,}}", end=False),
    F("nuget_key", "oy2", r"[a-z0-9]{43}"),
    F("crates_io_token", "cio", rf"[{_B62}]{{32}}"),
    F("jfrog_key", "AKCp", rf"[{_B62}]{{60,}}"),
    F("jfrog_token", "cmVmdGtuOjAxOj", rf"[{_B62}]{{40,}}"),
    F("clojars_token", "CLOJARS_", r"[a-z0-9]{60}"),
    F("prefect_key", "pnu_", rf"[{_B62}]{{36}}"),
    F("readme_key", "rdme_", r"[a-z0-9]{70}"),
    F("octopus_key", "API-", r"[A-Z0-9]{26,}"),
    F("harness_token", ("pat.", "sat."), rf"[{_URLSAFE}]{{22}}\.[0-9a-f]{{24}}\.[{_B62}]{{20}}"),
    F("postman_key", "PMAK-", r"[0-9a-f]{24}-[0-9a-f]{34}"),
    F("infracost_key", "ico-", rf"[{_B62}]{{32}}"),
    F("scalingo_token", "tk-us-", rf"[{_URLSAFE}]{{48}}"),
    F("settlemint_token", ("sm_pat_", "sm_aat_", "sm_sat_"), rf"[{_B62}]{{16,}}"),
    F("intra42_secret", ("s-s4t2ud-", "s-s4t2af-"), r"[0-9a-f]{64}"),
    # -- chat and messaging
    F("slack_token", ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe-", "xoxe.xoxp-"), r"[A-Za-z0-9\-]{10,}", end=False),
    F("slack_app_token", "xapp-", r"[0-9]-[A-Za-z0-9\-]{20,}", end=False),
    F("facebook_token", "EAA", rf"(?!A)[{_B62}]{{90,}}"),
    F("twitter_bearer_token", "AAAAAAAAAAAAAAAAAAAA", r"[A-Za-z0-9%]{30,}", end=False),
    # -- payments, commerce, mail
    F("stripe_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), rf"[{_B62}]{{16,}}", end=False),
    F("stripe_webhook_secret", "whsec_", r"[A-Za-z0-9+/]{24,}", end=False),
    F("square_token", "EAAA", rf"[{_URLSAFE}]{{60}}"),
    F("square_token", ("sq0atp-", "sq0csp-"), rf"[{_URLSAFE}]{{22,}}", end=False),
    F("shopify_token", ("shpat_", "shpss_", "shpca_", "shppa_"), r"[a-fA-F0-9]{32}"),
    F("braintree_token", "access_token$production$", r"[0-9a-z]{16}\$[0-9a-f]{32}"),
    F("flutterwave_key", ("FLWSECK-", "FLWSECK_TEST-"), r"[a-h0-9]{32}-X"),
    F("gocardless_token", "live_", rf"[{_URLSAFE}=]{{40}}"),
    F("shippo_token", ("shippo_live_", "shippo_test_"), r"[a-f0-9]{40}"),
    F("easypost_key", ("EZAK", "EZTK"), rf"[{_B62}]{{54}}"),
    F("duffel_token", ("duffel_live_", "duffel_test_"), rf"[{_URLSAFE}=]{{43}}"),
    F("twilio_api_key", "SK", r"[0-9a-fA-F]{32}"),
    F("sendgrid_key", "SG.", rf"[{_URLSAFE}]{{16,32}}\.[{_URLSAFE}]{{16,64}}", end=False),
    F("mailgun_key", "key-", r"[0-9a-f]{32}"),
    F("brevo_key", ("xkeysib-", "xsmtpsib-"), rf"[0-9a-f]{{64}}-[{_B62}]{{16}}"),
    F("resend_key", "re_", rf"[{_B62}]{{8}}_[{_B62}]{{24,}}"),
    # -- SaaS
    F("linear_key", "lin_api_", rf"[{_B62}]{{40}}"),
    F("linear_key", "lin_oauth_", r"[a-f0-9]{64}"),
    F("notion_token", "secret_", rf"[{_B62}]{{43}}"),
    F("notion_token", "ntn_", rf"[{_B62}]{{40,}}"),
    F("newrelic_key", "NRAK-", r"[A-Z0-9]{27}"),
    F("newrelic_key", "NRJS-", r"[a-f0-9]{19}"),
    F("newrelic_key", "NRII-", r"[A-Za-z0-9\-]{32}"),
    F("sentry_token", ("sntrys_", "sntryu_"), r"[A-Za-z0-9+/=_.\-]{40,}", end=False),
    F("figma_token", "figd_", rf"[{_URLSAFE}]{{40,}}"),
    F("airtable_token", "pat", rf"[{_B62}]{{14}}\.[0-9a-f]{{64}}"),
    F("clickup_token", "pk_", r"[0-9]{6,10}_[A-Z0-9]{32}"),
    F("hubspot_token", ("pat-na1-", "pat-na2-", "pat-eu1-"), _UUID),
    F("typeform_token", "tfp_", rf"[{_URLSAFE}.]{{59}}"),
    F("launchdarkly_key", ("api-", "sdk-", "mob-"), _UUID),
    F("dropbox_token", "sl.", rf"[{_URLSAFE}=]{{130,}}", end=False),
    F("mapbox_secret_token", "sk.eyJ", rf"[{_URLSAFE}]{{40,}}\.[{_URLSAFE}]{{20,}}"),
    F("contentful_token", "CFPAT-", rf"[{_URLSAFE}]{{43}}"),
    F("frameio_token", "fio-u-", rf"[{_URLSAFE}=]{{64}}"),
    F("adafruit_key", "aio_", rf"[{_B62}]{{28}}"),
    F("dynatrace_token", "dt0c01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    F("onepassword_token", "ops_eyJ", rf"[{_URLSAFE}+/=]{{40,}}", end=False),
    F("onepassword_secret_key", "A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"),
    F("yandex_key", "AQVN", rf"[{_URLSAFE}]{{35,38}}"),
    F("yandex_token", "t1.", rf"[{_URLSAFE}]+={{0,2}}\.[{_URLSAFE}]{{86}}={{0,2}}"),
    # -- cloud and infrastructure
    F("aws_access_key_id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), r"[A-Z0-9]{16}"),
    F("digitalocean_token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}"),
    F("databricks_token", "dapi", r"[0-9a-f]{32}(?:-[0-9])?"),
    F("vault_token", ("hvs.", "hvb.", "hvr."), rf"[{_URLSAFE}]{{24,}}", end=False),
    F("doppler_token", tuple(f"dp.{k}." for k in ("pt", "st", "sa", "ct", "scim", "audit")), rf"[{_B62}]{{40,}}", end=False),
    F("grafana_token", "glsa_", rf"[{_B62}]{{32}}_[0-9a-f]{{8}}"),
    F("grafana_token", "glc_", r"[A-Za-z0-9+/]{32,}={0,2}", end=False),
    F("grafana_token", "eyJrIjoi", r"[A-Za-z0-9+/]{50,}={0,2}", end=False),
    F("supabase_token", "sbp_", r"(?:v0_)?[a-f0-9]{40}"),
    F("supabase_token", "sb_secret_", rf"[{_URLSAFE}]{{30,}}"),
    F("pulumi_token", "pul-", r"[a-f0-9]{40}"),
    F("planetscale_token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), rf"[{_URLSAFE}.]{{32,}}", end=False),
    F("netlify_token", "nfp_", rf"[{_B62}]{{36,}}"),
    F("vercel_token", ("vcp_", "vci_", "vca_", "vcr_", "vck_"), rf"[{_B62}]{{40,}}"),
    F("fly_token", "fo1_", rf"[{_URLSAFE}]{{43}}"),
    F("render_key", "rnd_", rf"[{_B62}]{{32}}"),
    F("neon_key", "napi_", r"[a-z0-9]{64}"),
    F("heroku_key", "HRKU-", rf"[{_URLSAFE}]{{58,}}"),
    F("tailscale_key", "tskey-", rf"(?:api-|auth-|client-|webhook-|scim-)?[{_B62}]{{8,}}-[{_B62}]{{20,}}"),
    F("openshift_token", "sha256~", rf"[{_URLSAFE}]{{43}}"),
    F("defined_networking_key", "dnkey-", r"[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}"),
    F("scaleway_key", "SCW", r"[A-Z0-9]{17}"),
    F("alibaba_access_key_id", "LTAI", rf"[{_B62}]{{12,20}}"),
    F("tencent_secret_id", "AKID", rf"[{_B62}]{{32}}"),
    F("cloudflare_origin_ca_key", "v1.0-", r"[0-9a-f]{24}-[0-9a-f]{146}"),
    F("age_secret_key", "AGE-SECRET-KEY-1", r"[0-9A-Z]{58}"),
    F("age_plugin_key", "AGE-PLUGIN-", r"[0-9A-Z]+-1[0-9A-Z]{20,}"),
    F("jwt", "eyJ", rf"[{_URLSAFE}]{{8,}}\.eyJ[{_URLSAFE}]{{8,}}\.[{_URLSAFE}]{{8,}}", end=False),
)
# fmt: on

# A format whose shape needs no prefix but a context word: the Azure AD client secret
# (`abc8Q~…`), the 84-character Azure DevOps token with `AZDO` inside, Azure Storage account
# keys and SAS signatures, Docker's config.json `auth` field.
CONTEXT_FORMATS: tuple[tuple[str, str, re.Pattern[str], int], ...] = (
    ("telegram_bot_token", ":aa", re.compile(r"[0-9](?<![0-9].)[0-9]{7,9}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"), 0),
    ("google_refresh_token", "1//0", re.compile(rf"1//0[{_URLSAFE}]{{38,}}{END}"), 0),
    ("slack_webhook", "hooks.slack.com/", re.compile(r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{16,}"), 0),
    ("discord_webhook", "/api/webhooks/", re.compile(rf"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[{_URLSAFE}]{{20,}}"), 0),
    ("teams_webhook", ".webhook.office.com/", re.compile(r"https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/[0-9a-f\-]{36}@[0-9a-f\-]{36}/IncomingWebhook/[0-9a-f]{32}/[0-9a-f\-]{36}"), 0),
    ("zapier_webhook", "hooks.zapier.com/", re.compile(r"https://hooks\.zapier\.com/hooks/catch/[0-9]+/[a-z0-9]+"), 0),
    ("okta_token", "ssws ", re.compile(rf"SSWS (00[{_URLSAFE}]{{40}}){END}"), 1),
    ("fly_token", "flyv1 ", re.compile(rf"FlyV1 (fm[0-9]_[{_URLSAFE}+/=,]{{60,}})"), 1),
    ("discord_bot_token", ".", re.compile(rf"[MNO](?<![{_URLSAFE}].)[{_URLSAFE}]{{23,25}}\.[{_URLSAFE}]{{6}}\.[{_URLSAFE}]{{27,38}}{END}"), 0),
    ("mailchimp_key", "-us", re.compile(rf"[0-9a-f](?<![{_B62}].)[0-9a-f]{{31}}-us[0-9]{{1,2}}{END}"), 0),
    ("terraform_token", ".atlasv1.", re.compile(rf"[{_B62}](?<![{_B62}].)[{_B62}]{{13}}\.atlasv1\.[{_URLSAFE}=]{{60,}}"), 0),
    ("azure_ad_client_secret", "q~", re.compile(r"[A-Za-z0-9_~.](?<![A-Za-z0-9_~.\-].)[A-Za-z0-9_~.]{2}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"), 0),
    ("azure_devops_token", "azdo", re.compile(rf"[{_B62}](?<![{_B62}].)[{_B62}]{{75}}AZDO[{_B62}]{{4}}(?![{_B62}])"), 0),
    ("azure_key", "key=", re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})"), 1),
    ("azure_sas", "sig=", re.compile(r"(?i)[?&]sig=([A-Za-z0-9%+/=]{20,})"), 1),
    ("docker_auth", '"auth"', re.compile(r"\"auth\"[ \t]*:[ \t]*\"([A-Za-z0-9+/]{12,}={0,2})\""), 1),
)


def _trie_regex(formats: tuple[Format, ...]) -> tuple[str, dict[str, str]]:
    """One regex for all formats: a trie over the prefixes, each leaf the bodies of the
    formats with that prefix as named groups `f<i>`; return it and group → kind."""
    trie: dict = {}
    kinds: dict[str, str] = {}
    for i, fmt in enumerate(formats):
        group = f"f{i}"
        kinds[group] = fmt.kind
        body = fmt.body + (END if fmt.end else "")
        for prefix in fmt.prefixes:
            node = trie
            for char in prefix:
                node = node.setdefault(char, {})
            node.setdefault("", []).append((group, body))

    used: dict[str, int] = {}

    def build(node: dict, top: bool = False) -> str:
        # At the top, the token-start guard goes after the first character: a pattern that
        # starts with a literal lets the engine skip ahead to the characters that can begin one.
        guard = "(?<![A-Za-z0-9].)" if top else ""
        branches = [re.escape(char) + guard + build(child) for char, child in sorted(node.items()) if char]
        for group, body in node.get("", []):
            used[group] = used.get(group, 0) + 1
            name = group if used[group] == 1 else f"{group}_{used[group]}"
            kinds[name] = kinds[group]
            branches.append(f"(?P<{name}>{body})")
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return build(trie, top=True), kinds


_SCAN_BODY, _KIND_OF = _trie_regex(FORMATS)
# A prefix starts a token: no letter or digit right before it.
SCAN = re.compile(_SCAN_BODY)
_SHORTEST = 15  # `xoxb-` and ten characters
# Every place a format could start: a letter or digit with none before it (so also right
# after a `-`, `_` or `.` inside a longer run: `x-ghp_…`) and a token long enough after it.
_TOKEN_START = re.compile(r"[A-Za-z0-9](?<![A-Za-z0-9].)(?=[A-Za-z0-9_\-.$~]{%d})" % (_SHORTEST - 1))


def find_formats(text: str, low: str) -> Iterator[tuple[int, int, str]]:
    """Yield (start, end, kind) of every known-format credential in `text` (`low` is
    `text.lower()`, of the same length)."""
    # Formats start where a token starts: find the tokens (one fast pass), then try the
    # trie at each start. (Run over the whole text the trie is slow: its first characters
    # are nearly every letter, and the engine tries each branch at each position.)
    match_at = SCAN.match
    for token in _TOKEN_START.finditer(text):
        match = match_at(text, token.start())
        if match:
            yield match.start(), match.end(), _KIND_OF[match.lastgroup or ""]
    for kind, trigger, pattern, group in CONTEXT_FORMATS:
        if trigger == ".":
            found = pattern.finditer(text)
        else:
            found = (m for lo, hi in _windows(low, trigger) for m in pattern.finditer(text, lo, hi))
        for match in found:
            yield match.start(group), match.end(group), kind


def _windows(low: str, trigger: str, reach: int = 200) -> Iterator[tuple[int, int]]:
    """Stretches of the text around each occurrence of `trigger`, overlapping ones joined."""
    at = low.find(trigger)
    while at >= 0:
        lo, hi = max(0, at - reach), at + len(trigger) + reach
        at = low.find(trigger, at + 1)
        while 0 <= at < hi:
            hi = at + len(trigger) + reach
            at = low.find(trigger, at + 1)
        yield lo, min(hi, len(low))
