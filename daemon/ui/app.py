"""The viewer's ASGI app: the route table behind the guard."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from daemon.ui import edits, given_view, pages
from daemon.ui.guard import Guard
from daemon.ui.viewer import HERE, CsrfRefused, Viewer


def make_app(viewer: Viewer) -> Guard:
    """The viewer's ASGI app, behind its guard."""
    async def refused(request: Request, exc: Exception) -> Response:
        return viewer.page(request, "error.html", 403, message="This change carries no valid CSRF token: reload the page.")

    def bound(handler: Callable) -> Callable:
        async def endpoint(request: Request) -> Response:
            return await handler(viewer, request)

        return endpoint

    routes = [
        Route("/", bound(pages.overview)),
        Route("/sessions", bound(pages.sessions)),
        Route("/memories", bound(pages.memories)),
        Route("/memories/{memory_id}", bound(pages.memory)),
        Route("/memories/{memory_id}/edit", bound(edits.edit_form)),
        Route("/memories/{memory_id}/edit", bound(edits.save), methods=["POST"]),
        Route("/memories/{memory_id}/forget", bound(edits.confirm_forget)),
        Route("/memories/{memory_id}/forget", bound(edits.forget), methods=["POST"]),
        Route("/memories/{memory_id}/hard-rule", bound(edits.make_hard_rule), methods=["POST"]),
        Route("/search", bound(pages.search)),
        Route("/given", bound(given_view.given)),
        Route("/given/{number:int}", bound(given_view.given_one)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={CsrfRefused: refused})
    return Guard(app, lambda: viewer.secret, viewer.hosts, viewer.seen)
