"""The second half of the credential catalogue: formats from the public rule sets (gitleaks,
detect-secrets, GitHub's secret-scanning partners) and the credentials named only by their
context (flags, files, prose). Values are random from the catalogue's seed; each case has a
near miss that must survive untouched.
"""

from __future__ import annotations

import base64

from tests.secrets_catalogue import ALNUM, B64, HEX, UPPER, URLSAFE, Case, _case, digits, rand

LOWER36 = "abcdefghijklmnopqrstuvwxyz0123456789"
BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def _uuid() -> str:
    return f"{rand(8, HEX)}-{rand(4, HEX)}-4{rand(3, HEX)}-a{rand(3, HEX)}-{rand(12, HEX)}"


def _providers() -> list[Case]:
    """Known formats: a documented prefix and shape."""
    return [
        _case("openai_session_key", "session {}", f"sess-{rand(40)}", "sess-ions are logged"),
        _case("huggingface_token", "org token {}", f"api_org_{rand(34)}", "api_org_ is a prefix", "huggingface_org_token"),
        _case("langsmith_key", "LANGSMITH {}", f"lsv2_pt_{rand(32, HEX)}_{rand(10, HEX)}", "lsv2_pt_ is LangSmith's"),
        _case("pinecone_key", "pinecone {}", f"pcsk_{rand(6)}_{rand(60)}", "pcsk_ starts a Pinecone key"),
        _case("fireworks_key", "fireworks {}", f"fw_{rand(24)}", "fw_version 2 firmware"),
        _case("elevenlabs_key", "xi {}", f"sk_{rand(48, HEX)}", "sk_ alone means nothing"),
        _case("nvidia_key", "nim {}", f"nvapi-{rand(64, URLSAFE)}", "nvapi- keys are NVIDIA's"),
        _case("google_refresh_token", "refresh {}", f"1//0{rand(60, URLSAFE)}", "1//0 starts a refresh token"),
        _case("gitlab_token", "deploy {}", f"gldt-{rand(20, URLSAFE)}", "gldt- deploy tokens", "gitlab_deploy_token"),
        _case("gitlab_token", "runner {}", f"glrt-{rand(20, URLSAFE)}", "glrt- runner tokens", "gitlab_runner_auth_token"),
        _case("gitlab_runner_token", "register with {}", f"GR1348941{rand(20, URLSAFE)}", "GR1348941 is the prefix"),
        _case("bitbucket_token", "bitbucket {}", f"ATBB{rand(32)}", "ATBB is Bitbucket's prefix"),
        _case("atlassian_token", "confluence {}", f"ATCTT3xFfGN0{rand(180, URLSAFE)}", "ATCTT3 tokens", "atlassian_cloud_token"),
        _case("sourcegraph_token", "src {}", f"sgp_{rand(16, HEX)}_{rand(40, HEX)}", "sgp_ tokens are Sourcegraph's"),
        _case("circleci_token", "circle {}", f"CCIPAT_{rand(22)}_{rand(40, HEX)}", "CCIPAT_ is CircleCI's"),
        _case("sonarqube_token", "sonar {}", f"squ_{rand(40, HEX)}", "squ_ is SonarQube's"),
        _case("docker_hub_token", "org access {}", f"dckr_oat_{rand(32, URLSAFE)}", "dckr_oat_ prefix", "docker_org_token"),
        _case("nuget_key", "nuget push -k {}", f"oy2{rand(43, 'abcdefghijklmnopqrstuvwxyz0123456789')}", "oy2 is NuGet's prefix"),
        _case("crates_io_token", "cargo login {}", f"cio{rand(32)}", "cio is a prefix"),
        _case("jfrog_key", "artifactory {}", f"AKCp{rand(69)}", "AKCp starts a JFrog key"),
        _case("jfrog_token", "jfrog ref {}", f"cmVmdGtuOjAxOj{rand(50)}", "a jfrog reference token"),
        _case("clojars_token", "clojars {}", f"CLOJARS_{rand(60, 'abcdefghijklmnopqrstuvwxyz0123456789')}", "CLOJARS_ prefix"),
        _case("prefect_key", "prefect {}", f"pnu_{rand(36)}", "pnu_ is Prefect's prefix"),
        _case("readme_key", "readme {}", f"rdme_{rand(70, 'abcdefghijklmnopqrstuvwxyz0123456789')}", "rdme_ is ReadMe's prefix"),
        _case("octopus_key", "octopus {}", f"API-{rand(26, UPPER)}", "API-first design"),
        _case("harness_token", "harness {}", f"pat.{rand(22, URLSAFE)}.{rand(24, HEX)}.{rand(20)}", "pat. is Harness's"),
        _case("infracost_key", "infracost {}", f"ico-{rand(32)}", "ico-files are icons"),
        _case("scalingo_token", "scalingo {}", f"tk-us-{rand(48, URLSAFE)}", "tk-us- prefix"),
        _case("settlemint_token", "settlemint {}", f"sm_pat_{rand(16)}", "sm_pat_ prefix"),
        _case("intra42_secret", "42 {}", f"s-s4t2ud-{rand(64, HEX)}", "s-s4t2ud- prefix"),
        _case("slack_token", "user token {}", f"xoxp-{digits(12)}-{digits(12)}-{digits(13)}-{rand(32, HEX)}", "xoxp- user tokens", "slack_user_token"),
        _case("slack_token", "config {}", f"xoxe.xoxp-1-{rand(140)}", "xoxe config tokens", "slack_config_token"),
        _case("discord_bot_token", "bot.run('{}')", f"M{rand(25, URLSAFE)}.{rand(6, URLSAFE)}.{rand(38, URLSAFE)}", "Member.Guild.Channel"),
        _case("teams_webhook", "teams {}", f"https://acme.webhook.office.com/webhookb2/{_uuid()}@{_uuid()}/IncomingWebhook/{rand(32, HEX)}/{_uuid()}", "https://learn.microsoft.com/teams/webhooks"),
        _case("zapier_webhook", "zap {}", f"https://hooks.zapier.com/hooks/catch/{digits(7)}/{rand(6, 'abcdefghijklmnopqrstuvwxyz0123456789')}", "https://zapier.com/apps/webhook"),
        _case("facebook_token", "graph {}", f"EAAB{rand(120)}", "EAAB is a prefix"),
        _case("twitter_bearer_token", "twitter {}", "AAAAAAAAAAAAAAAAAAAAA" + rand(80), "AAAA is a start"),
        _case("square_token", "square prod {}", f"EAAA{rand(60, URLSAFE)}", "EAAA alone", "square_access_token"),
        _case("square_token", "square oauth {}", f"sq0csp-{rand(43, URLSAFE)}", "sq0csp- oauth secrets", "square_oauth_secret"),
        _case("stripe_key", "restricted {}", f"rk_live_{rand(24)}", "rk_live_ is restricted", "stripe_restricted_key"),
        _case("shopify_token", "shared secret {}", f"shpss_{rand(32, HEX)}", "shpss_ prefix", "shopify_shared_secret"),
        _case("braintree_token", "braintree {}", f"access_token$production${rand(16, 'abcdefghijklmnopqrstuvwxyz0123456789')}${rand(32, HEX)}", "braintree sandbox docs"),
        _case("flutterwave_key", "flw {}", f"FLWSECK-{rand(32, 'abcdefgh0123456789')}-X", "FLWSECK- keys"),
        _case("gocardless_token", "gocardless {}", f"live_{rand(40, URLSAFE)}", "live_server reloads"),
        _case("shippo_token", "shippo {}", f"shippo_live_{rand(40, HEX)}", "shippo live keys"),
        _case("easypost_key", "easypost {}", f"EZAK{rand(54)}", "EZAK keys"),
        _case("duffel_token", "duffel {}", f"duffel_live_{rand(43, URLSAFE)}", "duffel live tokens"),
        _case("brevo_key", "brevo {}", f"xkeysib-{rand(64, HEX)}-{rand(16)}", "xkeysib- keys"),
        _case("resend_key", "resend {}", f"re_{rand(8)}_{rand(24)}", "re_compile is a name"),
        _case("linear_key", "linear oauth {}", f"lin_oauth_{rand(64, HEX)}", "lin_oauth_ tokens", "linear_oauth_token"),
        _case("newrelic_key", "browser {}", f"NRJS-{rand(19, HEX)}", "NRJS- keys", "newrelic_browser_key"),
        _case("newrelic_key", "insights {}", f"NRII-{rand(32, URLSAFE)}", "NRII- keys", "newrelic_insights_key"),
        _case("figma_token", "figma {}", f"figd_{rand(40, URLSAFE)}", "figd_ tokens"),
        _case("airtable_token", "airtable {}", f"pat{rand(14)}.{rand(64, HEX)}", "pattern.match is code"),
        _case("clickup_token", "clickup {}", f"pk_{digits(8)}_{rand(32, UPPER)}", "pk_ is a prefix"),
        _case("hubspot_token", "hubspot {}", f"pat-na1-{_uuid()}", "pat-na1 region"),
        _case("typeform_token", "typeform {}", f"tfp_{rand(59, URLSAFE)}", "tfp_ tokens"),
        _case("launchdarkly_key", "ld {}", f"sdk-{_uuid()}", "sdk-version 2"),
        _case("dropbox_token", "dropbox {}", f"sl.{rand(140, URLSAFE)}", "sl.com is a domain"),
        _case("mapbox_secret_token", "mapbox {}", f"sk.eyJ{rand(60, URLSAFE)}.{rand(22, URLSAFE)}", "pk.eyJ is public"),
        _case("okta_token", "Authorization: SSWS {}", f"00{rand(40, URLSAFE)}", "SSWS is Okta's scheme"),
        _case("contentful_token", "contentful {}", f"CFPAT-{rand(43, URLSAFE)}", "CFPAT- tokens"),
        _case("frameio_token", "frame.io {}", f"fio-u-{rand(64, URLSAFE)}", "fio-u- tokens"),
        _case("adafruit_key", "adafruit {}", f"aio_{rand(28)}", "aio_ keys"),
        _case("dynatrace_token", "dynatrace {}", f"dt0c01.{rand(24, UPPER)}.{rand(64, UPPER)}", "dt0c01 tokens"),
        _case("onepassword_secret_key", "1password {}", f"A3-{rand(6, UPPER)}-{rand(6, UPPER)}-{rand(5, UPPER)}-{rand(5, UPPER)}-{rand(5, UPPER)}-{rand(5, UPPER)}", "A3- secret keys"),
        _case("yandex_key", "yandex {}", f"AQVN{rand(36, URLSAFE)}", "AQVN keys"),
        _case("aws_access_key_id", "temp {}", f"ASIA{rand(16, UPPER)}", "ASIA is a continent", "aws_session_key_id"),
        _case("digitalocean_token", "doctl oauth {}", f"doo_v1_{rand(64, HEX)}", "doo_v1_ tokens", "digitalocean_oauth_token"),
        _case("vault_token", "vault batch {}", f"hvb.{rand(120, URLSAFE)}", "hvb. tokens", "vault_batch_token"),
        _case("terraform_token", "terraform login {}", f"{rand(14)}.atlasv1.{rand(70, URLSAFE)}", "atlasv1 tokens", "terraform_cloud_token"),
        _case("grafana_token", "grafana cloud {}", f"glc_{rand(60, B64)}", "glc_ tokens", "grafana_cloud_token"),
        _case("grafana_token", "grafana legacy {}", "eyJrIjoi" + rand(70, ALNUM), "eyJrIjoi keys", "grafana_api_key"),
        _case("supabase_token", "supabase secret {}", f"sb_secret_{rand(32, URLSAFE)}", "sb_secret_ keys", "supabase_secret_key"),
        _case("vercel_token", "vercel {}", f"vcp_{rand(56)}", "vcp_ tokens"),
        _case("fly_token", "fly {}", f"fo1_{rand(43, URLSAFE)}", "fo1_ tokens"),
        _case("render_key", "render {}", f"rnd_{rand(32)}", "rnd_ keys"),
        _case("neon_key", "neon {}", f"napi_{rand(64, 'abcdefghijklmnopqrstuvwxyz0123456789')}", "napi_ keys"),
        _case("heroku_key", "heroku {}", f"HRKU-AA{rand(58, URLSAFE)}", "HRKU- keys"),
        _case("tailscale_key", "tailscale up --authkey {}", f"tskey-auth-{rand(12)}-{rand(33)}", "tskey-auth keys"),
        _case("openshift_token", "oc login --token {}", f"sha256~{rand(43, URLSAFE)}", "oc login --token-file x"),
        _case("defined_networking_key", "dn {}", f"dnkey-{rand(26, LOWER36)}-{rand(52, LOWER36)}", "dnkey- keys"),
        _case("scaleway_key", "scaleway {}", f"SCW{rand(17, UPPER)}", "SCW keys"),
        _case("alibaba_access_key_id", "aliyun {}", f"LTAI{rand(20)}", "LTAI keys"),
        _case("tencent_secret_id", "tencent {}", f"AKID{rand(32)}", "AKID ids"),
        _case("cloudflare_origin_ca_key", "origin ca {}", f"v1.0-{rand(24, HEX)}-{rand(146, HEX)}", "v1.0-beta release"),
        _case("age_plugin_key", "yubikey {}", f"AGE-PLUGIN-YUBIKEY-1{rand(40, UPPER)}", "AGE-PLUGIN- identities"),
        _case("azure_ad_client_secret", "client secret {}", f"{rand(3)}8Q~{rand(34, URLSAFE)}", "8Q~ is a marker"),
        _case("azure_devops_token", "ado {}", f"{rand(76)}AZDO{rand(4)}", "AZDO is Azure DevOps"),
        _case("mailchimp_key", "mailchimp eu {}", f"{rand(32, HEX)}-us21", "us21 is a region", "mailchimp_us21_key"),
        _case("telegram_bot_token", "BOT_TOKEN: {}", f"{digits(9)}:AA{rand(33, URLSAFE)}", "at 09:30 AA boarding"),
    ]


def _contexts() -> list[Case]:
    """Credentials named by their context: assignments, flags, files, prose, URLs, keys."""
    wg = base64.b64encode(bytes(_rng_bytes(32))).decode()
    putty_lines = [rand(64, B64) for _ in range(3)]
    putty = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: dev\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIDexampleexampleexampleexampleexample\nAAAA\nPrivate-Lines: 3\n" + "\n".join(putty_lines) + f"\nPrivate-MAC: {rand(64, HEX)}\n"
    openssh = [f"b3BlbnNzaC1rZXktdjEAAAAA{rand(40, B64)}", rand(70, B64), rand(70, B64)]
    pgp = [rand(64, B64) for _ in range(3)]
    ec = [f"MHcCAQEEI{rand(55, B64)}", rand(64, B64)]
    return [
        _case("assignment", "OPENAI_API_KEY={}", f"sk{rand(40)}", "OPENAI_API_KEY=${{OPENAI_API_KEY}}", "env_api_key"),
        _case("assignment", 'const config = {{ apiKey: "{}" }};', rand(32), "const config = { apiKey: process.env.API_KEY };", "js_api_key"),
        _case("assignment", '{{"client_secret": "{}"}}', rand(40, URLSAFE), '{"client_secret": "<client secret>"}', "json_client_secret"),
        _case("assignment", "password: {}", f"Tr0ub4dor{rand(8)}", "password: !vault |", "yaml_password"),
        _case("assignment", 'password = "{}"', rand(20), 'password = ""', "toml_password"),
        _case("assignment", "export GITHUB_TOKEN={}", rand(40), "export GITHUB_TOKEN=$(gh auth token)", "shell_token"),
        _case("assignment", "APP_KEY=base64:{}", base64.b64encode(bytes(_rng_bytes(32))).decode(), "APP_KEY=", "laravel_app_key"),
        _case("assignment", "  secret_key_base: {}", rand(128, HEX), "  secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>", "rails_secret_key_base"),
        _case("assignment", "    client-key-data: {}", base64.b64encode(bytes(_rng_bytes(90))).decode(), "    client-certificate: /etc/k8s/client.crt", "kubeconfig_key_data"),
        _case("assignment", "    token: {}", rand(48, URLSAFE), "    token: null", "kubeconfig_token"),
        _case("assignment", "PrivateKey = {}", wg, "PrivateKey = /etc/wireguard/private.key", "wireguard_private_key"),
        _case("assignment", "PresharedKey = {}", base64.b64encode(bytes(_rng_bytes(32))).decode(), "PublicKey = (see peers)", "wireguard_preshared_key"),
        _case("assignment", "//npm.pkg.github.com/:_authToken={}", rand(40), "//npm.pkg.github.com/:_authToken=${NPM_TOKEN}", "npmrc_auth_token"),
        _case("assignment", "DD_APP_KEY={}", rand(40, HEX), "DD_APP_KEY_FILE=/run/secrets/dd", "datadog_app_key"),
        _case("assignment", "DD_API_KEY={}", rand(32, HEX), "DD_SITE=datadoghq.eu", "datadog_api_key"),
        _case("assignment", "CLOUDFLARE_API_KEY={}", rand(37, HEX), "CLOUDFLARE_EMAIL=ops@example.com", "cloudflare_global_key"),
        _case("assignment", "CLOUDFLARE_API_TOKEN={}", rand(40, URLSAFE), "CLOUDFLARE_ZONE=example.com", "cloudflare_api_token"),
        _case("assignment", "SENDBIRD_API_TOKEN={}", rand(40, HEX), "SENDBIRD_APP_ID", "sendbird_token"),
        _case("assignment", "ALGOLIA_ADMIN_KEY={}", rand(32, HEX), "ALGOLIA_APP_ID=latency", "algolia_admin_key"),
        _case("assignment", "COHERE_API_KEY={}", rand(40), "COHERE_MODEL=command-r", "cohere_key"),
        _case("assignment", "MISTRAL_API_KEY={}", rand(32), "MISTRAL_MODEL=mistral-large", "mistral_key"),
        _case("assignment", "SNYK_TOKEN={}", _uuid(), "SNYK_ORG=acme", "snyk_token"),
        _case("assignment", "POSTMARK_SERVER_TOKEN={}", _uuid(), "POSTMARK_FROM=ops@example.com", "postmark_token"),
        _case("assignment", "HEROKU_API_KEY={}", _uuid(), "HEROKU_APP=acme-web", "heroku_legacy_key"),
        _case("assignment", 'x-api-key: {}', rand(40), "x-api-key: {{apiKey}}", "header_api_key"),
        _case("assignment", "VAULT_UNSEAL_KEY={}", base64.b64encode(bytes(_rng_bytes(32))).decode(), "VAULT_ADDR=https://vault.internal:8200", "vault_unseal_key"),
        _case("assignment", "ELASTIC_API_KEY={}", base64.b64encode(f"{rand(20)}:{rand(22)}".encode()).decode(), "ELASTIC_CLOUD_ID=staging", "elastic_api_key"),
        _case("assignment", "SPLUNK_HEC_TOKEN={}", _uuid(), "SPLUNK_INDEX=main", "splunk_hec_env"),
        _case("auth_header", "Authorization: Splunk {}", _uuid(), "Authorization: Splunk $SPLUNK_HEC_TOKEN", "splunk_hec_header"),
        _case("auth_header", "Authorization: ApiKey {}", base64.b64encode(f"{rand(20)}:{rand(22)}".encode()).decode(), "Authorization: ApiKey <base64 id:key>", "elastic_api_key_header"),
        _case("auth_header", "-H 'Authorization: token {}'", rand(40, HEX), "-H 'Authorization: token ${GH_TOKEN}'", "token_scheme_header"),
        _case("cli_password", "redis-cli -h cache.internal -a {} ping", rand(24), "redis-cli -h cache.internal ping", "redis_cli"),
        _case("cli_password", "mc alias set prod https://s3.internal {} ping", f"{rand(20, UPPER)} {rand(40)}", "mc alias list", "minio_alias"),
        _case("cli_password", "sshpass -p {} ssh deploy@host", rand(16), "sshpass -e ssh deploy@host", "sshpass"),
        _case("cli_password", "docker login -u bot -p {} registry.internal", rand(24), "docker login registry.internal", "docker_login"),
        _case("cli_password", "mongosh mongodb://db -u admin -p {}", rand(18), "mongosh mongodb://db -u admin", "mongosh"),
        _case("cli_password", "sqlcmd -S db -U sa -P {}", f"{rand(14)}!", "sqlcmd -S db -E", "sqlcmd"),
        _case("cli_password", "ldapsearch -x -D cn=admin -w {} -b dc=acme", rand(16), "ldapsearch -x -W -b dc=acme", "ldapsearch"),
        _case("cli_password", "keytool -list -keystore ks.jks -storepass {}", rand(16), "keytool -list -keystore ks.jks", "keytool"),
        _case("cli_password", "openssl pkcs12 -in a.p12 -passin pass:{}", rand(16), "openssl pkcs12 -in a.p12 -passin env:P12_PASS", "openssl_passin"),
        _case("cli_password", "smbclient //nas/share -U alice%{}", rand(14), "smbclient //nas/share -U alice", "smbclient"),
        _case("cli_password", "htpasswd -b .htpasswd alice {}", rand(14), "htpasswd -B .htpasswd alice", "htpasswd"),
        _case("cli_password", "7z x backup.7z -p{}", rand(16), "7z x backup.7z", "7zip"),
        _case("cli_password", "psql --host db --password {}", rand(16), "psql --host db --password", "long_password_flag"),
        _case("cli_password", "gh auth login --with-token --token={}", rand(36), "gh auth login --with-token < token.txt", "long_token_flag"),
        _case("basic_auth_credentials", "wget --user alice -u bob:{} https://x", rand(16), "wget --ask-password https://x", "wget_user"),
        _case("netrc_password", "machine api.heroku.com login me@example.com password {}", rand(32, HEX), "machine api.heroku.com login me@example.com", "netrc_line"),
        _case("netrc_password", "machine git.internal\n  login deploy\n  password {}\n", f"{rand(12)}#9", "machine git.internal\n  login deploy\n", "netrc_multiline"),
        _case("pgpass_password", "db.internal:5432:app:app_user:{}", rand(20), "db.internal:5432:app:app_user", "pgpass_line"),
        _case("url_credentials", "redis://:{}@cache.internal:6379/0", rand(24), "redis://cache.internal:6379/0", "redis_url"),
        _case("url_credentials", "mongodb+srv://app:{}@cluster0.mongodb.net/db", rand(20), "mongodb+srv://cluster0.mongodb.net/db", "mongodb_url"),
        _case("url_credentials", "amqp://guest:{}@mq.internal:5672/", rand(18), "amqp://mq.internal:5672/", "amqp_url"),
        _case("url_credentials", "git clone https://x-access-token:{}@github.com/acme/app", rand(36), "git clone https://github.com/acme/app", "git_https_token"),
        _case("url_credentials", "SENTRY_DSN=https://{}@o123456.ingest.sentry.io/4504", rand(32, HEX), "SENTRY_ENVIRONMENT=production", "sentry_dsn"),
        _case("url_credentials", f"cloudinary://{digits(15)}:{{}}@acme", rand(27, URLSAFE), "cloudinary://acme", "cloudinary_url"),
        _case("password", "the admin login is admin / {}", f"Zq{rand(10)}7!", "the admin login is admin / see vault", "prose_login_pair"),
        _case("password", "Password for admin changed to {}", f"{rand(12)}#4", "Password for admin changed to the new policy", "prose_changed_to"),
        _case("password", "the wifi passphrase is {}", f"{rand(8)}-{rand(6)}-7", "the wifi passphrase is on the fridge", "prose_passphrase"),
        _case("password", "my API key is {}", rand(36), "my API key is in the keychain", "prose_api_key"),
        Case("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(openssh) + "\n-----END OPENSSH PRIVATE KEY-----", tuple(openssh), "ssh-keygen -t ed25519 -f ~/.ssh/id_deploy", "openssh_private_key"),
        Case("private_key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(pgp) + "\n-----END PGP PRIVATE KEY BLOCK-----", tuple(pgp), "gpg --export-secret-keys is how", "pgp_private_key"),
        Case("private_key", "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(ec) + "\n-----END EC PRIVATE KEY-----", tuple(ec), "openssl ecparam -genkey -name prime256v1", "ec_private_key"),
        Case("private_key", putty, (*putty_lines,), "puttygen key.ppk -O private-openssh", "putty_private_key"),
    ]


def _rng_bytes(n: int) -> list[int]:
    from tests.secrets_catalogue import _rng

    return [_rng.randrange(256) for _ in range(n)]


def _round4() -> list[Case]:
    """Formats added in round 4 (after the others, so that their values stay as they were)."""
    return [
        _case("plaid_token", "PLAID_ACCESS {}", f"access-production-{_uuid()}", "production access goes through the sandbox first"),
    ]


def build_more() -> list[Case]:
    return _providers() + _contexts() + _round4()
