"""Pure judgements of a candidate value: does it look random, like code, like a placeholder?

Every detector that is not a known format ends here: a value next to the word `password`
is only a secret when its shape says so. Code (`tokens[i]`, `self.api_key`, `os.getcwd()`,
`str`, `$TOKEN`, `${{ secrets.X }}`, a path) and placeholders (`<token>`, `xxxx`,
`your-api-key`) are not; random-looking strings (length, character classes, entropy, few
dictionary-like runs) are.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

_DIGIT, _LOWER, _UPPER, _SYMBOL = (re.compile(c) for c in ("[0-9]", "[a-z]", "[A-Z]", "[^A-Za-z0-9]"))
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9+/=_\-.~:]+$")
# Runs that read like words: `Token`, `refresh`, `HTTP`. Random strings have few of them.
_WORD_RUN = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Five consonants in a row, which no word of a name has (`Ugtgzj`): a camel-cased value
# with one is random letters, not `OAuth2PasswordRequestForm`.
_UNSPOKEN = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5}")
_DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$]*)+(?:\(.*)?$")
_CAMEL_HUMP = re.compile(r"[a-z][A-Z]")
_CAMEL_WORDS = re.compile(r"^[a-z]*(?:[A-Z]+[a-z]*)+$")
_SPACED_LITERAL = re.compile(r"^[A-Za-z0-9!@#%^&_\-.~]+$")
# `$TOKEN`, `${TOKEN}`, `${{ secrets.TOKEN }}`, `$(pass show x)`, `%(password)s`, `%TOKEN%`,
# `{{ .Values.token }}`, `{password}`, `<password>`, `@Value`, `#{…}`, `%s`, `{}`.
# `os.environ/NAME` (LiteLLM's config), `process.env.NAME`, `env:NAME`.
_REFERENCE = re.compile(r"^(?:\$|#|%[\w(]|%s$|\{|<|@|#\{|\(|\[REDACTED|![A-Za-z]|(?:os\.environ|process\.env|env)[./:\[])|://")
# An expression: optional chaining, `??`, `&&`, `||`, a ternary (`x?o:null`), a format (`%s`).
_EXPRESSION = re.compile(
    r"\?\.|\?\?|&&|\|\||^[\w.]+\?[\w.]+:[\w.]+$|%[sdr](?![A-Za-z0-9])|^:[a-z]+:"  # `:py:class:` (a Sphinx role)
    r"|^[A-Za-z_$][\w$]*=(?:null|undefined|void 0|true|false|!0|!1|\[\]|\{\}|\"\"|'')$"  # `r=null`: a default
)
# A snake_case name (`s3_connection`): code when it stands unquoted after ` = `.
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+$")
# `NEO4J_PASSWORD`, `_sa_default`: a constant's name, a sentinel.
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^_+[a-z]+(?:_[a-z]+)*$")
_PATHLIKE = re.compile(
    r"^(?:~?/|\.\.?/|[A-Za-z]:\\|\\\\)|\.(?:pem|key|json|txt|ya?ml|toml|env|cfg|conf|ini|p12|pfx|crt|der|pub|gpg|asc|age)$"
    r"|^[\w.\-]+(?:/[\w.\-]+)+\.[A-Za-z][A-Za-z0-9]{0,4}$"  # `my-app/5026-stage.war`: an object's key
)
TYPE_WORDS = frozenset(
    "str string int integer bool boolean bytes bytearray number float double any unknown object none null "
    "undefined optional list dict tuple set secretstr secretbytes char varchar text void never record "
    "true false yes no nil required optional readonly".split()
)
PLACEHOLDER_WORDS = frozenset(
    "password passwd pass pwd secret token key apikey api_key api-key credential credentials value "
    "changeme change_me changeit example sample dummy fake test testing redacted hidden masked "
    "placeholder replace_me replaceme todo fixme tbd xxx yyy foo bar baz qux empty blank default "
    "mypassword mysecret mytoken yourpassword yoursecret yourtoken secretkey secret_key accesskey "
    "hunter2 letmein admin root user username guest demo sekret s3cret p4ssw0rd passw0rd tiger anything "
    "whatever unused ignored none not-needed not-used no-key include omit same-origin ollama".split()
)
_PLACEHOLDER_PARTS = ("your", "xxxx", "***", "...", "…", "placeholder", "changeme", "replace", "dummy", "example", "insert", "redacted", "deadbeef", "<", ">")
# Words that say what a value is for or that it is not real: a value made of nothing but
# words and small numbers with one of these in it is a label (`new-access`, `base-key`,
# `secret-for-test`, `serve-e2e-password`, `PassWordMustBeAtLeast6Chars`), not a secret.
_SELF_WORDS = frozenset(
    "password passwd pass pwd word secret token key test testing fake mock mocked dummy demo sample example "
    "invalid wrong bad access refresh default".split()
)
_LABEL = re.compile(r"^(?:[A-Za-z]+|[A-Za-z0-9]{1,3})(?:[\-_.](?:[A-Za-z]+|[A-Za-z0-9]{1,3}))+$|^(?P<word>[A-Za-z]+)[0-9]{1,4}$")
_PHRASE = re.compile(r"^[a-z0-9]+(?: [a-z0-9]+){2,7}$")  # four to eight lower-case words, no sentence
_FLOAT = re.compile(r"^[+\-]?(?:[0-9]+\.[0-9]+|[0-9]+(?:\.[0-9]+)?[eE][+\-]?[0-9]+)$")

# A version or a version range (`^4.0.0`, `~1.2`, `>=2.0.0-rc.1`, `v1.18.33`): the value of a
# dependency named `@octokit/auth-token` in a lockfile, never a secret.
_VERSION = re.compile(r"^(?:[\^~<>=]{0,2}[ \t]*v?[0-9]+(?:\.[0-9x*]+){1,3}(?:[-+][0-9A-Za-z.\-]+)?(?:[ \t]*(?:\|\||-|,)?[ \t]*)?)+$")
_PLACEHOLDER_STARTS = ("my-", "my_", "the-", "the_", "some-", "some_", "test-", "test_", "fake", "sample", "demo", "mock")


def entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def word_share(value: str) -> float:
    """The share of `value` covered by word-like runs (`refresh`, `Token`, `HTTP`)."""
    return sum(len(w) for w in _WORD_RUN.findall(value)) / len(value) if value else 0.0


_RUNS = ("0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SEQUENCE = re.compile("|".join(run[i : i + 4] for run in _RUNS for i in range(len(run) - 3)) + r"|(.)\1\1\1")


def _sequential_share(value: str) -> float:
    """The share of `value` in runs that count up or repeat (`abcdef`, `0123`, `aaaa`)."""
    return 4 * len(_SEQUENCE.findall(value)) / len(value) if value else 0.0


def classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols `value` uses."""
    return sum(bool(p.search(value)) for p in (_LOWER, _UPPER, _DIGIT, _SYMBOL))


def is_hex(value: str) -> bool:
    return bool(_HEX.match(value))


def looks_random(value: str, min_len: int = 20, allow_hex: bool = False, words: float = 0.45, floor: float = 0.82) -> bool:
    """True when `value` has the shape of a generated secret rather than a word or a digest.

    Random strings of a token alphabet mix letters and digits, spread over many distinct
    characters (entropy near the most their length allows: `floor` of it), and rarely read
    as words. A name that says "secret" lets a value prove less (a lower `floor`).
    """
    n = len(value)
    if n < min_len or not _DIGIT.search(value) or not _TOKEN_CHARS.match(value):
        return False
    has_lower, has_upper = bool(_LOWER.search(value)), bool(_UPPER.search(value))
    if not (has_lower or has_upper):
        return False
    if is_hex(value.replace("-", "")):
        if not allow_hex:
            return False
        alphabet = 16
    elif has_lower and has_upper:
        alphabet = 62
    else:
        alphabet = 36
    ceiling = math.log2(min(n, alphabet))
    if entropy(value) < floor * ceiling:
        return False
    # Hex has no words; elsewhere a random string rarely has more than a third in word runs.
    # In one case with many digits (base36, base32) letters run together by chance: the digits
    # spread through it are the sign of a generated string there (base32 has six
    # digits of 32; names joined by `_` have a few: `chacha20poly1305_encrypt`).
    if alphabet == 36 and len(_DIGIT.findall(value)) >= (0.1 if value.isalnum() else 0.15) * n:
        pass
    elif alphabet != 16 and word_share(value) >= (words if alphabet == 62 else words - 0.1):
        return False
    return _sequential_share(value) <= 0.3


def is_reference(value: str) -> bool:
    """`$TOKEN`, `${{ secrets.X }}`, `os.environ/NAME`, `<token>`, `%(password)s`: a value named, not given."""
    return bool(_REFERENCE.search(value))


def is_path(value: str) -> bool:
    """`/etc/app/token`, `./key.pem`, `C:\\keys`; not base64 that happens to start with `/`
    (a path has no `+`, no `=` padding, and reads as words between its slashes)."""
    if not _PATHLIKE.search(value):
        return False
    if value.startswith("/") and ("+" in value or value.endswith("=") or looks_random(value.replace("/", ""), 20)):
        return False
    return True


def is_version(value: str) -> bool:
    """A version, a version range or a decimal number (`^4.0.0`, `2.5e-06`)."""
    return bool(_VERSION.match(value) or _FLOAT.match(value))


def is_label(value: str) -> bool:
    """Words and small numbers joined by `-`, `_` or `.`, one of them a word that names a
    secret or a test (`new-access`, `lin_oauth_SECRET_TOKEN_VALUE`), or such a word and a
    number (`password123`). (`Hunter2Secret` is no label: nothing joins its words.)"""
    m = _LABEL.match(value)
    if not m:
        return False
    words = [m.group("word")] if m.group("word") else re.split(r"[\-_.]", value)
    return any(word.lower() in _SELF_WORDS for word in words)


# A vendor's prefix before a generated body: `zrb_live_`, `qx-`, `acme_sk_`.
_VENDOR_PREFIX = re.compile(r"^[A-Za-z]{1,10}(?:[_\-][A-Za-z]{2,8}){0,2}[_\-]")


# Random-looking but public: SSH public key blobs, publishable keys, digests named by prefix,
# and the ids of sessions, messages, parts and calls (OpenCode, model APIs, Stripe objects).
PUBLIC_PREFIXES = (
    "AAAA", "sha", "SHA", "pk_live_", "pk_test_", "pk.eyJ", "npub1", "age1",
    "ses_", "msg_", "prt_", "prj_", "per_", "que_", "tool_", "call_", "toolu_", "srvtoolu_", "req_", "chatcmpl-",
    "resp_", "run_", "thread_", "asst_", "file-", "file_", "batch_", "ftjob-", "org-", "proj_", "user-", "evt_",
    "cus_", "pi_", "ch_", "in_", "sub_", "price_", "prod_", "acct_", "pm_", "seti_", "src_", "txn_", "po_", "tr_",
)

def looks_generated(value: str, min_len: int = 16, allow_hex: bool = True, words: float = 0.75, floor: float = 0.82) -> bool:
    """looks_random(), or a vendor's prefix before a body that looks random by itself (the
    prefix's letters would count as words, and its case can differ from the body's)."""
    if looks_random(value, min_len, allow_hex, words, floor):
        return True
    m = _VENDOR_PREFIX.match(value)
    return bool(m) and len(value) - m.end() >= 16 and looks_random(value[m.end() :], 16, allow_hex, words, floor)


def is_placeholder(value: str) -> bool:
    """True for values that stand in for a secret: `<token>`, `xxxx`, `your-api-key`, `changeme`."""
    bare = value.strip("'\"`")
    low = bare.lower()
    if not bare or low in PLACEHOLDER_WORDS or bare.startswith("[REDACTED"):
        return True
    if len(set(low)) <= 2:  # `xxxxxxxx`, `********`, `000000`
        return True
    if len(low) < 10 and any(w in low for w in ("pass", "secret", "test", "token")):  # `badpass`, `test123`
        return True
    if low.isalpha() and low.isascii() and any(w in low for w in ("password", "passwd", "token", "secret")):
        return True  # `mynewpassword`, `tokenstring`: words, one naming what the value stands for
    if bare.startswith("<") and bare.endswith(">") or is_label(bare) or bare.endswith(("...", "…")):
        return True  # (`eyJhbGciOiJIUzI1NiIsInR5cCI6...`: an example cut short)
    parts = [part for part in _PLACEHOLDER_PARTS if part in low]
    parts += [p for p in _PLACEHOLDER_STARTS if low.startswith(p)]
    if not parts:
        return False
    # `your-api-key-here` is a placeholder; `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY` is a
    # key that happens to contain a placeholder word: judge what is left without it.
    for part in parts:
        low = low.replace(part, "")
    rest = re.sub(r"[^a-z0-9]", "", low)
    # (What is left of `test-secret-0123456789abcdef0123456789` counts up: no secret either.)
    return len(rest) < 12 or not _DIGIT.search(rest) or _sequential_share(rest) >= 0.5


def is_code(value: str, key: str = "") -> bool:
    """True when an unquoted `value` reads as code: a reference, call, attribute, type or path."""
    if not value:
        return True
    if _REFERENCE.search(value) or is_path(value) or _EXPRESSION.search(value):
        return True
    if any(c in value for c in "()[]{}") and not looks_random(value, 16):
        return True
    low = value.lower().rstrip(",;.")
    if low in TYPE_WORDS or low.rstrip("?|") in TYPE_WORDS:
        return True
    if _DOTTED.match(value) and not _DIGIT.search(value):
        return True
    if key and _norm(value) and _norm(value) in _norm(key) or (key and _norm(key) in _norm(value)):
        return True
    if _CONSTANT.match(value) or _IDENTIFIER.match(value) and _CAMEL_HUMP.search(value) and word_share(value) >= 0.75 and not _UNSPOKEN.search(value):
        return True  # `NEO4J_PASSWORD`, `OAuth2PasswordRequestForm`
    if _IDENTIFIER.match(value) and not _DIGIT.search(value):
        # A plain identifier: `getpass`, `api_key`, `SecretStr`, `DEFAULT_TOKEN`. A long run of
        # lower-case letters with no separator could be a pass phrase, so it stays a candidate.
        return "_" in value or bool(_CAMEL_HUMP.search(value)) or value[0].isupper() or len(value) < 12
    return False


def _norm(value: str) -> str:
    return re.sub(r"[^a-z0-9]", "", value.lower())


def password_like(value: str) -> bool:
    """A value offered as a password in prose or a command: it has a digit or a symbol mixed
    with letters, or is long; a plain word ("stored", "incorrect") is not one."""
    if len(value) < 6 or is_placeholder(value) or is_code(value) or is_version(value):
        return False
    if len(value) >= 16 and classes(value) >= 2:
        return True
    return bool(_DIGIT.search(value) or _SYMBOL.search(value)) and bool(re.search(r"[A-Za-z]", value))


def literal_secret(value: str, quoted: bool, spaced: bool, key: str = "") -> bool:
    """A value bound to a strong name (password, secret, token): a secret unless it is code,
    a placeholder, a template, prose, or too short to be one."""
    if len(value) < 6 or is_placeholder(value) or is_version(value):
        return False
    if not _DIGIT.search(value) and (not value.isascii() or value.isupper()) or not _ASCII_ALNUM.search(value):
        return False  # a word of a language (`lösenordet`, `parolă`), a placeholder in capitals (`PASS`, `ПАРОЛЬ`)
    if quoted:
        # A pass phrase in an environment variable (`DB_PASSWORD="correct horse battery"`) has
        # spaces; elsewhere a quoted value with spaces is a message or a template.
        phrase = bool(_CONSTANT.match(key)) and bool(_PHRASE.match(value))
        if re.search(r"\s", value) and not phrase or _REFERENCE.search(value) or "%s" in value or re.search(r"\{[\w.]*\}", value):
            return False  # (a template: `{{ token }}`, `?{creds.sas_token}`, `{}`)
        if _CONSTANT.match(value):
            return False
        if is_path(value) or (value.isupper() and not _DIGIT.search(value)):
            return False
        if not _DIGIT.search(value) and (_CAMEL_WORDS.match(value) or _DOTTED.match(value)):
            return False  # `challengePassword`, `IAmSensitive`, `DistributionList.NextMarker`
        if ("[" in value and "]" in value or "," in value and re.search(r"[()]", value)) and not looks_random(value, 16):
            return False  # `Jobs[-1].JobId`, `,e),h.f.fromError(d(` (minified code between quotes)
        return not (key and _norm(value) in _norm(key))
    if is_code(value, key):
        return False
    if spaced and _SNAKE.match(value) and max(len(part) for part in value.split("_")) < 16:
        return False  # `secret_key = s3_connection` (a long random part is a vendor's token)
    if spaced and not looks_random(value, 16, words=0.6) and not (_SPACED_LITERAL.match(value) and _DIGIT.search(value) and re.search(r"[A-Za-z]", value)):
        # `password = getpass_for_user`, `token = 1*tchar`: with spaces round `=` and no
        # quotes this is code, unless it is a word of letters and digits (an INI file).
        return False
    return True


def trie_regex(words: Iterable[str]) -> str:
    """A regex matching any of `words`, shaped as a trie: the engine tries one branch per
    distinct next character instead of every word at every position."""
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
