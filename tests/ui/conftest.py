"""A home with real memory trees (a git project with .memory/, the global tree), and a
viewer serving them on 127.0.0.1 from a thread, as the daemon serves it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from daemon.config import Config, load_settings
from daemon.memory.commands import remember
from daemon.memory.workspace import open_workspace

# Payloads that must stay inert wherever memory text is shown.
XSS_SCRIPT = "<script>window.__xss = 'script'</script>"
XSS_IMG = "<img src=x onerror=\"window.__xss='img'\">"
XSS_LINK = "[click me](javascript:window.__xss='link')"
XSS_SVG = "<svg onload=\"window.__xss='svg'\"></svg>"
XSS_TAG = "<img src=x onerror=__xss=7>"  # a tag has at most 40 characters
XSS_PROMPT = f"fix the WAL checkpoint {XSS_SCRIPT} {XSS_IMG}"


@dataclass
class World:
    """The trees a viewer test reads and changes."""

    config: Config
    project: Path  # a git worktree with a .memory/ tree
    ids: dict[str, str]  # a name for each memory made → its id
    paths: dict[str, Path]  # … → its file

    def file_of(self, name: str) -> Path:
        return self.paths[name]


def make_world(home, *, sessions: int = 3) -> World:  # noqa: ANN001 - the `home` fixture's Home
    project = home.root / "work" / "shop"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".memory").mkdir()
    config = Config(*load_settings(None))
    ids: dict[str, str] = {}
    paths: dict[str, Path] = {}
    with open_workspace(config, project, explicit_project=True) as ws:
        def save(name: str, **kw: object) -> None:
            memory = remember(ws, **kw).memory  # type: ignore[arg-type]
            ids[name], paths[name] = memory.id, memory.path

        save("wal", kind="decision", title="Use WAL mode", tags=["db,sqlite"],
             body="SQLite runs in WAL so concurrent sessions do not queue.\nCheckpoint after each pass.\nNever VACUUM live.")
        save("rule", kind="rule", title="Never push to main", body="Open a pull request; CI must pass.", hard_rule=True)
        save("deploy", kind="fact", title="部署 runs from the release branch", body="部署环境 is staging first, then 生产.",
             scope="global")
        save("xss", kind="gotcha", title=f"Title {XSS_SCRIPT}{XSS_IMG}", description=f"Described {XSS_SVG}",
             tags=[XSS_TAG], body=f"Body {XSS_LINK} {XSS_SCRIPT} {XSS_IMG}\n\n{'x' * 15_000}")
        for n in range(sessions):
            save(f"session{n}", kind="session", title=f"Session {n}: fixed the flaky login test",
                 body=f"## What Was Worked On\n- the login test, round {n}\n\n## Outcome / Current State\n- green")
        record_block(config, ws, project, XSS_PROMPT, "ses_xss_prompt")
    return World(config, project, ids, paths)


def record_block(config: Config, ws, project: Path, prompt: str, session: str) -> dict:  # noqa: ANN001
    """What the daemon's socket records when a session asks for its block."""
    from datetime import UTC, datetime

    from daemon.memory.context import context_payload
    from daemon.service.given import GivenLog, given_path

    payload = context_payload(ws, config.settings.inject, project, prompt, datetime.now(UTC), session=session)
    log = GivenLog(given_path(config.paths.state_dir))
    log.record(session, str(project), prompt, payload)
    log.close()
    return payload


@pytest.fixture
def world(home) -> World:  # noqa: ANN001
    return make_world(home)


@pytest.fixture
def served(world: World) -> Iterator:
    from daemon.ui.server import start_viewer

    running = start_viewer(lambda: world.config, daemon=False)
    try:
        yield running
    finally:
        running.close()


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    """Name the browser the real-browser tests ran in, in the test report."""
    from .test_browser import ARTIFACTS, BROWSER_VERSION

    if BROWSER_VERSION:
        terminalreporter.write_line(f"viewer browser tests ran in {BROWSER_VERSION[0]}; screenshots in {ARTIFACTS}")
