"""Run memoryd as a real unprivileged user (the tests run as root, as CI does): for
faults only another user meets, a folder root left behind or one they cannot write."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.systemd_user import ensure_user

USER = "memoryd-faults"
REPO = Path(__file__).resolve().parents[1]


def _candidates() -> list[str]:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return [os.path.realpath(sys.executable), f"/usr/bin/{version}", f"/usr/local/bin/{version}"]


class OtherUser:
    """A test user whose HOME is a folder of the test's, running this checkout's memoryd."""

    def __init__(self, home: Path) -> None:
        self.user = ensure_user(USER)
        self.uid, self.gid = self.user.pw_uid, self.user.pw_gid
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        os.chown(home, self.uid, self.gid)
        # An interpreter of our version the user can run (ours may sit under /root).
        for self.python in _candidates():
            probe = self.run_python("import daemon, pydantic, click")
            if probe.returncode == 0:
                break
        else:
            pytest.skip(f"the test user cannot run this checkout: {probe.stderr.strip()[-200:]}")

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "USER": USER, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

    def run_python(self, code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        paths = [str(REPO), *site.getsitepackages()]
        prelude = f"import sys; sys.path[:0] = {paths!r}; "
        cmd = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups", "env", "-i",
               *[f"{k}={v}" for k, v in self.env().items()], self.python, "-c", prelude + code, *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd or self.home)

    def memoryd(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`memoryd ARGS` as the user, in `cwd` (their home by default)."""
        return self.run_python("from daemon.cli.main import main; sys.argv[0] = 'memoryd'; main()", *args, cwd=cwd)

    def own(self, path: Path) -> None:
        subprocess.run(["chown", "-R", f"{self.uid}:{self.gid}", str(path)], check=True)


@pytest.fixture
def other_user() -> Iterator[OtherUser]:
    """The test user with a fresh home (outside pytest's root-only temp folder)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (to run memoryd as another user)")
    base = Path(tempfile.mkdtemp(prefix="memoryd-faults-"))
    base.chmod(0o755)
    try:
        yield OtherUser(base / "home")
    finally:
        shutil.rmtree(base, ignore_errors=True)
