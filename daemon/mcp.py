"""The MCP server: recall, remember, forget, inspect and list memories over stdio.

A thin layer over `daemon.memory.commands`, with the CLI's semantics: the project is
the git worktree of the directory the server runs in (OpenCode and Claude Code start
MCP servers in the project), symlinks resolved, so one project has one scope key;
`scope="global"` is explicit; forget by query never leaves project + global.

Tool names are the plain verbs (`recall`, `remember`, `forget`, `inspect`) and
`list_memories`: hosts namespace MCP tools by server (OpenCode `memoryd_recall`, Claude
Code `mcp__memoryd__recall`), none of these verbs is a host's own tool, and `list` is
(OpenCode's directory listing), so that one says what it lists.

Under OpenCode 2 the tools are reached through its `execute` code tool
(`await tools.memoryd.recall({query})`): the names are plain JavaScript identifiers and the
instructions say so. A call that names its OpenCode session (`_meta["ai.opencode/sessionID"]`)
is scoped by that session's folder when it lies in another worktree than the server's.

The memory commands share one SQLite connection (the search index), which must stay on
the thread that opened it: every call runs on one dedicated worker thread, one at a
time, while the event loop keeps serving the protocol. Nothing here writes to stdout,
which is the protocol channel: logs go to memoryd's log file (set up by the caller).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context
from pydantic import Field

from daemon import __version__
from daemon.memory import commands
from daemon.memory.index import SearchIndexError
from daemon.memory.roots import is_in_worktree, project_root_of
from daemon.memory.workspace import InvalidInput, MemoryCommandError, Workspace, open_workspace
from daemon.mcpinstructions import instructions_for
from daemon.timefmt import format_time

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from daemon.config import Config
    from daemon.memory.queries import Hit
    from daemon.memory.tree import Memory

log = logging.getLogger("memoryd.mcp")

SERVER_NAME = "memoryd"
DEFAULT_RECALL = 10
DEFAULT_LIST = 20
FORGET_CANDIDATES = 10

T = TypeVar("T")

# Tool argument types (module level: the SDK reads the annotations from the module).
Scope = Annotated[
    Literal["all", "project", "global"],
    Field(description="all: this project's memories and the global ones (project first); project; global."),
]
RecallScope = Annotated[
    Literal["all", "project", "global", "everywhere"],
    Field(description="all: this project's memories and the machine-wide ones (project first); project; global: the "
          "machine-wide ones; everywhere: other projects' memories kept in the global tree too (only when asked)."),
]  # fmt: skip


class ToolFailure(Exception):
    """A call that cannot do what was asked; the message tells the model what to do instead."""


# --- the memory operations, as text for a model ---------------------------------------


def _day(memory: Memory) -> str:
    return memory.newest.strftime("%Y-%m-%d")


def _label(memory: Memory) -> str:
    return f"{memory.kind}, {memory.scope}, {_day(memory)}, id {memory.id}"


def _line(memory: Memory) -> str:
    return f"- {memory.title}  ({_label(memory)})\n  {memory.path}"


def _indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


def _where(scope: str) -> str:
    places = {"project": "in this project", "global": "in the global tree", "everywhere": "in any project or the global tree"}
    return places.get(scope, "in this project or the global tree")


def format_hits(query: str, hits: Sequence[Hit], mode: str, scope: str = "all") -> str:
    """Return recall results: title, kind, scope, date, id, path and a preview each."""
    if not hits:
        return (
            f"No memory matches {query!r} {_where(scope)}. Try other or fewer words, or list_memories "
            "to see what there is."
        )
    lines = [f"{len(hits)} memor{'y' if len(hits) == 1 else 'ies'} for {query!r}, best first:"]
    if mode == "prefix":
        lines[0] += " (none holds every word: these match some words as prefixes)"
    for number, hit in enumerate(hits, 1):
        memory = hit.memory
        lines.append("")
        lines.append(f"{number}. {memory.title}  ({_label(memory)})")
        lines.append(f"   {memory.path}")
        if memory.tags:
            lines.append(f"   tags: {', '.join(memory.tags)}")
        if hit.preview:
            lines.append(_indent(hit.preview))
    lines.append("")
    lines.append("Previews only: inspect(id) returns a whole memory.")
    return "\n".join(lines)


class MemoryService:
    """The memory commands for one caller, run one at a time on one worker thread.

    The workspace (and its SQLite connection) is opened on that thread at the first
    call, and again after a failed open, so a broken index can be fixed while the
    server runs.
    """

    def __init__(
        self, config: Config, project_dir: Path | None, *, explicit_project: bool = False
    ) -> None:
        self.config = config
        self.project_dir = project_dir
        self.explicit_project = explicit_project
        self._ws: Workspace | None = None
        self._elsewhere: dict[Path, Workspace] = {}  # other worktrees' sessions, sharing the index
        self._session_dirs: dict[str, Path | None] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memoryd-mcp")

    # -- running ---------------------------------------------------------------------

    def workspace(self, session: str | None = None) -> Workspace:
        """The caller's workspace: the server's project, or the calling session's worktree
        when OpenCode named a session that runs in another one."""
        if self._ws is None:
            self._ws = open_workspace(self.config, self.project_dir, explicit_project=self.explicit_project)
        elsewhere = self._session_worktree(session) if session and not self.explicit_project else None
        if elsewhere is None:
            return self._ws
        if elsewhere not in self._elsewhere:
            self._elsewhere[elsewhere] = open_workspace(self.config, elsewhere, index=self._ws.index)
        return self._elsewhere[elsewhere]

    def _session_worktree(self, session: str) -> Path | None:
        """The session's worktree when it is not the server's own (looked up once per session)."""
        if session not in self._session_dirs:
            from daemon.opencode.sessions import session_directory

            try:
                directory = session_directory(self.config.paths.opencode_db, session)
            except sqlite3.Error as exc:
                log.warning("mcp.session_lookup_failed", extra={"session": session, "error": str(exc)})
                directory = None
            self._session_dirs[session] = directory
        directory = self._session_dirs[session]
        if directory is None or not is_in_worktree(directory):
            return None
        worktree = project_root_of(directory)
        own = project_root_of(self.project_dir) if self.project_dir is not None else None
        return None if worktree == own else worktree

    def call(self, operation: Callable[..., T], *args: Any, session: str | None = None) -> T:
        """Run `operation(workspace, *args)`, turning anticipated failures into ToolFailure."""
        try:
            return operation(self.workspace(session), *args)
        except (MemoryCommandError, SearchIndexError) as exc:
            raise ToolFailure(str(exc)) from exc
        except sqlite3.OperationalError as exc:
            # Another memoryd process held the index longer than the busy timeout.
            log.warning("mcp.index_busy", extra={"error": str(exc)})
            raise ToolFailure(f"the search index is busy or unusable ({exc}); try again in a moment") from exc
        except OSError as exc:
            where = f" {exc.filename}" if exc.filename else ""
            log.warning("mcp.file_error", extra={"path": where.strip(), "error": str(exc.strerror or exc)})
            reason = exc.strerror or exc
            raise ToolFailure(f"cannot access{where}: {reason}. Tell the user: retrying will not help.") from exc

    async def run(self, operation: Callable[..., T], *args: Any, session: str | None = None) -> T:
        """Run an operation on the worker thread without blocking the event loop."""
        return await asyncio.wrap_future(self._executor.submit(self.call, operation, *args, session=session))

    def close(self) -> None:
        """Close the index (on its own thread) and stop the worker thread."""

        def close_index() -> None:
            if self._ws is not None:
                self._ws.index.close()  # the other workspaces share it
                self._ws = None
                self._elsewhere.clear()

        try:
            self._executor.submit(close_index).result()
        finally:
            self._executor.shutdown(wait=True)

    # -- operations (worker thread) -----------------------------------------------------

    @staticmethod
    def recall(ws: Workspace, query: str, limit: int | None, scope: str) -> str:
        everywhere = scope == "everywhere"
        result = commands.recall(ws, query, limit=limit, scope="all" if everywhere else scope, every_project=everywhere)  # type: ignore[arg-type]
        return format_hits(query, result.hits, result.mode, scope)

    @staticmethod
    def remember(
        ws: Workspace, kind: str, title: str, body: str, tags: list[str] | None, expires: str | None, scope: str
    ) -> str:
        if scope == "project":
            try:
                ws.root_for("project")
            except InvalidInput:
                where = ws.project.path.parent if ws.project is not None else "this directory"
                raise ToolFailure(
                    f"{where} is not inside a git worktree, so it has no project memory. Save with "
                    'scope="global" if this holds for every project; otherwise the user has to start '
                    "`memoryd mcp` in the project (or with --project DIR)."
                ) from None
        result = commands.remember(
            ws,
            kind=kind,
            title=title,
            body=body,
            tags=tags or (),
            expires=expires,
            scope=scope,  # type: ignore[arg-type]
        )
        memory = result.memory
        if result.created:
            text = f"Saved {memory.kind} {memory.title!r} ({memory.scope}, id {memory.id})\n{memory.path}"
        else:
            text = (
                f"Updated {memory.kind} {memory.title!r} ({memory.scope}, id {memory.id}): a memory with "
                f"this title already existed and was rewritten\n{memory.path}"
            )
        if result.moved_from is not None:
            text += f"\n(moved from {result.moved_from})"
        if memory.expires is not None:
            text += f"\nexpires at {format_time(memory.expires)}"
        if result.note:
            text += f"\nNote: {result.note}."
        return text

    @staticmethod
    def forget(ws: Workspace, memory_id: str | None, query: str | None) -> str:
        if (memory_id is None) == (query is None):
            raise ToolFailure(
                "give either id (from recall or list_memories) or query (words every memory to forget "
                "contains), not both and not neither"
            )
        if memory_id is not None:
            deleted = commands.forget_by_id(ws, memory_id).deleted
        else:
            candidates = commands.forget_by_query(ws, query or "", limit=FORGET_CANDIDATES)
            if not candidates:
                return f"Nothing deleted: no memory in this project or the global tree matches every word of {query!r}."
            if len(candidates) > 1:
                many = f"at least {len(candidates)}" if len(candidates) >= FORGET_CANDIDATES else str(len(candidates))
                listing = "\n".join(_line(m) for m in candidates)
                return (
                    f"Nothing deleted: {many} memories match {query!r}. Call forget again with the id of "
                    f"each one to delete:\n{listing}"
                )
            deleted = commands.delete_memories(ws, candidates).deleted
        return "\n".join(f"Forgot {m.title!r} ({_label(m)})\n  deleted {m.path}" for m in deleted)

    @staticmethod
    def inspect(ws: Workspace, memory_id: str | None) -> str:
        if memory_id is None or not memory_id.strip():
            return commands.inventory(ws).text
        detail = commands.inspect(ws, memory_id)
        memory = detail.memory
        return f"# {memory.path}  ({_label(memory)}, recalled {detail.hits}×)\n{detail.text.rstrip()}"

    @staticmethod
    def list_memories(ws: Workspace, kind: str | None, limit: int | None, scope: str) -> str:
        limit = commands.clamp_limit(limit, DEFAULT_LIST)
        memories = commands.list_memories(ws, kind=kind, scope=scope, limit=limit + 1)  # type: ignore[arg-type]
        if not memories:
            what = f"of kind {kind!r} " if kind else ""
            return f"No memories {what}yet {_where(scope)}."
        shown = memories[:limit]
        lines = [f"Memories, newest first ({scope}{f', kind {kind}' if kind else ''}):"]
        lines.extend(_line(m) for m in shown)
        if len(memories) > limit:
            lines.append(f"… more: raise limit (at most {commands.MAX_LIMIT}), filter by kind, or recall by words.")
        return "\n".join(lines)


# --- the MCP server --------------------------------------------------------------------


def instructions(service: MemoryService) -> str:
    """Return what the server tells the model when it connects."""
    return instructions_for(service.project_dir, service.explicit_project)


def build_server(service: MemoryService) -> MCPServer:
    """Return the MCP server whose tools call `service`."""
    from mcp.server.mcpserver import MCPServer

    server: MCPServer = MCPServer(
        SERVER_NAME,
        title="memoryd",
        instructions=instructions(service),
        version=__version__,
        log_level="WARNING",
    )
    run = _runner(service)
    # Registration order is the order hosts list the tools in.
    _add_recall_tool(server, run)
    _add_changing_tools(server, run)
    _add_browsing_tools(server, run)
    return server


Run = Callable[..., Awaitable[str]]
SESSION_META = "ai.opencode/sessionID"  # OpenCode 2 names the calling session in every tools/call


def calling_session(ctx: Context | None) -> str | None:
    """The OpenCode session a tool call comes from, when the host says (`_meta`)."""
    try:
        meta = ctx.request_context.meta if ctx is not None else None
    except ValueError:  # no request in progress (a direct call)
        return None
    session = (meta or {}).get(SESSION_META)
    return session if isinstance(session, str) and 0 < len(session) <= 200 else None


def _runner(service: MemoryService) -> Run:
    """Return `run(operation, *args)`: the operation on the service's worker thread, its
    anticipated failures turned into the tool errors the model reads."""
    from mcp.server.mcpserver.exceptions import ToolError

    async def run(operation: Callable[..., str], *args: Any, ctx: Context | None = None) -> str:
        try:
            return await service.run(operation, *args, session=calling_session(ctx))
        except ToolFailure as exc:
            raise ToolError(str(exc)) from exc

    return run


def _tool(server: MCPServer, title: str, description: str, *, writes: bool = False, destructive: bool = False) -> Any:
    """The decorator registering a tool, with what a host may assume of it: it only reads,
    or it writes (idempotently; `destructive` when it deletes); it never leaves this machine."""
    from mcp.types import ToolAnnotations

    if writes:
        annotations = ToolAnnotations(
            title=title, read_only_hint=False, destructive_hint=destructive, idempotent_hint=True, open_world_hint=False
        )
    else:
        annotations = ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)
    return server.tool(description=description, annotations=annotations, structured_output=False)


def _add_recall_tool(server: MCPServer, run: Run) -> None:
    @_tool(
        server,
        "Recall memories",
        "Search long-term memory (decisions, facts, gotchas, lessons, past sessions) of this project "
        "and the global tree. Use at the start of a task and before retrying an approach. Returns "
        "title, kind, scope, date, id, path and a 500-character preview per match, best first.",
    )
    async def recall(
        query: Annotated[str, Field(description="A few words or identifiers to look for, e.g. 'postgres migration'.")],
        limit: Annotated[int, Field(description="How many results (1-50).")] = DEFAULT_RECALL,
        scope: RecallScope = "all",
        ctx: Context | None = None,
    ) -> str:
        return await run(MemoryService.recall, query, limit, scope, ctx=ctx)


def _add_changing_tools(server: MCPServer, run: Run) -> None:
    @_tool(
        server,
        "Remember",
        "Save a durable memory as a Markdown file: a decision and why, a gotcha, a lesson (what failed "
        "or worked), a fact, a preference. The same title in the same scope updates that memory "
        "instead of adding one. Credentials are refused: nothing is written.",
        writes=True,
    )
    async def remember(
        kind: Annotated[
            str, Field(description="One word, the folder: decision, fact, preference, gotcha, lesson…")
        ],
        title: Annotated[str, Field(description="Short and specific, e.g. 'Use WAL mode for the index'.")],
        body: Annotated[str, Field(description="What to remember and why, in Markdown.")],
        tags: Annotated[list[str] | None, Field(description="A few keywords, e.g. ['db', 'sqlite'].")] = None,
        expires: Annotated[
            str | None,
            Field(description="When it stops being true: 2025-12-31, 2025-12-31T18:00:00Z, or 12h, 30d, 2w, 6mo, 1y."),
        ] = None,
        scope: Annotated[
            Literal["project", "global"],
            Field(description="project: this worktree's memory (default); global: true for every project."),
        ] = "project",
        ctx: Context | None = None,
    ) -> str:
        return await run(MemoryService.remember, kind, title, body, tags, expires, scope, ctx=ctx)

    @_tool(
        server,
        "Forget",
        "Delete a memory. By id (from recall or list_memories): deleted wherever it is. By query: "
        "only this project and the global tree are searched, every word must match, and only a "
        "single match is deleted; several matches are listed and nothing is deleted, so call "
        "again with the id of each one to delete.",
        writes=True,
        destructive=True,
    )
    async def forget(
        id: Annotated[str | None, Field(description="The memory's id, e.g. '3f9a1c2b7d4e'.")] = None,  # noqa: A002
        query: Annotated[str | None, Field(description="Words the memory to forget contains (instead of id).")] = None,
        ctx: Context | None = None,
    ) -> str:
        return await run(MemoryService.forget, id, query, ctx=ctx)


def _add_browsing_tools(server: MCPServer, run: Run) -> None:
    @_tool(
        server,
        "Inspect memory",
        "Read one whole memory by id (its file: frontmatter and body). Without an id: the inventory "
        "of this project's and the global memories (titles, kinds, dates, ids; lessons first).",
    )
    async def inspect(
        id: Annotated[str | None, Field(description="The memory's id; omit for the inventory.")] = None,  # noqa: A002
        ctx: Context | None = None,
    ) -> str:
        return await run(MemoryService.inspect, id, ctx=ctx)

    @_tool(
        server,
        "List memories",
        "List memories newest first (title, kind, scope, date, id, path), optionally of one kind. "
        "To find memories about something, recall is better.",
    )
    async def list_memories(
        kind: Annotated[str | None, Field(description="Only this kind: decision, lesson, session…")] = None,
        limit: Annotated[int, Field(description="At most this many (1-50).")] = DEFAULT_LIST,
        scope: Scope = "all",
        ctx: Context | None = None,
    ) -> str:
        return await run(MemoryService.list_memories, kind, limit, scope, ctx=ctx)


def serve(config: Config, project_dir: Path | None, *, explicit_project: bool = False) -> None:
    """Serve the memory tools over stdio until the client closes the connection."""
    # Argument errors reach the model as text: spare it pydantic's documentation links.
    os.environ.setdefault("PYDANTIC_ERRORS_INCLUDE_URL", "0")
    service = MemoryService(config, project_dir, explicit_project=explicit_project)
    log.info("mcp.starting", extra={"project_dir": str(project_dir)})
    try:
        build_server(service).run("stdio")
    except Exception as exc:
        gone = (BrokenPipeError, ConnectionResetError)  # the client exited or closed our stdout: not a fault
        if not (isinstance(exc, gone) or isinstance(exc, ExceptionGroup) and exc.split(gone)[1] is None):
            log.exception("mcp server failed")
            raise
        log.info("mcp.client_gone")
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is left in our buffers goes nowhere
    finally:
        service.close()
        log.info("mcp.stopped")
