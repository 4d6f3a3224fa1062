"""Service fault benchmark: how long a pass takes to give up on a hanging model server, and
how soon `memoryd run` says READY=1 while that server hangs.

    python bench/bench_faults.py [--timeout 5 --timeout 20]

For each llm.timeout_s given, against a real HTTP server on 127.0.0.1 that accepts every
request and never answers, with the fixture database (6 sessions):

1. `memoryd distill`: wall time until it gives up (issue 19: about two timeouts; it was
   611 s at timeout_s = 120, six requests) and the requests the server saw;
2. `memoryd run`: seconds from start to READY=1 on a notify socket (was 95 s at the
   default timeout, after the first pass; now before it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.capture.distill.conftest import ModelServer, Reply  # noqa: E402 - after sys.path
from tests.conftest import OPENCODE_FIXTURE  # noqa: E402


def environment(home: Path, url: str, timeout: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "NOTIFY_SOCKET", "WATCHDOG_"))}
    env.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"), OPENCODE_DB=str(home / "opencode.db"),
        MEMORYD_LLM__PROVIDER="openai", MEMORYD_LLM__BASE_URL=url + "/v1", MEMORYD_LLM__MODEL="m",
        MEMORYD_LLM__TIMEOUT_S=str(timeout), MEMORYD_CAPTURE__SETTLE_SECONDS="0",
    )
    return env


def fresh_home(base: Path, name: str) -> Path:
    home = base / name
    home.mkdir()
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", home / "opencode.db")
    return home


def hanging_server(timeout: float) -> ModelServer:
    server = ModelServer()
    server.default = Reply(hang=True)
    server.hang_s = timeout * 10 + 60  # never answers within the run (it closes only at the end)
    return server


def distill_gives_up(base: Path, timeout: float) -> tuple[float, int]:
    server = hanging_server(timeout)
    server.start()
    try:
        env = environment(fresh_home(base, f"distill-{timeout:g}"), server.url, timeout)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "daemon", "distill"], env=env, capture_output=True, timeout=timeout * 10 + 60)
        return time.monotonic() - started, len(server.requests)
    finally:
        server.released.set()
        server.stop()


def ready_while_hanging(base: Path, timeout: float) -> float:
    server = hanging_server(timeout)
    server.start()
    notify_path = Path(tempfile.mkdtemp(prefix="nfy-")) / "n.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify_path))
    sock.settimeout(timeout * 4 + 60)
    env = environment(fresh_home(base, f"run-{timeout:g}"), server.url, timeout) | {"NOTIFY_SOCKET": str(notify_path)}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "daemon", "run"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while b"READY=1" not in sock.recv(4096).split(b"\n"):
            continue
        return time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(60)
        sock.close()
        server.released.set()
        server.stop()
        shutil.rmtree(notify_path.parent, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, action="append", help="llm.timeout_s values (default 5 and 20)")
    args = parser.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
        for timeout in args.timeout or [5.0, 20.0]:
            seconds, requests = distill_gives_up(Path(tmp), timeout)
            print(f"timeout_s={timeout:g}: distill gave up after {seconds:.1f} s "
                  f"({seconds / timeout:.2f} timeouts, {requests} requests)")
            print(f"timeout_s={timeout:g}: READY=1 after {ready_while_hanging(Path(tmp), timeout):.2f} s")


if __name__ == "__main__":
    main()
