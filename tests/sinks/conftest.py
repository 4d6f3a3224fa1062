"""A real Cognee server for the sink's tests: one per test session, restartable.

Skipped with the reason when no Cognee venv is installed (.ci/install-cognee makes one);
with MEMORYD_REQUIRE_COGNEE=1 (CI) a missing server fails instead.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from tests.service.conftest import daemon, daemon_env, notify  # noqa: F401 - the daemon tests' fixtures
from tests.sinks.cognee_server import CogneeServer, missing_reason

# Read at import: the `home` fixture clears MEMORYD_* variables for each test.
REQUIRED = os.environ.get("MEMORYD_REQUIRE_COGNEE") == "1"
_datasets = itertools.count(1)


@pytest.fixture(scope="session")
def cognee(tmp_path_factory: pytest.TempPathFactory):
    reason = missing_reason()
    if reason:
        if REQUIRED:
            pytest.fail(f"{reason} (MEMORYD_REQUIRE_COGNEE=1 makes this an error)", pytrace=False)
        pytest.skip(reason)
    server = CogneeServer(tmp_path_factory.mktemp("cognee"))
    try:
        server.start()
    except RuntimeError as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def cognee_up(cognee: CogneeServer) -> CogneeServer:
    """The server, started again if an earlier test killed it."""
    if cognee.process is None or cognee.process.poll() is not None:
        cognee.start()
    return cognee


@pytest.fixture
def dataset() -> str:
    """A dataset of the test's own: tests share one server, never one dataset."""
    return f"memoryd_test_{next(_datasets)}_{os.getpid()}"


def write_config(home_config: Path, url: str, dataset: str, **extra: object) -> Path:
    """The memoryd config file pointing the sink at `url`."""
    lines = ["[sinks.cognee]", f'url = "{url}"', f'dataset = "{dataset}"']
    for key, value in extra.items():
        lines.append(f"{key} = {value!r}".replace("'", '"') if isinstance(value, str) else f"{key} = {str(value).lower()}")
    path = home_config / "memoryd" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
