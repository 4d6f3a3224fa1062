"""Held-out robustness: credentials of formats nobody listed, in syntaxes the catalogue does
not use, are caught; code that only names a secret is not.

Everything is generated from fixed seeds: random values of realistic shapes (base62, hex,
base64, url-safe base64, base32, base36; 20 to 64 characters; with or without a vendor
prefix) bound to keyword contexts in env files, JSON, YAML, TOML, INI, XML, code, command
flags, headers and prose; and near misses made of the same words: identifiers, calls,
attributes, type annotations, references (`$VAR`, `${{ secrets.X }}`), placeholders.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from daemon.scrub import redact

ALNUM = string.ascii_letters + string.digits
ALPHABETS = {
    "base62": ALNUM,
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "urlsafe": ALNUM + "-_",
    "base32": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    "base36": string.ascii_lowercase + string.digits,
}
VENDORS = "acme zorbit quillr vantix helio plinth mobius tarnly korvo nimbusx".split()


def _value(rng: random.Random) -> str:
    """A generated credential: a random string of one alphabet, maybe base64 of random bytes,
    maybe behind a vendor prefix (`zrb_live_`, `qx-`)."""
    n = rng.randint(20, 64)
    kind = rng.choice([*ALPHABETS, "base64"])
    while True:
        if kind == "base64":
            body = base64.b64encode(rng.randbytes(n * 3 // 4)).decode()
        else:
            body = "".join(rng.choice(ALPHABETS[kind]) for _ in range(n))
        # A real generator's output: letters and digits both (a run of letters is a word).
        if any(c.isdigit() for c in body) and any(c.isalpha() for c in body) and "--" not in body and not body.startswith(("-", "_")):
            break
    prefix = rng.choice(["", "", "", f"{rng.choice('qzxv')}{rng.choice('rkw')}b_live_", f"{rng.choice('qzx')}{rng.choice('jkw')}-"])
    return prefix + body


# `{v}` the value, `{n}` a vendor, `{N}` the vendor in upper case.
CONTEXTS = {
    "env": ["{N}_API_KEY={v}", "export {N}_SECRET_KEY=\"{v}\"", "{N}_ACCESS_TOKEN='{v}'", "ENV {N}_AUTH_TOKEN={v}",
            "  - {N}_CLIENT_SECRET={v}", "set {N}_PASSWORD={v}", "$env:{N}_TOKEN = \"{v}\""],
    "json": ['{{"{n}_api_key": "{v}"}}', '{{"clientSecret": "{v}", "clientId": "{n}-web"}}', '  "accessToken": "{v}",',
             '{{"auth": {{"token": "{v}"}}}}', '{{"password":"{v}"}}'],
    "yaml": ["{n}:\n  api_token: {v}", "password: \"{v}\"", "  secret_key: '{v}'", "stringData:\n  {n}-token: {v}",
             "- name: {N}_SECRET\n  value: {v}"],
    "toml_ini": ["[{n}]\napi_key = \"{v}\"", "[database]\npassword = {v}", "secret = '{v}'", "{n}.auth_token=\"{v}\""],
    "code": ['client = {N}Client(api_key="{v}")', "const apiKey = \"{v}\";", "let secret = '{v}'", "config.password = \"{v}\"",
             '\tToken: "{v}",', 'os.environ["{N}_API_KEY"] = "{v}"', '$client->setAccessToken("{v}");', "private static final String SECRET = \"{v}\";",
             "{n}_token := \"{v}\""],
    "markup": ["<password>{v}</password>", '<{n} apiKey="{v}"/>', "Server=db;User Id=sa;Password={v};", "{n}.secret={v}"],
    "cli": ["{n} deploy --api-key {v}", "{n} login --token={v}", "{n}ctl --password \"{v}\" sync", "curl -u admin:{v} https://{n}.example.com",
            "{n} auth --client-secret {v}", "docker login -u ci -p {v} registry.{n}.io"],
    "headers": ["Authorization: Bearer {v}", "authorization: Token {v}", "X-Api-Key: {v}", "X-{N}-Token: {v}",
                "curl -H \"X-Auth-Token: {v}\" https://api.{n}.io", 'headers = {{"X-API-KEY": "{v}"}}', "Authorization: Basic {v}"],
    "prose": ["the password is {v}", "my {n} api key is {v}", "Password for admin changed to {v}", "the login is admin / {v}",
              "credentials: deploy / {v}", "The {n} token was {v}, rotate it", "set the secret to {v} before running"],
    "url": ["https://bot:{v}@{n}.example.com/hook", "postgres://app:{v}@db.{n}.internal:5432/app",
            "https://api.{n}.io/v1?api_key={v}"],
}


def _positives(family: str, count: int = 40) -> list[tuple[str, str]]:
    rng = random.Random(f"held-out {family}")
    out = []
    for _ in range(count):
        vendor = rng.choice(VENDORS)
        value = _value(rng)
        out.append((rng.choice(CONTEXTS[family]).format(v=value, n=vendor, N=vendor.upper()), value))
    return out


@pytest.mark.parametrize("family", sorted(CONTEXTS))
def test_unseen_formats_bound_to_a_keyword_are_caught(family):
    missed = [text for text, value in _positives(family) if value in redact(text)]
    assert not missed, missed


WORDS = "user account session client request config default current new old cached remote local refresh".split()
SECRET_WORDS = "token password secret api_key access_token secret_key auth_token client_secret passwd pwd".split()
# Near misses: code and config that name a secret and hold none.
NEAR_MISSES = [
    "{k} = get_{k}()", "{k} = {k}s[i]", "{k}: Optional[str] = None", "def login({w}, {k}):", "self.{k} = {k}",
    "const {c} = await get{C}();", "{K}=${K}", "{K}=${{{K}}}", "{k}: ${{{{ secrets.{K} }}}}", '{k}: "<your-{d}>"',
    "{K}=xxxxxxxxxxxxxxxx", "{k}=changeme", "{K}=your-{d}-here", "--{d} ${K}", "Authorization: Bearer ${{{K}}}",
    "Authorization: Bearer <{d}>", "X-Api-Key: {{{{ {k} }}}}", '{k} = os.environ["{K}"]', '{k}_url = "https://auth.example.com/oauth/{d}"',
    '{k}_header = APIKeyHeader(name="X-API-Key")', "{k} = hashlib.sha256({w}.encode()).hexdigest()", "{k}: SecretStr",
    "{c}?: string;", "{k}: string | undefined;", "if not {w}.{k}:", "{k} = request.headers.get('Authorization')",
    "{k} = {w}_{k} or default_{k}", "{k} = None  # set by {w}_login()", "return {c}.{c}Value", "{K}: ${{{{ vars.{K} }}}}",
    "{k} = settings.{K}", "{k}=$(cat /run/secrets/{d})", "{k} = '{{{w}}}'", "{k} = f\"{{{w}}}_{{{k}}}\"", "{k} = ''",
    "{k} = b''", "{k}_len = 32", "{k} = {w}.{k} if {w} else None", "assert {k} == expected_{k}", "{k} = \"%({k})s\"",
    "{k}=***", "{k}: '********'", "{k} = '[REDACTED]'", "{k} = process.env.{K}", "{k} := os.Getenv(\"{K}\")",
    "{k}, err := {w}.{C}()", "{k} = sha256sum({w}_file)", "{K}_FILE=/etc/{w}/{d}.txt", "{k}: !vault |", "{k} = ENV.fetch(\"{K}\")",
]


def _near_misses() -> list[str]:
    rng = random.Random("held-out near misses")
    out = []
    for template in NEAR_MISSES:
        for _ in range(3):
            k = rng.choice(SECRET_WORDS)
            words = k.split("_")
            camel = words[0] + "".join(w.title() for w in words[1:])
            out.append(template.format(k=k, K=k.upper(), c=camel, C=camel[0].upper() + camel[1:], w=rng.choice(WORDS), d=k.replace("_", "-")))
    return out


def test_code_that_names_a_secret_survives():
    mangled = [(text, redact(text)) for text in _near_misses() if redact(text) != text]
    assert not mangled, mangled


def test_digests_and_ids_beside_a_secret_word_survive():
    """Random-looking values that are not credentials even after a secret's name."""
    rng = random.Random("held-out digests")
    hexes = lambda n: "".join(rng.choice("0123456789abcdef") for _ in range(n))  # noqa: E731
    texts = []
    for _ in range(10):
        digest = base64.b64encode(rng.randbytes(64)).decode()
        uuid = "-".join(hexes(n) for n in (8, 4, 4, 4, 12))
        texts += [
            f'"integrity": "sha512-{digest}"', f"token_sha256 = sha256:{hexes(64)}", f"commit {hexes(40)}",
            f"session_id = {uuid}", f'"resolved": "https://registry.npmjs.org/x/-/x-1.0.0.tgz#{hexes(40)}"',
            f"key_id: {uuid}", f'"@octokit/auth-token": "^{rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"',
        ]
    mangled = [(text, redact(text)) for text in texts if redact(text) != text]
    assert not mangled, mangled


# False positives bench_scrub.py found in real text (the standard library, installed
# packages, an npm lockfile, this repository's history), each reduced to its line.
FOUND_ON_REAL_TEXT = [
    "self.identical(fromHex('0x6487ed5110b460p-53'), pi)",
    '"""H4sICM2D1UIAA3RleHQAC8nILFYAokSFktSKEoW0zJxUPa7wzJIMhZLyfIWczLzUYj0uAHTs',
    "--NMuMz9nt05w80d4+--",
    "Subject: =?iso-8859-1?b?SGVsbG8sIFf2cmxkISBTY2jkZmVyIG3k?=\n 'YWwuIE3hciByZW5kZWx06Ww/?=\\n\\n')",
    '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_SK_END = b"-----END OPENSSH PRIVATE KEY-----"\n\nrest of the module',
    r'r"(?:password|passcode)\s+(?:is|was|to)\s+(?P<val>\S+)"',
    "`.netrc` lines (`machine h login u password p`)",
    '"@octokit/auth-token": "^4.0.0",\n"@jest/reporters/password": ">=1.2.3-rc.1",',
    "MultiHostUrl('https://foo.com:123,foo:bar@bar.com/path')",
    "'sodium_crypto_aead_xchacha20poly1305_ietf_encrypt',",
    "https://host:8080/path/to/a@b.example",
]


# What those fixes border on, still caught.
STILL_CAUGHT = [
    ('machine db.example.com login app password "k9 Tq!zr 4w" account x', '"k9 Tq!zr 4w"'),
    ("https://bot:jL4OtCeJSsfyYvLyBkr/EH9wZMUYfmPN5YLmlQ==@hooks.example.com/x", "jL4OtCeJSsfyYvLyBkr/EH9wZMUYfmPN5YLmlQ=="),
    ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F1A\n\nMIIEowIBAAKCAQEAx7aP0q9Lm2Zk4Rt", "MIIEowIBAAKCAQEAx7aP0q9Lm2Zk4Rt"),
]


# False positives found on installed packages this suite never reads (a second, larger
# virtualenv: botocore, litellm, sqlalchemy, networkx, fastapi, Next.js build output).
FOUND_ON_OTHER_PACKAGES = [
    '      "output_token": "CloudFrontOriginAccessIdentityList.NextMarker",',
    '      "output_token": "Jobs[-1].JobId",',
    "        # First pass: convert/validate non-keys, and short-circuit on missing keys",
    "# Team-scoped credentials: per-team METRICS logger, isolated per",
    '        "input_cost_per_token": 2.5e-06,',
    '        return web.json_response({"access_token": "new-access", "refresh_token": "old-refresh"})',
    'DEFAULT_PASSWORD = "serve-routing-e2e-password"',
    'custom_litellm_api_key = "x-litellm-api-key"',
    '            "access_token": "glpat_***",',
    '        await cognee.serve(url="https://my-instance.cognee.ai", api_key="ck_...")',
    '                "api_key": "os.environ/PERPLEXITYAI_API_KEY"',
    '    {"Authorization": "Bearer os.environ/COHERE_API_KEY"}',
    "    Authorization: Bearer deadbeef12346",
    '0:{"b":"ZhMFnleSiLMOj1jOKdhqS","t":{"t":{"s":"","h":80,"c":"$Q1"}}}',
    '          "jobId": "zbxcm3Z_3z5UkoroF7SuZKrxgGoDc3RloGduS7Eg-RO47Yc6FxsdGBgf_Q2DK5Ejh18CnTS5XW4",',
    '          "location": "/111122223333/vaults/my-vault/archives/NkbByEejwEggmBz2fTHgJrg0XBoDfjP4q6iu87-TjhqG6eGoOY9Z8i1",',
    'CHATGPT_CLIENT_ID: Final = "app_EMoamEEZ73f0CkXaXp7hrann"',
    '                    " gdrive://15eC3e5MNew2XAIefWNlG8VlEa0ISnnaG/..."',
    "           https://www.scielo.br/j/pope/a/XHswBwRwJyrfL88dmMwYNWp/?lang=en",
    '    e = create_engine("postgresql://scott:tiger@localhost/test")',
    '    explicit_url = "postgresql+asyncpg://cognee:cognee@localhost:5432/cognee_db"',
    "# The default user has no password until a server started with",
    "> If you want to hash passwords in an application, this package is **not** for you.",
    ' "ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f",',
    'this.apiKey="string"==typeof t?t:null,this.authToken=s',
    '{variant:"reset_password"===e?"reset_password":"signup"}',
    "            oauth_client_secret: OAuth2 client secret",
    " - api_key: Optional. The API key to use.",
    " credentials: OAuth2PasswordRequestForm = Depends(),",
    'console.error("Error creating SCIM token:",e),h.f.fromError(d("x"))',
    '"""resolve_websocket_query_param_fallback: the ?token= WS-only fallback.',
    'client = openai.OpenAI(api_key="anything",base_url="http://0.0.0.0:8000")',
    'SECRET = "test-secret-0123456789abcdef0123456789"',
    'def _user(hashed_password="hash-v1"):',
    "names joined by `_` have a few: `chacha20poly1305_encrypt`",
    "AAAAAAAAAAAAAAAAAAAAHQAAAABAAIAAwAEAAUABgAHAAgACQAKAAsADAANAA4ADwAQABEAEgATAB/w//C/9MAAP",
    ' "ReplicationInstanceArn": "arn:aws:dms:us-east-1:123456789012:rep:6UTDJGBOUS3VI3SUWA66XFJCJQ",',
    ' "CodeSha256": "YFgDgEKG3ugvF1+pX64gV6tu9qNuIYNUdgJm8nCxsm4=",',
    " total_size += _VarUInt64ByteSizeNoTag(message_size)",
    " PracticalPy31520261027 = \"practical-py315-20261027\"",
    " rediss://[[username]:[password]]@localhost:6379/0",
    'kenMissing":"Access token not found","generatingResetLink":"Generating password reset link...","resetLinkFailed":"x"',
    " # Per-target authorization: the route-level gate accepts this call when",
    ' ) # e.g. "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6..."',
    ' eg. `{"LANGFUSE_PUBLIC_KEY": "kFiKa1VZukMmD8RB6WXB9F......."}`',
    'fetch(s,{method:"POST",body:n,credentials:"include",headers:{}})',
    " :type credentials: :py:class:`~botocore.credentials.Credentials`",
    ' "S3Key": "my-app/5026-stage-150723_224258.war"',
    " host, port, access_key, secret_key = s3_connection",
    'let eX={block:"error",pass:"success",logged:"warning"}',
    "function er({guardrailId:e,onBack:s,accessToken:r=null,startDate:o}){",
    ' "Authorization": "Basic YWJjOg=="',
    ' "https://x-access-token:tok@github.com/org/repo",'.replace("tok@", "[REDACTED:url_credentials]@"),
    "    api_key=\"ollama\",",
    " graph_database_password=NEO4J_PASSWORD,",
    " self, credentials: OAuth2PasswordRequestForm",
    " credentials: Base64-encoded credentials (client_id:client_secret)",
    ' publicKeyToken="1fc8b3b9a1e18e3b"></assemblyIdentity>',
    ' "MasterUserPassword": "mynewpassword",',
    " - x-mcp-deepwiki-authorization: Basic base64_encoded_creds",
    '              "DiskId": "pci-0000:03:00.0-scsi-0:0:1:0",',
    "    IPv6 loopback ``0:0:0:0:0:0:0:1``.",
    "        ipv6 = ip_interface('2001:658:22a:cafe:200::1/64')",
    '        """Set default password for encrypted files."""',
]


STILL_CAUGHT += [
    ("password: Xk2Tr0ub4dor then log in as bob", "Xk2Tr0ub4dor"),
    ("export API_TOKEN=Xk2Tr0ub4dorQ9zLm3 and run", "Xk2Tr0ub4dorQ9zLm3"),
    ('"sessionId": "zbxcm3Z3z5UkoroF7SuZKrxgGoDc3RloGduS7Eg"', "zbxcm3Z3z5UkoroF7SuZKrxgGoDc3RloGduS7Eg"),
    ("NextToken: Xk2Tr0ub4dorQ9zLm3PwR7vN", "Xk2Tr0ub4dorQ9zLm3PwR7vN"),
    ("git clone https://Xk2Tr0ub4dorQ9zLm3PwR7vNabc@github.com/acme/app", "Xk2Tr0ub4dorQ9zLm3PwR7vNabc"),
    ('password = "Hunter2Secret"', "Hunter2Secret"),
    ("then it printed zrb_live_Xk2Tr0ub4dorQ9zLm3PwR7vN and exited", "Xk2Tr0ub4dorQ9zLm3PwR7vN"),
    ("twitter AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F",
     "MLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F"),
    ("Authorization: Basic YWxpY2U6WGsyVHIwdWI0ZG9y", "YWxpY2U6WGsyVHIwdWI0ZG9y"),
    ("machine git.acme.io login deploy password Xk2Tr0ub4dor", "Xk2Tr0ub4dor"),
    ('echo "machine git.acme.io login deploy password Xk2Tr0ub4dor" >> ~/.netrc', "Xk2Tr0ub4dor"),
    ("DB_PASSWORD = Xk2Tr0ub4dor_42", "Xk2Tr0ub4dor_42"),
    ("Found it in the config. db.internal:5432:app:app_user:Xk2Tr0ub4dorQ9zLm3Pw", "Xk2Tr0ub4dorQ9zLm3Pw"),
    ("Found it. machine api.heroku.com login me@example.com password 0123abcd4567ef890123abcd4567ef89", "0123abcd4567ef890123abcd4567ef89"),
]


@pytest.mark.parametrize("text", FOUND_ON_REAL_TEXT + FOUND_ON_OTHER_PACKAGES)
def test_false_positives_found_on_real_text_stay_fixed(text):
    assert redact(text) == text


@pytest.mark.parametrize("text,value", STILL_CAUGHT)
def test_what_those_fixes_border_on_is_still_caught(text, value):
    assert value not in redact(text)
