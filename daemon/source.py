"""The source interface: what the capture wing needs from a store of agent sessions.

A source answers four questions, and nothing else about it leaks into `capture/`:

- `cursor()`: an opaque mark of everything stored now (taken when a pass starts);
- `changed_since(cursor)`: the ids of sessions (roots or children) with rows written
  after that mark, cheaply: proportional to what changed, not to the store;
- `sessions(ids)`: those sessions as `SessionInfo`, oldest first;
- `session_rows(info)`: one session's rows, normalised into messages and parts of the
  shape `capture.transcript` reads (a part's `data` is OpenCode 1.x's part JSON, as
  bytes, or already decoded as a dict).

- `opener()`: a picklable zero-argument callable that opens the same source again
  (a worker process of a large pass opens its own).

Each agent's store is one implementation, in the agent's own package: OpenCode's database
(`daemon.opencode.reader.OpenCodeReader`), Claude Code's transcripts
(`daemon.claudecode.reader`), Codex's rollouts (`daemon.codex.reader`);
`daemon.capture.sources` puts them behind this one interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol


AGENT_LABELS = {"opencode": "OpenCode", "claude": "Claude Code", "codex": "Codex"}
AGENT_TAG = "agent-"  # a session note's tag `agent-<agent>` says which agent wrote the session


def agent_of_tags(tags: Sequence[str]) -> str:
    """The agent a note's tags name ("" for a memory that is no agent's session)."""
    return next((t[len(AGENT_TAG) :] for t in tags if t.startswith(AGENT_TAG) and t[len(AGENT_TAG) :] in AGENT_LABELS), "")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session as a source sees it.

    A source gives the title as OpenCode stored it: listing 50,000 sessions must not
    scrub 50,000 titles when a pass acts on a few. `build_transcript` scrubs it once for
    a session capture acts on and marks the copy it hands on `scrubbed`.
    """

    id: str
    title: str  # as stored (not scrubbed) unless `scrubbed`
    directory: str
    project_id: str
    parent_id: str | None
    time_created: int  # epoch ms
    time_updated: int  # epoch ms, the newest activity over the session's rows
    message_count: int = 0
    family: str = "v1"  # which tables the rows come from (OpenCode: "v1" or "v2")
    # The source says the last turn ended (OpenCode 2's `idle` row): the session is quiet
    # now, so it is distilled without waiting out settle_seconds.
    ended: bool = False
    scrubbed: bool = False  # the title has been scrubbed (a transcript's copy)
    agent: str = "opencode"  # which agent wrote the session: "opencode", "claude", "codex"


@dataclass(frozen=True)
class MessageRow:
    id: str
    time_created: int
    data: bytes | dict  # {"role": "user" | "assistant", …}


@dataclass(frozen=True)
class PartRow:
    id: str
    message_id: str
    data: bytes | dict  # a part: {"type": "text" | "reasoning" | "tool" | …, …}


@dataclass(frozen=True)
class SessionRows:
    """Everything stored for one session, in transcript order."""

    session: SessionInfo
    messages: list[MessageRow]
    parts: list[PartRow]  # ordered by their message's (time_created, id), then part id


class SessionSource(Protocol):
    """A store of agent sessions the capture wing can read (see the module docstring)."""

    path: Path

    def cursor(self) -> str: ...

    def changed_since(self, cursor: str) -> set[str]: ...

    def sessions(self, ids: Sequence[str] | None = None) -> list[SessionInfo]: ...

    def session_rows(self, session: SessionInfo) -> SessionRows: ...

    def newest_update(self) -> int | None: ...

    def data_version(self) -> int: ...

    def close(self) -> None: ...

    def opener(self) -> Callable[[], SessionSource]: ...
