"""Build the configured distiller, and name it for staleness checks."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from daemon.capture.distill.base import Distiller
from daemon.capture.distill.budget import Budget
from daemon.capture.distill.prompt import PROMPT_VERSION
from daemon.config import ConfigError

if TYPE_CHECKING:
    from daemon.capture.lifecycle import ServerFaults


def distiller_identity(llm: Any) -> tuple[str, str]:
    """Return (distiller name, prompt version) for LLMSettings `llm`; a change marks notes stale."""
    if llm.provider == "extractive":
        from daemon.capture.distill.extractive import EXTRACTIVE_VERSION

        return ("extractive", EXTRACTIVE_VERSION)
    return (f"{llm.provider}:{llm.model}", PROMPT_VERSION)


def _dialect(provider: str) -> Any:
    # Imported here so the extractive path never loads the HTTP stack.
    if provider == "openai":
        from daemon.capture.distill.openai import OpenAIChat

        return OpenAIChat()
    if provider == "anthropic":
        from daemon.capture.distill.anthropic import AnthropicMessages

        return AnthropicMessages()
    raise ConfigError(f"llm.provider: unknown distiller {provider!r} (extractive, openai or anthropic)")


def make_distiller(
    llm: Any,
    env: Mapping[str, str],
    budget: Budget | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    client: httpx.Client | None = None,
    faults: ServerFaults | None = None,
) -> Distiller:
    """Return the distiller LLMSettings `llm` asks for; close() it on shutdown.

    The API key is read from `env` under the name llm.api_key_env (for the cloud
    servers a conventional name when that is empty). Raises ConfigError when a model
    backend has no model name.
    """
    if llm.provider == "extractive":
        from daemon.capture.distill.extractive import ExtractiveDistiller

        return ExtractiveDistiller()
    dialect = _dialect(llm.provider)
    if not llm.model:
        raise ConfigError(f"llm.model is empty: name the model to use with llm.provider = {llm.provider!r}")
    from daemon.capture.distill.http import ModelDistiller, make_client

    key_env = llm.api_key_env or dialect.key_env(llm.base_url)
    return ModelDistiller(
        llm,
        dialect,
        api_key=env.get(key_env, "") if key_env else "",
        key_env=key_env,
        client=client if client is not None else make_client(llm),
        budget=budget,
        sleep=sleep,
        clock=clock,
        faults=faults,
    )


def open_model_distiller(
    llm: Any,
    state: Any,
    clock: Callable[[], float] = time.time,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    faults: ServerFaults | None = None,
) -> tuple[Distiller, tuple[str, str]]:
    """Return the configured distiller, with its daily budget, and its identity.

    The budget gets its own connection to `state`'s database (daemon.state.StateDB),
    because distill threads record spend while the pass writes session records;
    the distiller's close() closes it. `env` defaults to the process environment.
    """
    from daemon.state import StateDB

    if llm.provider == "extractive":  # no model, nothing to budget
        return make_distiller(llm, {}, None), distiller_identity(llm)
    budget = Budget.from_settings(StateDB(state.path, fence=getattr(state, "fence", None)), llm, clock, owns_store=True)
    try:
        distiller = make_distiller(
            llm, os.environ if env is None else env, budget, sleep=sleep, clock=clock, faults=faults
        )
    except BaseException:
        budget.close()
        raise
    return distiller, distiller_identity(llm)
