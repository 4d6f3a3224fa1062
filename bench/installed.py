"""memoryd as a user runs it: the `memoryd` console script of a non-editable install.

The README installs memoryd with `pip install .`, and `memoryd opencode install` writes that
console script's path into the plugin, so the command a session start runs without a daemon
is that script. A checkout's dev venv runs the same code through an editable install, whose
import finder adds ~25 ms to every command here: a figure taken from it is not the user's.

`memoryd_as_installed()` installs this checkout, as it is now, into its own venv under
bench/out/ (dependencies fetched once; the package itself reinstalled on every call, so
that the figure is the working tree's) and returns the script's path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / "bench" / "out" / "installed"


def memoryd_as_installed() -> Path:
    python = VENV / "bin" / "python"
    fresh = not python.exists()
    if fresh:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    # From a copy of the working tree's files (tracked and new, not ignored): a build in the
    # checkout would leave build/ there, whose stale modules a later build installs again.
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    with tempfile.TemporaryDirectory(prefix="memoryd-src-") as tmp:
        for name in filter(None, listed):
            if (REPO / name).is_file():
                (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / name, Path(tmp) / name)
        # The dependencies once; the package itself every time (the tree as it is now).
        extra = [] if fresh else ["--no-deps", "--force-reinstall"]
        subprocess.run([str(python), "-m", "pip", "install", "-q", *extra, tmp], check=True)
    return VENV / "bin" / "memoryd"
