"""The one small interface every distiller implements, and what flows through it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from daemon.opencode.reader import SessionInfo

EntryKind = Literal["text", "reasoning", "tool", "mention"]


# OpenCode 2's names for 1.x tools: an Entry (and all that reads it) uses one spelling.
TOOL_ALIASES = {"shell": "bash", "subagent": "task"}


@dataclass(frozen=True)
class Entry:
    """One kept part of a session, in order, already bounded and scrubbed."""

    role: str  # "user" | "assistant" | …
    kind: EntryKind
    text: str = ""  # text / mention line / reasoning hint
    tool: str = ""  # tool name, for kind == "tool"
    input: dict = field(default_factory=dict)  # tool input (values bounded)
    output: str = ""  # tool output (bounded)
    status: str = ""  # tool status: completed | error | …
    error: str = ""  # tool error text when status == "error"
    exit: int | None = None  # a command's exit status, where the source stored it (state.metadata.exit)


@dataclass(frozen=True)
class Transcript:
    """What a distiller gets: the bounded transcript text plus its structured entries."""

    session: SessionInfo
    entries: tuple[Entry, ...]
    text: str  # role-labelled, bounded, scrubbed: what a model sees
    hash: str  # "sha256:…" of the canonical text: the idempotency key
    warnings: tuple[str, ...] = ()

    @property
    def tool_calls(self) -> int:
        return sum(1 for e in self.entries if e.kind == "tool")


@dataclass(frozen=True)
class Distilled:
    """A distiller's answer: a note body (Markdown sections), or junk."""

    junk: bool
    body: str = ""  # "## What Was Worked On\n…" sections, no frontmatter
    summary: str = ""  # one line for the frontmatter description
    distiller: str = "extractive"  # e.g. "extractive", "openai:qwen3:8b"
    prompt_version: str = ""  # empty for the extractive distiller
    calls: int = 0  # model calls spent
    tokens: int = 0  # model tokens spent (input + output)
    # Built only from the transcript's scrubbed text (the extractive distiller): the note
    # needs no second pass. A model's answer is never marked so: it is scrubbed again.
    scrubbed: bool = False


class DistillError(Exception):
    """Distillation failed for this session; `retryable` says if a later pass may succeed.

    `transient`: the server's state (5xx, a timeout), not this session's: retried with
    backoff however often it happens, never given up on.
    """

    def __init__(self, message: str, retryable: bool = True, transient: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable or transient
        self.transient = transient


class MalformedAnswer(ValueError):
    """A 2xx answer that is not the API's shape (no choices, no content list): the server's
    fault, like a body that is not JSON, never the session's."""


class StopPass(DistillError):
    """Stop calling the distiller for the rest of this pass (bad API key, budget spent,
    a server that keeps failing).

    The session is left `held`, not failed.
    """

    def __init__(self, message: str, reason: str = "error", wait_s: float = 0.0) -> None:
        super().__init__(message, retryable=True, transient=True)
        self.reason = reason
        self.wait_s = wait_s  # how long the server asked us to stay away (Retry-After), if it said  # "auth" | "budget" | …


class Distiller(Protocol):
    """Turns a transcript into a note body, or says it is junk."""

    name: str
    concurrency: int

    def distill(self, transcript: Transcript) -> Distilled: ...

    def close(self) -> None: ...


SECTIONS: tuple[str, ...] = (
    "What Was Worked On",
    "Outcome / Current State",
    "Decisions & Rationale",
    "Findings & Learnings",
    "Problems & Fixes",
    "Files, Systems & Commands",
    "Follow-ups",
)
