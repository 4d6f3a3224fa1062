"""Shared fixtures: an isolated home per test, and the real OpenCode fixture database."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import structlog

FIXTURES = Path(__file__).parent / "fixtures"
OPENCODE_FIXTURE = FIXTURES / "opencode-1.18.33"


@dataclass
class Home:
    """A fake user home with XDG folders, as memoryd sees it."""

    root: Path
    data: Path
    config: Path
    state: Path

    @property
    def opencode_db(self) -> Path:
        return self.data / "opencode" / "opencode.db"

    @property
    def state_dir(self) -> Path:
        return self.state / "memoryd"

    @property
    def global_root(self) -> Path:
        return self.config / "opencode" / "memory"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """Point HOME and XDG_* at a temp dir; clear MEMORYD_* and OPENCODE_DB."""
    root = tmp_path / "home"
    h = Home(root, root / ".local/share", root / ".config", root / ".local/state")
    for d in (h.data, h.config, h.state):
        d.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.setenv("XDG_DATA_HOME", str(h.data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h.config))
    monkeypatch.setenv("XDG_STATE_HOME", str(h.state))
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("MEMORYD_CONFIG", raising=False)
    import os

    for key in [k for k in os.environ if k.startswith("MEMORYD_")]:
        monkeypatch.delenv(key)
    return h


@pytest.fixture
def fixture_db(home: Home) -> Path:
    """A copy of the real OpenCode 1.18.33 database at the default location."""
    home.opencode_db.parent.mkdir(parents=True)
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", home.opencode_db)
    return home.opencode_db


@pytest.fixture(scope="session")
def fixture_sessions() -> dict:
    """sessions.json: scenario → session id, project, facts, forbidden strings, junk."""
    return json.loads((OPENCODE_FIXTURE / "sessions.json").read_text())


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Fail any test that leaves a thread running (watchdog's rule, ours too)."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for thread in leaked:
        thread.join(timeout=2)
    leaked = [t for t in leaked if t.is_alive()]
    assert not leaked, f"test leaked threads: {[t.name for t in leaked]}"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """setup_logging changes process-wide state; put it back for the next test."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        if handler not in handlers:
            handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    structlog.reset_defaults()


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path: a unix socket's path must stay under ~100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="md-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
