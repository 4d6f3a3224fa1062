"""The daily model budget: calls and tokens per local day, kept in the state database.

A call is held (counted as in flight) from the moment it is allowed until it is settled,
so parallel callers can never together start more calls than the day has left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import NamedTuple, Protocol

from daemon.capture.distill.base import StopPass


class SpendStore(Protocol):
    """Where spend lives: daemon.state.StateDB."""

    def spend(self, day: str) -> tuple[int, int]: ...

    def add_spend(self, day: str, calls: int, tokens: int) -> None: ...


class Limits(NamedTuple):
    calls: int  # 0: unlimited
    tokens: int  # 0: unlimited


class Spend(NamedTuple):
    """Today's recorded spend and the daily limits, for `memoryd status`."""

    calls: int
    tokens: int
    limits: Limits


def estimate_tokens(text: str) -> int:
    """Return a token estimate for `text` when a server reports no usage (chars / 4)."""
    return max(1, len(text) // 4)


class Budget:
    """Daily call and token caps, shared by every thread of one daemon."""

    def __init__(
        self,
        state_db: SpendStore,
        daily_calls: int = 0,
        daily_tokens: int = 0,
        clock: Callable[[], float] = time.time,
        owns_store: bool = False,
    ) -> None:
        self._db = state_db
        self._owns_store = owns_store  # close() closes the store only when the budget opened it
        self.limits = Limits(daily_calls, daily_tokens)
        self._clock = clock
        # One lock for the database and the in-flight counters: a check and the hold it
        # grants must be one step, or two threads could both take the last call.
        self._lock = threading.Lock()
        self._held_calls = 0
        self._held_tokens = 0

    @classmethod
    def from_settings(
        cls, state_db: SpendStore, llm: object, clock: Callable[[], float] = time.time, owns_store: bool = False
    ) -> Budget:
        """Return the budget that `llm` (LLMSettings) asks for."""
        calls, tokens = llm.daily_call_budget, llm.daily_token_budget  # type: ignore[attr-defined]
        return cls(state_db, calls, tokens, clock, owns_store)

    def day(self) -> str:
        """Return today's key in the spend table: the local date, YYYY-MM-DD."""
        return datetime.fromtimestamp(self._clock()).date().isoformat()

    def _refuse_unless_room(self, tokens: int) -> None:
        calls, spent = self._db.spend(self.day())
        calls += self._held_calls
        spent += self._held_tokens
        if self.limits.calls and calls >= self.limits.calls:
            raise StopPass(
                f"daily model call budget reached: {calls} of {self.limits.calls} calls made today "
                "(llm.daily_call_budget); the remaining sessions wait for tomorrow",
                reason="budget",
            )
        if self.limits.tokens and (spent >= self.limits.tokens or spent + tokens > self.limits.tokens):
            raise StopPass(
                f"daily model token budget reached: {spent} of {self.limits.tokens} tokens used today, "
                f"the next call needs about {tokens} (llm.daily_token_budget); "
                "the remaining sessions wait for tomorrow",
                reason="budget",
            )

    def check(self, tokens: int = 0) -> None:
        """Raise StopPass(reason="budget") unless a call of about `tokens` tokens fits today."""
        with self._lock:
            self._refuse_unless_room(tokens)

    @contextmanager
    def reserve(self, tokens: int = 0) -> Iterator[Reservation]:
        """Check, then hold one call and `tokens` until the block ends.

        Record the real cost with the yielded reservation's `record()`: it adds the
        spend and drops the hold in one step, so a finished call is never counted
        twice (once spent, once still in flight) by another thread's check.
        """
        with self._lock:
            self._refuse_unless_room(tokens)
            self._held_calls += 1
            self._held_tokens += tokens
        reservation = Reservation(self, tokens)
        try:
            yield reservation
        finally:
            reservation.release()

    def record(self, calls: int, tokens: int) -> None:
        """Add `calls` and `tokens` to today's spend."""
        with self._lock:
            self._db.add_spend(self.day(), calls, tokens)

    def today(self) -> Spend:
        """Return today's recorded (calls, tokens, limits)."""
        with self._lock:
            calls, tokens = self._db.spend(self.day())
        return Spend(calls, tokens, self.limits)

    def close(self) -> None:
        """Close the spend store if this budget owns it."""
        if self._owns_store:
            self._db.close()  # type: ignore[attr-defined]


class Reservation:
    """One call's hold on a Budget, released exactly once."""

    def __init__(self, budget: Budget, tokens: int) -> None:
        self._budget = budget
        self._tokens = tokens
        self._held = True

    def _drop(self) -> None:
        if self._held:
            self._held = False
            self._budget._held_calls -= 1
            self._budget._held_tokens -= self._tokens

    def record(self, calls: int, tokens: int) -> None:
        """Spend `calls` and `tokens` and release the hold, atomically."""
        with self._budget._lock:
            self._budget._db.add_spend(self._budget.day(), calls, tokens)
            self._drop()

    def release(self) -> None:
        with self._budget._lock:
            self._drop()
