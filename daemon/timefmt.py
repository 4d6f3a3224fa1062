"""The one way memoryd writes a moment: ISO 8601, UTC, second precision, `Z` suffix."""

from __future__ import annotations

from datetime import UTC, datetime


def format_time(moment: datetime) -> str:
    """A datetime (any zone) → `2026-01-02T03:04:05Z`."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def iso(ms: int) -> str:
    """Epoch milliseconds → the same form."""
    return format_time(datetime.fromtimestamp(ms / 1000, tz=UTC))
