"""Every agent's session store behind the one `SessionSource` interface capture reads.

`AllSources` holds one source per agent found (OpenCode's database, Claude Code's
transcripts, Codex's rollouts) and answers for all of them: a cursor is each source's
cursor by agent, a session is asked of the source of its agent. Nothing in capture
knows which agent a session came from, beyond the `agent` its note records.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from daemon.claudecode.reader import ClaudeCodeReader, projects_dir
from daemon.codex.reader import FOLDERS as CODEX_FOLDERS
from daemon.codex.reader import CodexReader
from daemon.config import Config
from daemon.opencode.reader import OpenCodeReader
from daemon.source import SessionInfo, SessionRows, SessionSource

class AllSources:
    """Several sources as one (see the module docstring); `sources` maps agent → source."""

    def __init__(self, sources: dict[str, SessionSource]) -> None:
        if not sources:
            raise ValueError("no session source")
        self.sources = sources
        self.path: Path = next(iter(sources.values())).path  # the first (OpenCode's database when there is one)

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(self.sources)

    def cursor(self) -> str:
        return json.dumps({"sources": {a: s.cursor() for a, s in self.sources.items()}}, sort_keys=True)

    def changed_since(self, cursor: str) -> set[str]:
        marks = _marks(cursor)
        return set().union(*(s.changed_since(marks.get(a, "")) for a, s in self.sources.items()))

    def sessions(self, ids: Sequence[str] | None = None) -> list[SessionInfo]:
        found = [info for s in self.sources.values() for info in s.sessions(ids)]
        return sorted(found, key=lambda s: (s.time_created, s.id))

    def session_rows(self, session: SessionInfo) -> SessionRows:
        source = self.sources.get(session.agent) or next(iter(self.sources.values()))
        return source.session_rows(session)

    def newest_update(self) -> int | None:
        found = [t for s in self.sources.values() if (t := s.newest_update())]
        return max(found) if found else None

    def data_version(self) -> int:
        versions = repr([(a, s.data_version()) for a, s in self.sources.items()])
        return int.from_bytes(hashlib.blake2b(versions.encode(), digest_size=8).digest(), "big")

    def close(self) -> None:
        for source in self.sources.values():
            source.close()

    def opener(self) -> Callable[[], AllSources]:
        return functools.partial(_open_all, {a: s.opener() for a, s in self.sources.items()})


def _open_all(openers: dict[str, Callable[[], SessionSource]]) -> AllSources:
    return AllSources({agent: open_source() for agent, open_source in openers.items()})


def _marks(cursor: str) -> dict[str, str]:
    """Each agent's cursor; an older memoryd's cursor (OpenCode's alone) is OpenCode's."""
    try:
        value = json.loads(cursor) if cursor else {}
    except ValueError:
        return {}
    if isinstance(value, dict) and isinstance(value.get("sources"), dict):
        return {str(k): str(v) for k, v in value["sources"].items()}
    return {"opencode": cursor} if cursor else {}


def agent_stores(config: Config) -> dict[str, Path]:
    """Where each agent keeps its sessions (whether or not it is there)."""
    paths = config.paths
    stores = {"opencode": paths.opencode_db}
    if paths.claude_dir is not None:
        stores["claude"] = projects_dir(paths.claude_dir)
    if paths.codex_home is not None:
        stores["codex"] = paths.codex_home
    return stores


def watch_folders(config: Config) -> list[Path]:
    """The folders whose session files the daemon watches, besides OpenCode's database."""
    stores = agent_stores(config)
    folders = [stores["claude"]] if "claude" in stores else []
    if "codex" in stores:
        folders += [stores["codex"] / folder for folder in CODEX_FOLDERS]
    return folders


def present(config: Config) -> tuple[str, ...]:
    """The agents whose stores exist now (a store that appears means opening the sources again)."""
    return tuple(a for a, p in agent_stores(config).items() if p.exists())


def open_sources(config: Config) -> AllSources:
    """Open the source of every agent whose store is on this machine.

    OpenCode's database is opened when it exists (its errors are raised as before); with
    no agent's store at all, OpenCode's "not found" is the error, as it always was.
    """
    stores = agent_stores(config)
    sources: dict[str, SessionSource] = {}
    others = {a: p for a, p in stores.items() if a != "opencode" and p.exists()}
    db = stores["opencode"]
    if db.exists() or not others:
        sources["opencode"] = OpenCodeReader(db, config.settings.source.busy_timeout_ms)
    if "claude" in others:
        sources["claude"] = ClaudeCodeReader(others["claude"])
    if "codex" in others:
        sources["codex"] = CodexReader(others["codex"])
    return AllSources(sources)
