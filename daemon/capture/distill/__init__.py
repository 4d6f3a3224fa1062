"""Distillers: transcript in, note body (or junk) out, behind one small interface (base.py).

`make_distiller(settings.llm, env, budget)` builds the configured one: extractive (no
model), or a model server over HTTP (openai-compatible, anthropic).
"""

from __future__ import annotations

from typing import Any

__all__ = ["distiller_identity", "make_distiller"]


def __getattr__(name: str) -> Any:
    # Lazy, so that importing base.py (as every distiller does) loads neither the
    # settings nor the HTTP stack.
    if name in __all__:
        from daemon.capture.distill import factory

        return getattr(factory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
