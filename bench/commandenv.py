"""The environment a benchmark runs a `memoryd` command in: the one a user's shell gives it."""

from __future__ import annotations

import os
from collections.abc import Mapping

# A user's memoryd runs from cached bytecode: pip compiles it at install, an editable install
# writes it on its first run. A shell that sets this (some sandboxes and CI images do) makes
# every command compile the whole package again: ~40 ms a `memoryd context`, measured here.
_NOT_A_USERS = ("PYTHONDONTWRITEBYTECODE",)


def command_env(base: Mapping[str, str] | None = None, **values: str) -> dict[str, str]:
    """`base` (default: this process's environment) with `values` set, as a user's shell has it."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _NOT_A_USERS}
    env.update(values)
    return env
