"""`memoryd run` on a terminal: readable lines there, JSON lines in the file; and the
state folder an older release left 0755 is private once it has started."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import stat
import subprocess
import sys
import time


def test_run_on_a_terminal_prints_readable_lines_and_logs_json(home, fixture_db):
    home.state_dir.mkdir(mode=0o755)
    os.chmod(home.state_dir, 0o755)
    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "daemon", "run"],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        close_fds=True,
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while b"session.distilled" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                seen += os.read(main, 65536)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        os.close(main)
    console = [line for line in seen.decode("utf-8", "replace").splitlines() if "daemon.starting" in line]
    assert console, seen[-2000:]
    assert not console[0].lstrip().startswith("{")  # not a JSON line
    log = (home.state_dir / "memoryd.log").read_text().splitlines()
    events = [json.loads(line)["event"] for line in log]
    assert "daemon.starting" in events and "session.distilled" in events
    assert stat.S_IMODE(home.state_dir.stat().st_mode) == 0o700
