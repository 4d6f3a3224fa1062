"""The reading pages: Overview, Sessions, Memories, one memory or note, Search."""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from daemon.ui.browse import Row
from daemon.ui.render import query_words

if TYPE_CHECKING:
    from daemon.ui.viewer import Viewer

SEARCH_LIMIT = 20
MAX_QUERY = 500
SCOPES = ("all", "project", "global")


def _project(request: Request) -> str | None:
    """The `project` filter: a worktree, "" for machine-wide memories, None for all."""
    value = request.query_params.get("project")
    return None if value is None or value == "*" else value[:4096]


async def overview(viewer: Viewer, request: Request) -> Response:
    """Capture lag, backlog, failures, model spend and cap, the sink's outbox, each agent."""
    from daemon.status import gather

    viewer.refresh()
    status = gather(viewer.config(), memory_roots=False)
    counts = {"total": viewer.browser.total(), "projects": viewer.browser.projects()}
    return viewer.page(request, "overview.html", status=status, counts=counts, agents=agent_rows(status))


def agent_rows(status: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(agent, lines) for each agent `memoryd status` reports: OpenCode, and whatever
    others its `agents` part holds (one row of plain fields each), by the agent's name."""
    from daemon.source import AGENT_LABELS

    rows = [("OpenCode", list(status["opencode"]["lines"]))]
    for name, row in (status.get("agents") or {}).items():
        fields = row.items() if isinstance(row, dict) else []
        lines = [f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}" for key, value in fields
                 if isinstance(value, (str, int, float, bool, list)) and value not in ("", None, [])]  # fmt: skip
        rows.append((AGENT_LABELS.get(str(name), str(name)), lines))
    return rows


def _days(rows: list[Row]) -> list[tuple[str, list[Row]]]:
    return [(day, list(group)) for day, group in groupby(rows, key=lambda r: r.day)]


async def sessions(viewer: Viewer, request: Request) -> Response:
    """The sessions' notes, newest first, by day (and project and agent, when chosen)."""
    viewer.refresh()
    from daemon.source import AGENT_LABELS

    project = _project(request)
    agent = request.query_params.get("agent", "")[:32]
    page = viewer.browser.sessions(viewer.clock(), project=project, agent=agent, after=request.query_params.get("after", "")[:64])
    return viewer.page(
        request,
        "sessions.html",
        page=page,
        days=_days(page.rows),
        project=project,
        projects=viewer.browser.projects(),
        agent=agent if agent in AGENT_LABELS else "",
        agents=AGENT_LABELS,
    )


async def memories(viewer: Viewer, request: Request) -> Response:
    """Memories by kind and project, hard rules first, then newest."""
    viewer.refresh()
    project = _project(request)
    category = request.query_params.get("kind", "")[:200]
    after = request.query_params.get("after", "")[:64]
    page = viewer.browser.memories(viewer.clock(), category=category, project=project, after=after)
    return viewer.page(
        request, "memories.html", page=page, project=project, kind=category,
        kinds=viewer.browser.categories(), projects=viewer.browser.projects(),
        notice=request.query_params.get("done", ""),
    )  # fmt: skip


async def memory(viewer: Viewer, request: Request) -> Response:
    """One memory (or a session's note), rendered from its file."""
    from daemon.memory.commands import inspect
    from daemon.memory.workspace import MemoryCommandError

    try:
        detail = inspect(viewer.workspace(), request.path_params["memory_id"][:200])
    except MemoryCommandError as exc:
        return viewer.page(request, "error.html", 404, message=str(exc))
    return viewer.page(
        request, "memory.html", memory=detail.memory, hits=detail.hits, notice=request.query_params.get("done", "")
    )


async def search(viewer: Viewer, request: Request) -> Response:
    """Recall as `memoryd recall --project DIR --scope S` does; htmx asks for the results alone."""
    from daemon.memory.commands import recall
    from daemon.memory.workspace import MemoryCommandError

    query = request.query_params.get("q", "")[:MAX_QUERY]
    project = request.query_params.get("project", "") or None
    scope = request.query_params.get("scope", "all")
    scope = scope if scope in SCOPES else "all"
    result, error = None, ""
    if query.strip():
        viewer.refresh()
        try:
            ws = viewer.workspace(project)
            # Typing is no recall: hits are counted only for a search sent on purpose.
            counted = request.headers.get("hx-request") != "true"
            result = recall(ws, query, limit=SEARCH_LIMIT, scope=scope, refresh=False, count_hits=counted)
        except MemoryCommandError as exc:
            error = str(exc)
    template = "_results.html" if request.headers.get("hx-request") == "true" else "search.html"
    return viewer.page(
        request, template, query=query, project=project or "", scope=scope, scopes=SCOPES, result=result,
        error=error, words=query_words(query), projects=[p for p, _ in viewer.browser.projects() if p],
    )  # fmt: skip
