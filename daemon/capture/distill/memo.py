"""Answers of pure text functions remembered for one session's distillation, and no longer.

The extractive distiller reads the same sentences and tool calls from several angles
(turns, outcomes, superseded claims, problems), so a session asks the same questions
many times; another session's texts are another matter. Within `one_session()` a
`per_session` function answers each distinct question once; outside it, it just runs.
A cache that outlived the session would grow with the backfill and, on cloned
benchmark sessions, measure the cache instead of the work.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_scope = threading.local()  # one session per thread: distillers may run in threads
_MISSING = object()


@contextmanager
def one_session() -> Iterator[None]:
    """Remember `per_session` answers until the block ends."""
    previous = getattr(_scope, "cache", None)
    _scope.cache = {}
    try:
        yield
    finally:
        _scope.cache = previous


def per_session(fn: F) -> F:
    """`fn` (pure; positional, hashable arguments; an immutable answer) remembered per session."""

    @functools.wraps(fn)
    def remembered(*args: Any) -> Any:
        cache = getattr(_scope, "cache", None)
        if cache is None:
            return fn(*args)
        key = (fn, args)
        value = cache.get(key, _MISSING)  # (about half the questions are new: no KeyError raised for them)
        if value is _MISSING:
            value = cache[key] = fn(*args)
        return value

    return remembered  # type: ignore[return-value]


def per_entry(fn: F) -> F:
    """`fn(entry)` (pure; an immutable answer) remembered per session by the entry's identity.

    An entry holds a dict (its tool input), so it is no key: its identity is, and the
    entry itself is kept beside the answer so that identity cannot be reused meanwhile.
    """

    @functools.wraps(fn)
    def remembered(entry: Any) -> Any:
        cache = getattr(_scope, "cache", None)
        if cache is None:
            return fn(entry)
        key = (fn, id(entry))
        found = cache.get(key)
        if found is not None and found[0] is entry:
            return found[1]
        value = fn(entry)
        cache[key] = (entry, value)
        return value

    return remembered  # type: ignore[return-value]
