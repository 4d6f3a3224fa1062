"""A catalogue of credential formats, each with a near miss that must survive.

Every value is generated here from a fixed seed (nothing real, nothing a secret scanner
would flag in the repository): `Case.text` holds the credential in a realistic context,
`Case.values` the parts that must never be written anywhere, `Case.near_miss` text that
looks alike but is not a secret and must come out untouched.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

_rng = random.Random(20261130)
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """A random string that mixes cases and digits (like a real token) when it can."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        classes = [any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)]
        wanted = [any(c.islower() for c in alphabet), any(c.isupper() for c in alphabet), any(c.isdigit() for c in alphabet)]
        if classes == wanted or n < 8:
            return value


def digits(n: int) -> str:
    return rand(n, string.digits)


@dataclass(frozen=True)
class Case:
    kind: str
    text: str
    values: tuple[str, ...]
    near_miss: str
    name: str = ""  # the format, when several share a kind (`assignment`, `cli_password`)

    @property
    def format(self) -> str:
        return self.name or self.kind


def _case(kind: str, template: str, secret: str, near_miss: str, name: str = "") -> Case:
    return Case(kind, template.format(secret), (secret,), near_miss, name)


def _pem_lines(count: int, start: str = "") -> list[str]:
    first = start + rand(64 - len(start), B64)
    return [first, *(rand(64, B64) for _ in range(count - 1))]


def _build() -> list[Case]:
    aws_secret = rand(40, B64)
    twilio_token = rand(32, HEX)
    docker_password = rand(20)
    docker_auth = base64.b64encode(f"alice:{docker_password}".encode()).decode()
    rsa_body = _pem_lines(4, "MIIEowIBAAKCAQEA")
    pkcs8_body = _pem_lines(3, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")
    pem_full = _pem_lines(3, "MIIEpAIBAAKCAQEA")
    slack_path = f"T{rand(8, UPPER)}/B{rand(10, UPPER)}/{rand(24)}"
    jwt_payload, jwt_signature = f"eyJ{rand(40, URLSAFE)}", rand(43, URLSAFE)
    age_key = rand(58, UPPER)
    return [
        # -- model providers
        _case("openai_key", "use key {} for the eval run", f"sk-proj-{rand(48, URLSAFE)}", "sk-learn and task-runner are tools"),
        _case("anthropic_key", "ANTHROPIC key {} works", f"sk-ant-api03-{rand(60, URLSAFE)}", "the sk-ant- prefix marks Anthropic keys"),
        _case("huggingface_token", "huggingface-cli login --token-file x; token {} ok", f"hf_{rand(34)}", "hf_hub_download fetches a file"),
        _case("groq_key", "GROQ {}", f"gsk_{rand(52)}", "gsk_ is the Groq prefix"),
        _case("xai_key", "grok key {}", f"xai-{rand(80)}", "pip install xai-sdk"),
        _case("replicate_token", "replicate {}", f"r8_{rand(37)}", "r8_ tokens are Replicate's"),
        _case("perplexity_key", "pplx {}", f"pplx-{rand(48)}", "the pplx-api docs"),
        _case("google_api_key", "maps key {} (ends in a dash)", f"AIza{rand(34, URLSAFE)}-", "AIza is Google's key prefix"),
        _case("google_oauth_secret", "client secret {}", f"GOCSPX-{rand(28, URLSAFE)}", "GOCSPX- starts an OAuth client secret"),
        _case("google_oauth_token", "gcloud printed {}", f"ya29.{rand(80, URLSAFE)}", "ya29 is an access token prefix"),
        # -- code hosts and registries
        _case("github_token", "push with {}", f"ghp_{rand(36)}", "ghp_ tokens expire; see the ghp_docs page"),
        _case("github_token", "Rotate {}", f"github_pat_11{rand(20, UPPER)}_{rand(59)}", "github_pat_ is the fine-grained prefix"),
        _case("gitlab_token", "gitlab token {}", f"glpat-{rand(20, URLSAFE)}", "glpat-abc is too short to be one"),
        _case("npm_token", "npm config set //registry.npmjs.org/:_authToken {}", f"npm_{rand(36)}", "npm_config_registry=https://registry.npmjs.org/"),
        _case("assignment", "//registry.npmjs.org/:_authToken={}", f"{rand(8, HEX)}-{rand(4, HEX)}-4{rand(3, HEX)}-a{rand(3, HEX)}-{rand(12, HEX)}", "request id 550e8400-e29b-41d4-a716-446655440000"),
        _case("pypi_token", "twine upload -u __token__ -p {} dist/*", f"pypi-AgEIcHlwaS5vcmc{rand(70, URLSAFE)}", "the pypi-simple index at https://pypi.org/simple"),
        _case("cli_password", "twine upload -u alice -p {} dist/*", rand(18), "twine upload -u __token__ dist/* asks for it"),
        _case("rubygems_token", "gem key {}", f"rubygems_{rand(48, HEX)}", "rubygems_ is a prefix"),
        _case("docker_hub_token", "docker hub {}", f"dckr_pat_{rand(27, URLSAFE)}", "dckr_pat_ prefix"),
        Case("docker_auth", '{"auths": {"ghcr.io": {"auth": "' + docker_auth + '"}}}', (docker_auth, docker_password), '{"auth": "basic"}'),
        # -- chat and messaging
        _case("slack_token", "bot token {}", f"xoxb-{digits(12)}-{digits(13)}-{rand(24)}", "xoxo-hugs from the team"),
        _case("slack_app_token", "socket mode with {}", f"xapp-1-A{rand(10, UPPER)}-{digits(13)}-{rand(64, HEX)}", "xapp-1 is the app-level prefix"),
        Case("slack_webhook", f"POST to https://hooks.slack.com/services/{slack_path} now", (slack_path,), "see https://api.slack.com/messaging/webhooks"),
        _case("discord_webhook", "alerts go to https://discord.com/api/webhooks/{}", f"{digits(18)}/{rand(68, URLSAFE)}", "https://discord.com/developers/docs"),
        _case("telegram_bot_token", "https://api.telegram.org/bot{}/sendMessage", f"{digits(10)}:AA{rand(33, URLSAFE)}", "we land at 10:30 AA flight 100"),
        # -- payments, mail, SaaS
        _case("stripe_key", "stripe {}", f"sk_live_{rand(24)}", f"pk_live_{rand(24)} is a publishable key"),
        _case("stripe_webhook_secret", "STRIPE_WEBHOOK {} set", f"whsec_{rand(32)}", "whsec_ starts a signing secret"),
        _case("square_token", "square {}", f"sq0atp-{rand(22, URLSAFE)}", "sq0 prefixes are Square's"),
        _case("shopify_token", "shopify admin {}", f"shpat_{rand(32, HEX)}", "shpat_ tokens are Shopify's"),
        _case("twilio_api_key", "twilio api key {}", f"SK{rand(32, HEX)}", "SKU-12345 is in stock"),
        Case("basic_auth_credentials", f"curl -u AC{rand(32, HEX)}:{twilio_token} https://api.twilio.com/2010-04-01/Accounts", (twilio_token,), "curl -u admin https://example.com/api"),
        _case("sendgrid_key", "sendgrid {}", f"SG.{rand(22, URLSAFE)}.{rand(43, URLSAFE)}", "SG.io and e.g. SG.mail are names"),
        _case("mailgun_key", "mailgun {}", f"key-{rand(32, HEX)}", "a key-value store"),
        _case("mailchimp_key", "mailchimp {}", f"{rand(32, HEX)}-us14", "region us-east-1"),
        _case("atlassian_token", "jira {}", f"ATATT3xFfGF0{rand(180, URLSAFE)}", "ATATT3 starts Atlassian tokens"),
        _case("linear_key", "linear {}", f"lin_api_{rand(40)}", "lin_api_ is Linear's prefix"),
        _case("notion_token", "notion {}", f"ntn_{rand(46)}", "secret_santa.py draws names"),
        _case("postman_key", "postman {}", f"PMAK-{rand(24, HEX)}-{rand(34, HEX)}", "PMAK- keys are Postman's"),
        _case("newrelic_key", "newrelic {}", f"NRAK-{rand(27, UPPER)}", "NRAK is New Relic's prefix"),
        _case("sentry_token", "sentry {}", f"sntrys_eyJ{rand(80, URLSAFE)}", "sntrys_ starts a Sentry token"),
        # -- cloud and infrastructure
        _case("aws_access_key_id", "Rotate {} today", f"AKIA{rand(16, UPPER)}", "AKIA starts an access key id"),
        _case("aws_secret_key", "aws_secret_access_key = {}", aws_secret, "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}"),
        _case("aws_secret_key", "the AWS secret for that user is {} (rotated)", rand(40, B64), "aws commit 0123456789abcdef0123456789abcdef01234567"),
        _case("digitalocean_token", "doctl auth init -t {}", f"dop_v1_{rand(64, HEX)}", "dop_v1_ is DigitalOcean's prefix"),
        _case("databricks_token", "databricks {}", f"dapi{rand(32, HEX)}", "the dapi docs"),
        _case("vault_token", "VAULT {}", f"hvs.{rand(90, URLSAFE)}", "hvs. starts a Vault token"),
        _case("terraform_token", "tfe {}", f"{rand(14)}.atlasv1.{rand(67, URLSAFE)}", "atlasv1 marks Terraform tokens"),
        _case("doppler_token", "doppler {}", f"dp.st.{rand(43)}", "dp.st is too short"),
        _case("grafana_token", "grafana {}", f"glsa_{rand(32)}_{rand(8, HEX)}", "glsa_ is Grafana's prefix"),
        _case("supabase_token", "supabase {}", f"sbp_{rand(40, HEX)}", "sbp_ is Supabase's prefix"),
        _case("pulumi_token", "pulumi {}", f"pul-{rand(40, HEX)}", "a pul-request typo"),
        _case("planetscale_token", "pscale {}", f"pscale_tkn_{rand(43, URLSAFE)}", "pscale_tkn_ prefix"),
        _case("netlify_token", "netlify {}", f"nfp_{rand(40)}", "nfp_ is Netlify's prefix"),
        _case("buildkite_token", "buildkite {}", f"bkua_{rand(40, HEX)}", "bkua_ is Buildkite's prefix"),
        _case("onepassword_token", "op {}", f"ops_eyJ{rand(100, URLSAFE)}", "ops_ prefixes a 1Password token"),
        Case("age_secret_key", f"age key AGE-SECRET-KEY-1{age_key}", (age_key,), "age-keygen writes AGE-SECRET-KEY-1 keys"),
        _case("azure_key", "DefaultEndpointsProtocol=https;AccountName=dev;AccountKey={};", rand(86, B64) + "==", "AccountName=devstore;EndpointSuffix=core.windows.net"),
        _case("azure_sas", "https://x.blob.core.windows.net/c?sv=2022-11-02&sig={}", rand(43, ALNUM) + "%3D", "https://x.blob.core.windows.net/c?sv=2022-11-02&sp=r"),
        # -- credentials named by their context
        _case("cli_password", "mysql -u root -p{} -h db.internal", rand(14), "mysql -u root -p   # prompts for it"),
        _case("cli_password", "gh-deploy --password {} --verbose", rand(18), "docker login --password-stdin < pw.txt"),
        _case("basic_auth_credentials", "curl -u alice:{} https://example.com/api", rand(16), 'curl -u "$USER:$TOKEN" https://example.com/api'),
        _case("password", "the password is {}", f"hunter2{rand(10)}", "the password is stored in the vault"),
        Case("jwt", f"cookie eyJhbGciOiJIUzI1NiJ9.{jwt_payload}.{jwt_signature}", (jwt_payload, jwt_signature), "eyJhbGciOiJIUzI1NiJ9 is a JWT header"),
        _case("auth_header", "Authorization: Bearer {}", rand(40, URLSAFE), "Authorization: Bearer $TOKEN"),
        _case("url_credentials", "postgres://app:{}@db.internal:5432/app", rand(18), "postgres://app@db.internal:5432/app"),
        _case("assignment", "DB_PASSWORD={}", rand(18), "DB_PASSWORD=${DB_PASSWORD}"),
        # -- private keys, whole and in pieces
        Case(
            "private_key",
            "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(pem_full) + "\n-----END RSA PRIVATE KEY-----",
            tuple(pem_full),
            "ssh-keygen writes the private key to ~/.ssh/id_ed25519",
        ),
        Case("private_key", "\n".join(rsa_body) + "\n-----END RSA PRIVATE KEY-----", tuple(rsa_body), "MIIDdzCCAl+gAwIBAgIJAJcert is a certificate"),
        Case("private_key", '{"private_key": "' + "\\n".join(pkcs8_body) + '"}', tuple(pkcs8_body), base64.b64encode(b"the quick brown fox jumps over the lazy dog").decode()),
    ]


from tests.secrets_catalogue_more import build_more  # noqa: E402  (uses the helpers above)

CATALOGUE: list[Case] = _build() + build_more()
FORMATS = sorted({c.format for c in CATALOGUE})
