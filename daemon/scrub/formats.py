"""Known credential formats: a prefix and the shape of what follows it.

The formats are public facts (providers document them; gitleaks, detect-secrets and
GitHub's secret-scanning partners list them), kept as data in formats.tsv, a row each.
All of them are compiled into one regular expression whose alternatives form a trie over
the prefixes, so the text is scanned once, in C, whatever the number of formats; the group
that matched names the kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

# The end of a token: not followed by another token character (`\b` fails after a `-`).
END = r"(?![A-Za-z0-9_\-])"
_B62 = "A-Za-z0-9"
_URLSAFE = "A-Za-z0-9_\\-"


@dataclass(frozen=True)
class Format:
    kind: str
    prefixes: tuple[str, ...]
    body: str  # what follows a prefix, a regex (the END guard is added unless it ends in `$`)
    end: bool = True


def _load(text: str) -> tuple[Format, ...]:
    """The rows of formats.tsv: kind, prefixes, body, and `open` for a token that may run on."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) not in (3, 4) or (len(cells) == 4 and cells[3] != "open"):
            raise ValueError(f"formats.tsv line {number}: expected kind, prefixes, body[, open], got {line!r}")
        found.append(Format(cells[0], tuple(cells[1].split(" ")), cells[2], end=len(cells) == 3))
    return tuple(found)


FORMATS: tuple[Format, ...] = _load(resources.files("daemon.scrub").joinpath("formats.tsv").read_text(encoding="utf-8"))

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
_DISCORD_SHORTEST = 59  # the shortest Discord bot token, the context format that needs no trigger


# Any context format's trigger, found in one pass over the lower-cased text (most texts hold
# none, and fifteen searches cost more than one); the formats are then tried one by one.
_ANY_TRIGGER = re.compile("|".join(re.escape(trigger) for _, trigger, _, _ in CONTEXT_FORMATS if trigger != "."))
_UNTRIGGERED = tuple(fmt for fmt in CONTEXT_FORMATS if fmt[1] == ".")


def find_formats(text: str, low: str, runs: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The (start, end, kind) of every known-format credential in `text` (`low` is
    `text.lower()`, of the same length; `runs` its scan.token_runs())."""
    # Formats start where a token starts: find the tokens (one fast pass), then try the
    # trie at each start. (Run over the whole text the trie is slow: its first characters
    # are nearly every letter, and the engine tries each branch at each position.)
    found: list[tuple[int, int, str]] = []
    if len(text) < _SHORTEST:  # (no format, context ones included, is shorter)
        return found
    match_at = SCAN.match
    for lo, hi in runs:
        for token in _TOKEN_START.finditer(text, lo, hi):
            match = match_at(text, token.start())
            if match:
                found.append((match.start(), match.end(), _KIND_OF[match.lastgroup or ""]))
    for kind, trigger, pattern, group in CONTEXT_FORMATS if _ANY_TRIGGER.search(low) else _UNTRIGGERED:
        if trigger == ".":
            windows = [(lo, hi) for lo, hi in runs if hi - lo >= _DISCORD_SHORTEST]
        else:
            windows = _windows(low, trigger) if trigger in low else []
        for lo, hi in windows:
            for match in pattern.finditer(text, lo, hi):
                found.append((match.start(group), match.end(group), kind))
    return found


def _windows(low: str, trigger: str, reach: int = 200) -> list[tuple[int, int]]:
    """Stretches of the text around each occurrence of `trigger`, overlapping ones joined."""
    found = []
    at = low.find(trigger)
    while at >= 0:
        lo, hi = max(0, at - reach), at + len(trigger) + reach
        at = low.find(trigger, at + 1)
        while 0 <= at < hi:
            hi = at + len(trigger) + reach
            at = low.find(trigger, at + 1)
        found.append((lo, min(hi, len(low))))
    return found
