"""The viewer's door (an ASGI middleware): Host, secret, cookie and the response headers.

Every request passes here before any page code runs, so a refused one sees no data:
a foreign Host header (DNS rebinding) gets 421, a missing or wrong secret 401, a method
other than GET, HEAD or POST 405 (there is no CORS: no preflight is ever answered). A
POST from another origin is refused here; its CSRF token is checked by the page that
reads its form (`Viewer.form`). Every answer forbids framing, sniffing, caching,
referrers to other sites and any script or style not served by the viewer itself.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from daemon.ui.security import COOKIE, TOKEN_PARAM, new_session_cookie, same, session_of

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
NO_SECRET = (
    "401: this viewer needs its secret. Open it with `memoryd ui`, which opens the right "
    "address in your browser (or prints it with --no-browser)."
)


class Guard:
    """Refuses what is not this machine's browser with this install's secret."""

    def __init__(
        self, app: ASGIApp, secret: Callable[[], str], hosts: Callable[[], frozenset[str]], seen: Callable[[], None]
    ) -> None:
        self.app = app
        self.secret = secret
        self.hosts = hosts
        self.seen = seen  # told of every request: an idle viewer may stop

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        started = time.perf_counter()
        self.seen()

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                # The page's own time, for the benchmark and the browser's devtools.
                timing = f"app;dur={(time.perf_counter() - started) * 1000:.2f}".encode()
                message["headers"] = [*message.get("headers", []), *HEADERS, (b"server-timing", timing)]
            await send(message)

        refusal = self._refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def _refusal(self, request: Request) -> Response | None:
        """The answer to a request that may not reach a page (None: it may), and the
        session it belongs to, put in the request's state."""
        hosts = self.hosts()
        host = request.headers.get("host", "")
        if host not in hosts:
            return PlainTextResponse("421: this address is not the viewer's (Host header refused)", 421)
        if request.method not in ("GET", "HEAD", "POST"):
            return PlainTextResponse("405: method not allowed", 405, headers={"Allow": "GET, HEAD, POST"})
        secret = self.secret()
        token = request.query_params.get(TOKEN_PARAM)
        if token is not None:
            if not same(token, secret):
                return PlainTextResponse(NO_SECRET, 401)
            # The secret is swapped for a cookie, and leaves the address bar at once.
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
            path = "/" + request.url.path.lstrip("/")  # never `//host`: a redirect stays on this viewer
            target = path + (f"?{urlencode(rest)}" if rest else "")
            answer = RedirectResponse(target, 303)
            answer.set_cookie(COOKIE, new_session_cookie(secret), httponly=True, samesite="strict", path="/")
            return answer
        session = session_of(secret, request.cookies.get(COOKIE))
        if session is None:
            return PlainTextResponse(NO_SECRET, 401)
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin is not None and origin.removeprefix("http://") not in hosts:
                return PlainTextResponse("403: a change from another site is refused", 403)
        request.scope.setdefault("state", {})["session"] = session
        return None
