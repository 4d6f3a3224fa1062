"""What a sink round reports, as plain data (kept apart from the client, so that
`memoryd status` and the CLI read it without importing the network stack)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DeliveryReport:
    """What one drain of the outbox did."""

    added: int = 0
    replaced: int = 0
    deleted: int = 0
    unchanged: int = 0
    resent: int = 0  # sent again on request (`sink push --all`)
    error: str = ""
    cognify_run: str = ""
    seconds: float = 0.0

    @property
    def sent(self) -> int:
        return self.added + self.replaced + self.deleted + self.resent


@dataclass
class Round(DeliveryReport):
    """A fill and a delivery: what the fill queued, what was delivered, what is left;
    `seconds` is the whole round's."""

    queued_puts: int = 0
    queued_deletes: int = 0
    remaining: int = 0
