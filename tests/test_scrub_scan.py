"""The scrubber's faster searches (daemon/scrub/scan.py) find exactly what the plain ones find.

find_anchored() must give the matches `pattern.finditer()` gives, and every format or
high-entropy token must lie inside one of token_runs(): a search that missed one would let
a secret through. Texts are made from fixed seeds out of the words the patterns start with,
the separators around values, tokens and noise, so that matches overlap and abut.
"""

from __future__ import annotations

import random
import string

import pytest

from daemon.scrub import entropy, formats, keywords, prose, scan, structure

ANCHORED = {
    "assignment": (keywords._ASSIGN, keywords._ASSIGN_WORDS),
    "scheme": (keywords._SCHEME, keywords._SCHEME_WORDS),
    "login": (prose._LOGIN, prose._LOGIN_WORDS),
    "netrc": (structure._NETRC, structure._NETRC_WORDS),
}
WORDS = (
    "pass pwd pw passwd password passphrase passcode secret token key auth cred creds credentials sig signature pat hmac "
    "bearer basic ssws splunk pin login log-in user username account api key access key secret key pass word "
    "machine default port"
).split(" ")
SEPARATORS = ["=", ":", " = ", ": ", ":=", "=>", "('", '"', "'", "]", " is ", " / ", "\n", "_", "-", " ", "\t", "s", "x", "?:", "=="]
TOKEN_CHARS = string.ascii_letters + string.digits + "+/=_-.$~"


def _texts(seed: str, count: int = 3000) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 14)):
            roll = rng.random()
            if roll < 0.1:  # `login is admin / s3cr3t-value`
                user = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 8)))
                parts.append(f"{rng.choice(WORDS)}{rng.choice([' is ', ': ', '=', ' with ', ' are '])}{user} / {rng.choice(WORDS)}{rng.randint(0, 99999)}")
            elif roll < 0.15:  # `machine h login u password p`, `default login u password p`
                sp, value = rng.choice([" ", "\t", "  "]), rng.choice(["p4ss", '"a b"', "x", "s3cr3t-" + str(rng.randint(0, 999))])
                line = rng.choice(["machine h{sp}login u{sp}", "default{sp}login u{sp}", "machine{sp}h{sp}port 1{sp}", "", "pass "])
                parts.append(line.format(sp=sp) + f"password{sp}{value}" + rng.choice(["\n", "", " more"]))
            elif roll < 0.25:  # `bearer <token>`, `api_key = <token>`
                parts.append(rng.choice(WORDS) + rng.choice(SEPARATORS) + "".join(rng.choice(TOKEN_CHARS) for _ in range(rng.randint(8, 40))))
            elif roll < 0.45:
                parts.append(rng.choice(WORDS))
            elif roll < 0.7:
                parts.append(rng.choice(SEPARATORS))
            else:
                parts.append("".join(rng.choice(TOKEN_CHARS) for _ in range(rng.randint(1, 70))))
        out.append("".join(parts))
    return out


def test_anchors_are_the_literal_words_each_alternative_starts_with():
    pattern, words = scan.anchored(("credentials?", "creds", "user(?:name)?", "log-in", "login", "passwd", "password"), r"\b")
    assert set(words) == {"cred", "user", "log-in", "login", "passw"}
    assert pattern.pattern == r"(?:credentials?|creds|user(?:name)?|log-in|login|passwd|password)\b"
    assert set(scan.anchored(("pass", "pwd", "pw", "sig(?:nature)?(?![a-z])"), "=")[1]) == {"pass", "pw", "sig"}
    with pytest.raises(ValueError, match="literal"):
        scan.anchored(("(?:a|b)x",), "")


@pytest.mark.parametrize("name", sorted(ANCHORED))
def test_find_anchored_gives_the_matches_finditer_gives(name):
    pattern, words = ANCHORED[name]
    found = 0
    for text in _texts(name):
        low = text.lower()
        expected = [(m.span(), m.groupdict()) for m in pattern.finditer(low)]
        assert [(m.span(), m.groupdict()) for m in scan.find_anchored(pattern, low, words)] == expected, text
        found += len(expected)
    assert found > 20  # the texts do hold matches, overlapping and abutting ones among them


def test_every_format_and_entropy_token_lies_in_a_token_run():
    starts = spans = 0
    for text in _texts("runs"):
        runs = scan.token_runs(text)
        inside = [(lo, hi) for lo, hi in runs]
        full_starts = [m.start() for m in formats._TOKEN_START.finditer(text)]
        assert full_starts == [m.start() for lo, hi in inside for m in formats._TOKEN_START.finditer(text, lo, hi)], text
        full_spans = [m.span() for m in entropy._TOKEN.finditer(text)]
        assert full_spans == [m.span() for lo, hi in inside for m in entropy._TOKEN.finditer(text, lo, hi)], text
        starts += len(full_starts)
        spans += len(full_spans)
    assert starts > 100 and spans > 100
