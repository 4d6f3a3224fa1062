"""Time helpers: the one way memoryd writes a moment (ISO 8601, UTC, second precision, `Z`)
and the one grammar it reads durations in."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta


def format_time(moment: datetime) -> str:
    """A datetime (any zone) → `2026-01-02T03:04:05Z`."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


_YEAR_10000_MS = 253_402_300_800_000  # 10000-01-01: where a year stops having four digits


def iso(ms: int) -> str:
    """Epoch milliseconds → the same form."""
    if type(ms) is int and 0 <= ms < _YEAR_10000_MS:  # (every stored time) its fields, without a datetime
        t = time.gmtime(ms // 1000)
        return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z"
    return format_time(datetime.fromtimestamp(ms / 1000, tz=UTC))


# One duration grammar for every option that takes one (`logs --since`, `remember --expires`):
# numbers with units, summed: 30s, 10m, 1h30m, 12h, 2d, 2w, 6mo, 1y. "m" is minutes and
# "mo" months (30 days); a year is 365 days.
DURATION_HELP = "a duration such as 30s, 10m, 1h30m, 2d, 2w, 6mo or 1y (m = minutes, mo = months of 30 days)"
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(mo|[smhdwy])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}


def parse_duration(text: str) -> timedelta | None:
    """Return the duration `text` names (see DURATION_HELP), or None when it is not one."""
    compact = text.strip().lower().replace(" ", "")
    if not compact or _DURATION_PART.sub("", compact) != "":
        return None
    return timedelta(seconds=sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(compact)))
