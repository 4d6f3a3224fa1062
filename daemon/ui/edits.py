"""The viewer's changes: edit a memory, forget one (after a confirmation), make a hard rule.

Each goes through the functions `memoryd remember` and `memoryd forget` call
(daemon.memory.commands): the same secret guard, the same checks, the file edited line
by line with the rest of its frontmatter kept, index.md and ROOT.md recompiled. Every
POST carries this session's CSRF token (`Viewer.form`) and ends in a redirect, so a
reload never sends it twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

if TYPE_CHECKING:
    from daemon.memory.commands import MemoryDetail
    from daemon.ui.viewer import Viewer

SESSION_KIND = "session"


def _detail(viewer: Viewer, request: Request) -> MemoryDetail | Response:
    """The memory the URL names, read from its file, or the page that says why not."""
    from daemon.memory.commands import inspect
    from daemon.memory.workspace import MemoryCommandError

    try:
        return inspect(viewer.workspace(), request.path_params["memory_id"][:200])
    except MemoryCommandError as exc:
        return viewer.page(request, "error.html", 404, message=str(exc))


def _editable(viewer: Viewer, request: Request, detail: MemoryDetail) -> Response | None:
    if detail.memory.kind.casefold() == SESSION_KIND or detail.memory.category == "sessions":
        message = "A session's note is rewritten by memoryd when the session changes: it is not edited here."
        return viewer.page(request, "error.html", 409, message=message)
    return None


def _back(memory_id: str, done: str) -> RedirectResponse:
    return RedirectResponse(f"/memories/{quote(memory_id, safe='')}?done={quote(done)}", 303)


def _editable_detail(viewer: Viewer, request: Request) -> MemoryDetail | Response:
    """The memory the request names, or the page that says why it cannot be edited."""
    detail = _detail(viewer, request)
    if isinstance(detail, Response):
        return detail
    refused = _editable(viewer, request, detail)
    return detail if refused is None else refused


async def edit_form(viewer: Viewer, request: Request) -> Response:
    detail = _editable_detail(viewer, request)
    if isinstance(detail, Response):
        return detail
    m = detail.memory
    values = {"description": m.description, "tags": ", ".join(m.tags), "body": m.body.strip()}
    return viewer.page(request, "edit.html", memory=m, values=values, error="")


def _remember(viewer: Viewer, detail: MemoryDetail, *, body: str, description: str, tags: str, hard_rule: bool) -> None:
    """Write a memory back through `remember`: same tree, kind and title, so it updates in place."""
    from daemon.memory.commands import remember

    m = detail.memory
    remember(
        viewer.workspace_of(m),
        kind=m.kind or m.category,
        title=m.title,
        body=body,
        tags=[tags] if tags.strip() else [],
        description=description.strip() or None,
        scope="project" if m.scope == "project" else "global",
        hard_rule=hard_rule,
        exact_tags=True,  # the form shows every tag: emptying the field removes them
    )


async def save(viewer: Viewer, request: Request) -> Response:
    from daemon.memory.workspace import MemoryCommandError

    form = await viewer.form(request)
    detail = _editable_detail(viewer, request)
    if isinstance(detail, Response):
        return detail
    values = {key: form.get(key, "") for key in ("description", "tags", "body")}
    try:
        _remember(viewer, detail, hard_rule=detail.memory.hard_rule, **values)
    except MemoryCommandError as exc:
        return viewer.page(request, "edit.html", 422, memory=detail.memory, values=values, error=str(exc))
    return _back(detail.memory.id, "saved")


async def make_hard_rule(viewer: Viewer, request: Request) -> Response:
    from daemon.memory.workspace import MemoryCommandError

    await viewer.form(request)
    detail = _editable_detail(viewer, request)
    if isinstance(detail, Response):
        return detail
    m = detail.memory
    try:
        _remember(viewer, detail, body=m.body, description=m.description, tags=", ".join(m.tags), hard_rule=True)
    except MemoryCommandError as exc:
        return viewer.page(request, "error.html", 422, message=str(exc))
    return _back(m.id, "hard-rule")


async def confirm_forget(viewer: Viewer, request: Request) -> Response:
    """The confirmation: what will be deleted, and one button that does it."""
    detail = _detail(viewer, request)
    if isinstance(detail, Response):
        return detail
    return viewer.page(request, "forget.html", memory=detail.memory)


async def forget(viewer: Viewer, request: Request) -> Response:
    from daemon.memory.commands import forget_by_id
    from daemon.memory.workspace import MemoryCommandError

    form = await viewer.form(request)
    if form.get("confirm") != "yes":
        return RedirectResponse(f"/memories/{quote(request.path_params['memory_id'], safe='')}/forget", 303)
    try:
        result = forget_by_id(viewer.workspace(), request.path_params["memory_id"][:200])
    except MemoryCommandError as exc:
        return viewer.page(request, "error.html", 404, message=str(exc))
    titles = ", ".join(m.title for m in result.deleted)
    return RedirectResponse(f"/memories?done={quote('forgotten: ' + titles[:200])}", 303)
