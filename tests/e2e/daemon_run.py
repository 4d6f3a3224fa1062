"""`memoryd run` as the end-to-end tests start it: a clean environment, READY awaited, stopped by PID."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.service.conftest import NotifySocket, wait_for

#: Variables of the outer environment a test daemon must not inherit.
_FOREIGN = ("MEMORYD_", "NOTIFY_SOCKET", "XDG_", "OPENCODE")


def notes(folder: Path) -> list[Path]:
    """The session notes in a tree's folder (its index.md left out)."""
    return sorted(p for p in folder.glob("*.md") if p.name != "index.md")


@contextmanager
def running_daemon(base: Path, home_env: Mapping[str, str], **settings: str) -> Iterator[tuple[subprocess.Popen[bytes], NotifySocket]]:
    """A `memoryd run` for one OpenCode home, READY=1 seen; on exit SIGTERM, then kill.

    ``settings`` are extra environment variables (``MEMORYD_…`` overrides). Output goes to
    ``base / "daemon.out"``.
    """
    notify = NotifySocket(base / "notify.sock")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)},
        **home_env,
        **settings,
        "NOTIFY_SOCKET": str(notify.path),
    }
    log = (base / "daemon.out").open("wb")
    daemon = subprocess.Popen([sys.executable, "-m", "daemon", "run"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: notify.saw("READY=1"), what="READY=1")
        yield daemon, notify
    finally:
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(10)
        log.close()
        notify.close()
