"""What every page of the viewer shares (Viewer): configuration, index, templates, secret.

Pages are plain server-rendered HTML (Jinja2, autoescaped) that read without
JavaScript; htmx (vendored in static/, with its licence) only makes search answer as
you type. Handlers are `async` and run their (short, SQLite) work inline, so the whole
viewer answers on one thread, its own event loop, beside the daemon's context socket,
and never takes a lock or a connection the socket uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from daemon.ui.browse import Browser
from daemon.ui.render import highlight, markdown
from daemon.ui.security import CSRF_FIELD, CSRF_HEADER, allowed_hosts, csrf_token, same

if TYPE_CHECKING:
    from daemon.config import Config
    from daemon.memory.index import SearchIndex
    from daemon.memory.tree import Memory
    from daemon.memory.workspace import Workspace

HERE = Path(__file__).parent
REFRESH_EVERY_S = 2.0  # without a daemon, the trees are looked at again at most this often


class CsrfRefused(Exception):
    """A state change without this session's CSRF token."""


class Viewer:
    """What every page needs: the configuration, the index, the templates, the secret."""

    def __init__(
        self,
        config: Callable[[], Config],
        secret: str,
        *,
        daemon: bool,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.config = config
        self.secret = secret
        self.daemon = daemon  # True: the daemon keeps the index current, reads trust it
        self.clock = clock
        self.port = 0  # set once the socket is bound (the Host check needs it)
        self.last_request = time.monotonic()  # the guard moves it: an idle viewer can stop
        self._index: SearchIndex | None = None
        self._refreshed = 0.0
        self.browser = Browser(config().paths.index_db, config().settings.notes.category)
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters["markdown"] = markdown
        self.templates.filters["highlight"] = highlight
        self.templates.filters["when"] = lambda dt: dt.strftime("%Y-%m-%d %H:%M") if dt else ""

    # -- the memory core -------------------------------------------------------------

    @property
    def index(self) -> SearchIndex:
        from daemon.memory.index import open_index

        if self._index is None:
            self._index = open_index(self.config())
        return self._index

    def workspace(self, project: str | None = None) -> Workspace:
        """The workspace of a caller in `project` (a worktree; None: the global tree only),
        as the CLI opens it for `--project DIR`."""
        from daemon.memory.workspace import InvalidInput, open_workspace

        where = Path(project) if project else None
        if where is not None and not where.is_dir():
            raise InvalidInput(f"project {project}: no such directory")
        ws = open_workspace(self.config(), where, explicit_project=where is not None, index=self.index)
        ws.trust_index = self.daemon
        ws.clock = self.clock
        return ws

    def workspace_of(self, memory: Memory) -> Workspace:
        """The workspace whose `remember` writes back to this memory's own tree."""
        return self.workspace(str(memory.root.path.parent) if memory.scope == "project" else None)

    def refresh(self) -> None:
        """Without a daemon, bring the index up to date with the trees (quick, throttled)."""
        if self.daemon or time.monotonic() - self._refreshed < REFRESH_EVERY_S:
            return
        from daemon.memory.roots import global_tree

        roots = {r.path: r for r in self.index.known_roots()}
        roots.setdefault(global_tree(self.config().paths).path, global_tree(self.config().paths))
        ws = self.workspace()
        ws.refresh(list(roots.values()))
        self._refreshed = time.monotonic()

    def close(self) -> None:
        self.browser.close()
        if self._index is not None:
            self._index.close()
            self._index = None

    # -- pages -----------------------------------------------------------------------

    def hosts(self) -> frozenset[str]:
        return allowed_hosts(self.port)

    def seen(self) -> None:
        """A request came in (the guard says so first): the viewer is in use."""
        self.last_request = time.monotonic()

    def page(self, request: Request, template: str, code: int = 200, **data: Any) -> HTMLResponse:
        session = request.scope.get("state", {}).get("session", "")
        html = self.templates.get_template(template).render(
            request=request, csrf=csrf_token(self.secret, session), path=request.url.path, daemon=self.daemon, **data
        )
        return HTMLResponse(html, code)

    async def form(self, request: Request) -> dict[str, str]:
        """The form of a state change; raise CsrfRefused without this session's token."""
        form = await request.form(max_files=0, max_fields=20, max_part_size=256 * 1024)
        given = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD)
        session = request.scope.get("state", {}).get("session", "")
        if not isinstance(given, str) or not session or not same(given, csrf_token(self.secret, session)):
            raise CsrfRefused()
        return {k: v for k, v in form.items() if isinstance(v, str)}
