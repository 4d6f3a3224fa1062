"""What remember accepts: kinds, tags, expiry, descriptions, and no credentials."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import date, datetime

from daemon.memory.clip import clip_text
from daemon.memory.frontmatter import MemoryFileError, parse_time
from daemon.memory.workspace import InvalidInput, SecretRefused
from daemon.timefmt import DURATION_HELP, parse_duration

log = logging.getLogger("memoryd.memory.commands")

MAX_KIND = 32
MAX_TITLE = 120
MAX_BODY = 20_000
MAX_TAGS = 12
MAX_TAG = 40
MAX_DESCRIPTION = 300
DESCRIPTION_CHARS = 160

_KIND = re.compile(r"[^\W_][\w-]*")


def one_line(text: str) -> str:
    return " ".join(text.split())


def normalize_kind(kind: str) -> str:
    """Return a kind fit to be a folder name, or raise InvalidInput saying why not."""
    kind = kind.strip().lower()
    if not kind or len(kind) > MAX_KIND or not _KIND.fullmatch(kind):
        raise InvalidInput(
            f"kind {kind[:40]!r} is not usable: use one short word (letters, digits, - or _, at "
            f"most {MAX_KIND} characters), such as decision, fact, preference, gotcha or lesson"
        )
    return kind


def clean_tags(tags: Sequence[str]) -> tuple[str, ...]:
    cleaned = tuple(dict.fromkeys(t for t in (one_line(tag) for tag in tags) if t))
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags, got {len(cleaned)}")
    # The errors name a tag by position and length, never by value: a pasted secret stays out.
    for number, tag in enumerate(cleaned, start=1):
        if len(tag) > MAX_TAG:
            raise InvalidInput(f"tag {number} is {len(tag)} characters long; a tag has at most {MAX_TAG}")
        if "," in tag:
            raise InvalidInput(f"tag {number} holds a comma; separate tags with commas, not inside one")
    return cleaned


def parse_expiry(value: str, now: datetime) -> date | datetime:
    """Return the expiry for an ISO date/datetime or a duration from now (12h, 30d, 2w, 6mo, 1y, 1h30m)."""
    duration = parse_duration(value)
    if duration is not None:
        result: date | datetime = (now + duration).replace(microsecond=0)
    else:
        try:
            result = date.fromisoformat(value.strip()) if len(value.strip()) == 10 else parse_time(value)
        except (ValueError, MemoryFileError) as exc:
            raise InvalidInput(
                f"--expires {value!r}: give a date (2025-12-31), a datetime (2025-12-31T18:00:00Z) "
                f"or {DURATION_HELP} from now"
            ) from exc
    end = parse_time(result, end_of_day=True)
    if end is None or end <= now:
        raise InvalidInput(f"--expires {value!r} is already past; give a future date or a duration")
    return result


def derive_description(body: str) -> str:
    """Return a one-line description: the body's first sentence or line, shortened."""
    for line in body.splitlines():
        line = one_line(line.lstrip("#>*- ").strip())
        if line:
            sentence = re.split("(?<=[.!?\u3002\uff01\uff1f])\\s", line, maxsplit=1)[0]
            return clip_text(sentence, DESCRIPTION_CHARS)  # at a word, never inside one
    return ""


def check_secrets(fields: dict[str, str]) -> None:
    """Raise SecretRefused when any field looks like it holds a credential."""
    from daemon.scrub import find_secrets

    found = {name: kinds for name, text in fields.items() if (kinds := find_secrets(text))}
    if found:
        log.warning("memory.refused", extra={"fields": sorted(found), "reason": "credential-like content"})
        raise SecretRefused(found)
