"""The worker's queue: when each kind of work is due, with debouncing that always ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class WorkQueue:
    """Due times per kind of work; a burst of marks for one kind is one item.

    `mark(kind, delay)` makes the kind due `delay` seconds from now, or keeps the
    earlier time if it is already due sooner, unless `trailing`: then each mark pushes
    it back (a debounce window that closes when the burst is over), but never past
    `max_delay` after the burst's first mark.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._due: dict[str, float] = {}
        self._first: dict[str, float] = {}  # when the burst now being debounced began
        self._cond = threading.Condition()
        self._clock = clock
        self._closed = False

    def mark(self, kind: str, delay: float = 0.0, trailing: bool = False, max_delay: float | None = None) -> None:
        with self._cond:
            now = self._clock()
            at = now + delay
            current = self._due.get(kind)
            if current is not None and not trailing:
                at = min(current, at)
            elif trailing and max_delay is not None:
                first = self._first.setdefault(kind, now)
                at = min(at, first + max(max_delay, delay))
            self._due[kind] = at
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pending(self) -> dict[str, float]:
        with self._cond:
            return dict(self._due)

    def take(self, timeout: float | None = None) -> str | None:
        """Block until a kind is due and return it (earliest first); None when closed or timed out."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._cond:
            while not self._closed:
                now = self._clock()
                if self._due:
                    kind, at = min(self._due.items(), key=lambda item: item[1])
                    if at <= now:
                        del self._due[kind]
                        self._first.pop(kind, None)
                        return kind
                    wait = at - now
                else:
                    wait = None
                if deadline is not None:
                    if now >= deadline:
                        return None
                    wait = deadline - now if wait is None else min(wait, deadline - now)
                self._cond.wait(wait)
            return None
