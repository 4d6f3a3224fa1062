"""Values bound to a secret-ish name: assignments, fields, command flags, headers and prose.

The name decides how much the value must prove. After `password`, `secret` or `token` any
literal that is not code or a placeholder counts; after a qualified key (`api_key`,
`AccountKey`, `client-key-data`) the value must look generated; after a bare `key`, `sig`
or `auth` it must look random beyond doubt. Nothing here looks past the end of a line.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote
from collections.abc import Iterator

from daemon import lexicon
from daemon.scrub.scan import anchored, find_anchored
from daemon.scrub.shape import PLACEHOLDER_WORDS, PUBLIC_PREFIXES, classes, is_code, is_hex, is_path, is_placeholder, is_reference, literal_secret, looks_generated, looks_random, password_like, trie_regex

Span = tuple[int, int, str]

# A secret-ish word inside a name, then the rest of the name and an assignment operator.
_ASSIGN, _ASSIGN_WORDS = anchored(  # run over the lower-cased text
    ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "sig(?:nature)?(?![a-z])", "pat(?![a-z])", "hmac", "sess(?:ion)?[_\\-]?id(?![a-z])", "sid(?![a-z])"),
    r"[A-Za-z0-9_\-]*(?P<close>[\"'\]]{0,2})[ \t]*(?P<op>:=|=>|=(?![=>~])|:(?![:/\\])|\((?=[\"']))[ \t]*",
)
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-$@/]")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _names(role: str) -> frozenset[str]:
    return frozenset(row[0] for row in lexicon.rows("en", "secret_names") if len(row) > 1 and row[1] == role)


# What the words of a name say (lexicon en/secret_names.tsv: the roles are explained there).
STRONG = _names("strong")
KEY_QUALIFIERS = _names("key_qualifier")
_NOT_KEYS = _names("not_key")
_WEAK = _names("weak")
# Tokens that are ids, cursors or counters (AWS's idempotency and pagination tokens).
_NOT_SECRET_TOKENS = _names("not_token")
_SESSIONS = _names("session")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def judge_name(name: str) -> str | None:
    """How much a value bound to `name` must prove: "literal", "random", "session",
    "very_random", or None when the name is not a secret's (`token_type`, `password_file`, `keys`)."""
    words = _words(name)
    if not words:
        return None
    tail, prev = words[-1], words[-2] if len(words) > 1 else ""
    joined = prev + tail
    if "public" in words or "publishable" in words:
        return None  # `publicKeyToken`, `LANGFUSE_PUBLIC_KEY`: published on purpose
    if tail == "token" and prev in _NOT_SECRET_TOKENS:
        return None  # `ChangeToken`, `NextToken`: an idempotency key, a cursor
    if prev in ("hashed", "hash"):
        return "very_random"  # `hashed_password`: a hash, which must at least look like one
    if tail in STRONG or joined in STRONG:
        return "literal"
    if tail == "key":
        return "random" if prev in KEY_QUALIFIERS or (prev and prev not in _NOT_KEYS) else "very_random"
    if tail in ("data", "base", "value") and prev == "key" or tail == "id" and prev == "secret":
        return "random"  # (`secret_id`: Vault's AppRole secret, not an id of one)
    if tail == "token" or prev in ("token", "secret") and tail in ("value", "secret"):
        return "literal"
    if tail in _SESSIONS or joined in _SESSIONS:
        return "session"  # (`PHPSESSID=`, `sessionid=`: a session's id is its credential)
    if tail in _WEAK:
        return "very_random"
    return None


def _value_at(text: str, pos: int) -> tuple[int, int, bool]:
    """(start, end, quoted) of the value that starts at `pos`, on this line only."""
    if pos < len(text) and text[pos] in "\"'`":
        quote = text[pos]
        close = text.find(quote, pos + 1, text.find("\n", pos) if "\n" in text[pos : pos + 400] else pos + 400)
        if close > pos:
            return pos + 1, close, True
        pos += 1
    end = pos
    n = len(text)
    while end < n and text[end] not in " \t\r\n'\"`,;":
        end += 1
    # A closing bracket the value did not open belongs to the code around it: `f(token=x)`.
    while end > pos and text[end - 1] in ")]}>" and text.count(_OPENER[text[end - 1]], pos, end) < text.count(text[end - 1], pos, end):
        end -= 1
    return pos, end, False


_OPENER = {")": "(", "]": "[", "}": "{", ">": "<"}


def _name_start(text: str, pos: int) -> int:
    while pos > 0 and _NAME_CHARS.match(text[pos - 1]):
        pos -= 1
    return pos


def judge_value(value: str, need: str, quoted: bool, spaced: bool, name: str = "", call: bool = False) -> bool:
    """True when `value`, bound to a name that needs `need`, is a secret. A literal passed
    to a call (`setAccessToken("…")`, `getToken("refresh_token")`) must look generated."""
    if value.lower().startswith("base64:"):  # Laravel's APP_KEY
        value = value[7:]
    if call:
        return not is_placeholder(value) and looks_generated(value, 16, allow_hex=True, words=0.6, floor=0.75)
    if need == "literal":
        return literal_secret(value, quoted, spaced, name)
    if is_placeholder(value) or (is_path(value) if quoted else is_code(value, name)):
        return False
    if need == "random":
        return looks_generated(value, 16, allow_hex=True, words=0.75, floor=0.75)
    if need == "session":  # (a UUID or hex is a session's id as a log names it, not a cookie;
        # `ses_…` an agent's session id, as memoryd's own notes name their session)
        if value.startswith(PUBLIC_PREFIXES) or is_hex(value.replace("-", "")):
            return False
        return looks_generated(value, 16, allow_hex=False, words=0.75, floor=0.75)
    # A quoted literal of 128 bits or more in hex is a key too (`key = "9f8a…"`); bare hex
    # after a weak name is more often a digest, a signature or an id (CACHEDIR.TAG's).
    return looks_random(value, 20, allow_hex=quoted and len(value) >= 32 and is_hex(value.replace("-", "")))


def find_assignments(text: str, low: str, starts: list[int] | None = None) -> Iterator[Span]:
    """`NAME=value`, `"name": "value"`, `name: value`, `name := value` with a secret's name
    (`starts`: where _ASSIGN_WORDS start in `low`, when already found)."""
    if "=" in low or ":" in low or "(" in low:  # (what _ASSIGN ends with)
        yield from _find_bound(text, low, starts)
    yield from _find_pairs(text, low)


def _find_bound(text: str, low: str, starts: list[int] | None) -> Iterator[Span]:
    for match in find_anchored(_ASSIGN, low, _ASSIGN_WORDS, starts):
        key_end = match.start("close")
        start = _name_start(text, match.start())
        if text.startswith("//", start) and text[start - 1 : start] == ":":
            continue  # `https://x-access-token:tok@host`: userinfo, which structure.py judges
        name = text[start:key_end].rsplit("/", 1)[-1].lstrip("$@.:-")
        op = match.group("op")
        if op == ":" and name in _RUNNER_STATUS and text[match.end("op") : match.end("op") + 1] in (" ", "\t"):
            continue  # `PASS: gcc.dg/x.c`, `--- PASS: TestX/a=1`: a test runner's verdict
        need = judge_name(name)
        if need is None:
            continue
        vstart, vend, quoted = _value_at(text, match.end())
        if start and text[start - 1] in "?&" and op == "=":  # a URL's query: the value ends at `&`
            amp = text.find("&", vstart, vend)
            vend = vend if amp < 0 else amp
        value = text[vstart:vend]
        if not quoted and _not_bound(text, op, match.end("op"), vend, start, value):
            continue
        if quoted and (text.startswith(("==", "!="), vend + 1) or text[max(0, start - 2) : start] in ('?"', "?'")):
            continue  # `"session"===Z`, `?"reset_password":"signup"`: a comparison, a ternary
        spaced = op == "=" and text[match.start("op") - 1 : match.start("op")] in (" ", "\t") and not quoted
        if name.lower() == "pass" and not password_like(value):
            continue  # `{block:"error",pass:"success"}`: the English word, a status
        if value and judge_value(value, need, quoted, spaced, name, call=op == "("):
            kind = "aws_secret_key" if "aws" in name.lower() and "secret" in name.lower() else "assignment"
            yield vstart, vend, kind


# The verdicts test runners print before a test's name (DejaGnu, go test, TAP, Automake).
_RUNNER_STATUS = frozenset(("PASS", "XPASS", "KPASS"))
_PROSE_AFTER = re.compile(r"[ \t]+[A-Za-z][A-Za-z']*(?:[ \t,.;:!?]|$)", re.M)


def _not_bound(text: str, op: str, op_end: int, vend: int, start: int, value: str) -> bool:
    """An unquoted value that the name does not hold: a type annotation with a default
    (`credentials: OAuth2PasswordRequestForm = Depends()`), or a word of a sentence."""
    if op == ":" and text[vend : vend + 3].lstrip(" \t").startswith("=") and not text[vend : vend + 4].lstrip(" \t").startswith("=="):
        return True
    if op == ":" or (op == "=" and text[op_end : op_end + 1] in (" ", "\t")):
        core = value.rstrip(".,;:!?")
        strong = len(core) >= 8 and classes(core) >= 3 and not re.search(r"(?:^|[\-_])[a-z]{4,}(?:$|[\-_])", core)
        return _in_prose(text, start, vend) and not strong  # (`Base64-encoded credentials`)
    return False


def _in_prose(text: str, name_start: int, value_end: int) -> bool:
    """`name: value` inside a sentence, not a field: "First pass: convert/validate non-keys",
    "credentials: per-team METRICS logger". Words follow the value, or (for the English
    word `pass`) come before the name on its line. (A value mixing three kinds of character
    is still taken: "password: Xk2Tr0ub4dor and the user is bob".)"""
    if _PROSE_AFTER.match(text, value_end):
        return True
    line_start = text.rfind("\n", 0, name_start) + 1
    before = text[line_start:name_start].strip(" \t-#*/'\"{,")
    return bool(before) and text[name_start : name_start + 5].lower() == "pass:" and before[-1:].isalpha()


# A value whose name stands apart: `<password>…</password>`, a Kubernetes or ECS
# environment entry (`- name: X_TOKEN` then `value: …`, `{"name": "X_TOKEN", "value": "…"}`).
# (The name must hold a secret's word, so that the engine gives up early on other tags.)
_SECRET_WORD = r"(?:pass|pwd|secret|token|key|auth|cred)"
_ELEMENT = re.compile(rf"<(?P<name>[\w.\-:]*{_SECRET_WORD}[\w.\-:]*)>[ \t]*(?P<val>[^<\s]{{6,200}})[ \t]*</(?P=name)>")
_PAIR = re.compile(
    rf"name[\"']?[ \t]*[:=][ \t]*[\"']?(?P<name>[\w.\-]*{_SECRET_WORD}[\w.\-]*)[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]+)?)?"
    r"[\"']?value[\"']?[ \t]*[:=][ \t]*"
)


def _find_pairs(text: str, low: str) -> Iterator[Span]:
    if "</" in low:
        for m in _ELEMENT.finditer(low):
            need = judge_name(text[m.start("name") : m.end("name")])
            value = text[m.start("val") : m.end("val")]
            if need and judge_value(value, need, True, False, m.group("name")):
                yield m.start("val"), m.end("val"), "assignment"
    if "value" in low:
        for m in _PAIR.finditer(low):
            name = text[m.start("name") : m.end("name")]
            need = judge_name(name)
            vstart, vend, quoted = _value_at(text, m.end())
            if need and vend > vstart and judge_value(text[vstart:vend], need, quoted, False, name):
                yield vstart, vend, "assignment"


# A secret's flag, found from its last word(s) (`--db-password`, `--oauth2-bearer`, Go's
# single-dash `-token=`): the words, then the dashes and words before them (_FLAG_HEAD).
_FLAG, _FLAG_WORDS = anchored(
    ("password", "passwd", "pass", "pwd", "token", "secret", "api-?key", "apikey", "auth-token", "bearer", "access-key", "secret-key",
     "client-secret", "passphrase", "private-key", "auth", "license-key", "master-key", "encryption-key", "signing-key", "account-key",
     "storage-key", "admin-key", "deploy-key", "app-key"),
    r"(?:=|[ \t]+)(?P<q>[\"']?)(?P<val>[^\s\"'\-][^\s\"']*)",
)
_FLAG_HEAD = re.compile(r"--?(?:[a-z0-9]+-)*")


# A password handed to a command: command words → the flag (group `val`) within the command.
_COMMANDS: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (names, re.compile(regex), kind)
    for names, regex, kind in (
        ("mysql mysqldump mysqladmin mysqlsh mariadb mariadb-dump", r"[ \t]-p(?P<val>[^\s'\"]+)", "cli_password"),
        ("sshpass twine", r"[ \t]-p[ \t]*[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("docker podman helm buildah skopeo oras nerdctl crane regctl az oc cf", r"\blogin\b[^\n|;&]*?[ \t]-p[ \t]*[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("mongo mongosh mongodump mongorestore mongoexport mongoimport", r"[ \t]-p[ \t]+[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("redis-cli", r"[ \t]-a[ \t]+[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("sqlcmd bcp", r"[ \t]-P[ \t]*[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("ldapsearch ldapmodify ldapadd ldapdelete ldapwhoami ldappasswd ldapcompare", r"[ \t]-w[ \t]+[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("zip unzip zipcloak", r"[ \t]-P[ \t]+[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("7z 7za", r"[ \t]-p(?P<val>[^\s'\"]+)", "cli_password"),
        ("keytool", r"[ \t]-(?:store|key|srcstore|deststore|new)pass[ \t]+[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("openssl", r"[ \t]-(?:pass(?:in|out)?[ \t]+[\"']?pass:|k[ \t]+)(?P<val>[^\s'\"]+)", "cli_password"),
        ("smbclient rpcclient smbmap", r"[ \t](?:-U|--user=?)[ \t]*[\"']?[^\s%'\"]+%(?P<val>[^\s'\"]+)", "cli_password"),
        ("htpasswd", r"^(?:[ \t]+-[A-Za-z]+)*[ \t]+-[a-zA-Z]*b[a-zA-Z]*(?:[ \t]+-[A-Za-z]+)*[ \t]+\S+[ \t]+\S+[ \t]+[\"']?(?P<val>[^\s'\"]+)", "cli_password"),
        ("mc", r"^[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S+[ \t]+\S+[ \t]+(?P<val>[^\s'\"`,]+[ \t]+[^\s'\"`,]+)", "cli_password"),
        ("net", r"^[ \t]+use\b(?:[ \t]+[A-Za-z]:)?[ \t]+\\\\\S+[ \t]+(?P<val>[^\s/*'\"][^\s'\"]*)", "cli_password"),
        ("oathtool", r"[ \t](?P<val>[A-Z2-7]{16,}=*)(?![A-Za-z0-9])", "totp_secret"),
        ("curl wget http https xh curlie", r"[ \t](?:-u[ \t]*|--user[= \t][ \t]*)[\"']?[^\s:'\"]+:(?P<val>[^\s'\"`]+)", "basic_auth_credentials"),
        ("curl", r"[ \t](?:-b|--cookie)[ \t]+[\"']?(?:[^\s=;'\"]+=[^\s;'\"]*;[ \t]*)*[^\s=;'\"]*(?:sess|sid|auth|token)[^\s=;'\"]*=(?P<val>[^\s;'\"]{12,})", "cookie"),
    )
)
_COMMAND_OF: dict[str, list[int]] = {}
for _i, (_names_of, _, _) in enumerate(_COMMANDS):
    for _name in _names_of.split():
        _COMMAND_OF.setdefault(_name, []).append(_i)
# A command word where a command starts: after a line start, a shell separator, a quote,
# `sudo`/`$ `/`> ` or `env X=y`; never inside a path, a URL or a word.
_COMMAND = re.compile("(?P<cmd>" + trie_regex(_COMMAND_OF) + r")(?=[ \t])")
COMMAND_WORDS = tuple(_COMMAND_OF)
_NOT_BEFORE_COMMAND = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:-")
# The same, with the character before it: the engine then tries the command words only after
# a space or punctuation, not at every letter. (A word the character before would rule out
# cannot be missed: it starts inside an earlier command word, whose letters rule it out too.)
_COMMAND_AFTER = re.compile(r"[^A-Za-z0-9_./:\-]" + _COMMAND.pattern)
# The commands whose flag pattern does not start with a space or tab and a dash (`[ \t]-p`,
# `[ \t](?:-u|--user)`): a text with no such dash and none of these names holds no
# command's password.
_DASHLESS = tuple(name for names, regex, _ in _COMMANDS if not regex.pattern.startswith(("[ \\t]-", "[ \\t](?:-")) for name in names.split())


# A token handed to a command as its subcommand's argument: `snyk auth <token>`, `ngrok
# config add-authtoken <token>`, `vault login <token>`; it must look generated (a host name,
# a user name or a word does not).
_AUTH_ARGUMENT, _AUTH_WORDS = anchored(
    ("auth", "authtoken", "add-authtoken", "login", "set-token"),
    r"[ \t]+[\"']?(?P<val>[A-Za-z0-9][A-Za-z0-9_\-.]{15,})(?=[\"'`]|[ \t]|$)",
)


def find_auth_arguments(text: str, low: str, starts: list[int] | None = None) -> Iterator[Span]:
    """`snyk auth <token>` (`starts`: where _AUTH_WORDS start in `low`, when already found)."""
    for m in find_anchored(_AUTH_ARGUMENT, low, _AUTH_WORDS, starts):
        if m.start() and (low[m.start() - 1].isalnum() or low[m.start() - 1] in "_-.:/"):
            continue
        value = text[m.start("val") : m.end("val")]
        if not is_placeholder(value) and looks_generated(value, 16, allow_hex=True, words=0.6, floor=0.75) and "." not in value:
            yield m.start("val"), m.end("val"), "cli_password"


def _flag_value(value: str) -> bool:
    if len(value) < 4 or value.startswith(("-", "$", "<", "%", "{")) or is_placeholder(value):
        return False
    return any(c.isdigit() for c in value) or not is_code(value)


def find_commands(text: str, low: str, flag_starts: list[int] | None = None, command_hits: list[tuple[int, int, str]] | None = None) -> Iterator[Span]:
    """Passwords and tokens given to commands: `--password X`, `mysql -pX`, `redis-cli -a X`
    (`flag_starts`: where _FLAG_WORDS start in `low`; `command_hits`: where COMMAND_WORDS
    are, as anchors.Anchors finds them; both searched here when not given)."""
    if "-" in text:
        if flag_starts is not None:  # (a flag's word follows a dash: `--db-password`, `-token`)
            flag_starts = [at for at in flag_starts if low[at - 1 : at] == "-"]
        for m in find_anchored(_FLAG, low, _FLAG_WORDS, flag_starts):
            flag = m.start()
            while flag and (low[flag - 1].isalnum() or low[flag - 1] == "-"):
                flag -= 1
            if flag == m.start() or (flag and low[flag - 1] == "_") or not _FLAG_HEAD.fullmatch(low, flag, m.start()):
                continue  # (no dash before the word, or one inside a longer name: `x_--token`)
            vend = m.end("val")
            while vend > m.start("val") + 1 and not m.group("q") and text[vend - 1] in ".,;:!?)":
                vend -= 1  # (the sentence's: "--ask-password and --password together.")
            value = text[m.start("val") : vend]
            single = low[flag + 1] != "-"  # (`-token=X`, Go's flags: also a word after a dash in prose)
            if not value.startswith("-") and value.isascii() and literal_secret(value, bool(m.group("q")), False) and (not single or password_like(value)):
                yield m.start("val"), vend, "cli_password"
    if " -" not in text and "\t-" not in text:
        for name in _DASHLESS:
            if name in low:
                break
        else:
            return
    # (Command words matched lower-cased: a sentence may start with `Curl -u …`; flags keep their case.)
    if command_hits is None:
        first = _COMMAND.match(low)
        commands = [(m.end(), m.group("cmd")) for m in ((first,) if first else ()) + tuple(_COMMAND_AFTER.finditer(low))]
    else:  # (the word followed by a space or tab, not inside a path, a URL or a longer word)
        commands = [(end, word) for start, end, word in command_hits if low[end : end + 1] in (" ", "\t") and (not start or low[start - 1] not in _NOT_BEFORE_COMMAND)]
    for command_end, word in commands:
        end = _COMMAND_END.search(text, command_end)  # (a lone `&` may be a password's, typed into a prompt)
        stop = end.start() if end else len(text)
        for index in _COMMAND_OF[word]:
            _, pattern, kind = _COMMANDS[index]
            for flag in pattern.finditer(text[command_end:stop]):
                if all(_flag_value(v) for v in flag.group("val").split()):
                    yield command_end + flag.start("val"), command_end + flag.end("val"), kind


_COMMAND_END = re.compile(r"[\n|;]|&&")
_HEADER = re.compile(  # run over the lower-cased text
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?P<scheme>[A-Za-z][\w\-]*)[ \t]+)?(?P<val>[A-Za-z0-9._~+/=\-:]{8,})"
)
# HTTP authentication schemes (IANA's registry and the common vendor ones).
_SCHEMES = frozenset(
    "basic bearer digest token negotiate ntlm hoba mutual vapid oauth dpop gnap privatetoken scram-sha-1 scram-sha-256 "
    "aws4-hmac-sha256 hmac ssws splunk apikey api-key key sharedkey sharedaccesssignature sso-key klaviyo-api-key "
    "genieKey dsn".lower().split()
)
_SCHEME, _SCHEME_WORDS = anchored(("bearer", "basic", "ssws", "splunk", "token"), r"[ \t]+(?P<val>[A-Za-z0-9._~+/=\-]{16,})")


def _empty_basic(value: str) -> bool:
    """Basic credentials that hold no secret: `user:` (no password), `user:pass`, or words
    that are no base64 (`base64_encoded_creds`)."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except binascii.Error:  # not base64: words describing the credentials, or a token anyway
        return not looks_generated(value, 12, allow_hex=True, words=0.6, floor=0.75)
    except ValueError:
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon) and (not password or password.lower() in PLACEHOLDER_WORDS)


# A cookie header's pairs (`Cookie: a=1; sid=…`, `Set-Cookie: PHPSESSID=…; Path=/`, a HAR
# file's `{"name": "Cookie", "value": "a=1; sid=…"}`): a session id is a credential; the
# attributes after a Set-Cookie's first pair are not. (Matched where `cookie` is.)
_COOKIE_AT = re.compile(r"cookie(?:[\"']?[ \t]*:|[\"'][ \t]*,\s*[\"']value[\"'][ \t]*:)[ \t]*[\"']?(?P<pairs>[^\n\"'`]+)")
_COOKIE_PAIR = re.compile(r"[ \t]*(?P<name>[^=;\s]+)=(?P<val>[^;\s]*)")
_COOKIE_ATTRIBUTES = frozenset("path domain expires max-age samesite secure httponly partitioned priority version comment".split())
_COOKIE_NAMES = ("sess", "sid", "auth", "token", "jwt", "remember", "login", "secret")


def find_cookies(text: str, low: str) -> Iterator[Span]:
    """Cookie values that are credentials: a session's, an auth token's, or random ones."""
    at = low.find("cookie")
    while at >= 0:
        m = _COOKIE_AT.match(low, at)
        at = low.find("cookie", at + 6)
        if not m:
            continue
        pos, end = m.start("pairs"), m.end("pairs")
        while pos < end:
            pair = _COOKIE_PAIR.match(text, pos, end)
            if not pair:
                break
            name, value = pair.group("name").lower(), unquote(pair.group("val"))
            if value.startswith("s:") and "." in value:  # an Express signed cookie: `s:<id>.<signature>`
                value = value[2:].replace(".", "")
            if name not in _COOKIE_ATTRIBUTES and len(value) >= 16 and not is_placeholder(value):
                named = any(word in name for word in _COOKIE_NAMES)
                if named and looks_random(value, 16, allow_hex=True, words=0.6, floor=0.6) or looks_random(value, 20, allow_hex=True):
                    yield pair.start("val"), pair.end("val"), "cookie"
            semicolon = text.find(";", pair.end(), end)
            pos = end if semicolon < 0 else semicolon + 1


def find_headers(text: str, low: str, starts: list[int] | None = None) -> Iterator[Span]:
    """`Authorization: <scheme> <credentials>` and bare `Bearer <token>` (`starts`: where
    _SCHEME_WORDS start in `low`, when already found)."""
    if "authorization" in low:
        for m in _HEADER.finditer(low):
            value = text[m.start("val") : m.end("val")]
            scheme = m.group("scheme")
            if scheme == "basic" and _empty_basic(value):
                continue  # (and `Basic base64_encoded_creds`, which is no base64)
            if not is_placeholder(value) and not is_reference(value) and (scheme in _SCHEMES or looks_random(value, 12, True)):
                yield m.start("val"), m.end("val"), "auth_header"
    for m in find_anchored(_SCHEME, low, _SCHEME_WORDS, starts):
        if m.start() and (low[m.start() - 1].isalnum() or low[m.start() - 1] in "-_") or low[m.start("val")] == "-":
            continue
        value = text[m.start("val") : m.end("val")]
        if not is_placeholder(value) and looks_random(value.rstrip("="), 16, allow_hex=True):
            yield m.start("val"), m.end("val"), "auth_header"
