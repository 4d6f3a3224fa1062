"""Service benchmark: memoryd's unit as shipped under a real systemd user manager.

    sudo python bench/bench_service.py [--root DIR ...] [--runs 3]

Runs as root (it starts a user manager for a test user, the way
tests/service/test_systemd_e2e.py does; see tests/service/systemd_user.py). `--root /` is the
machine's own systemd; `--root DIR` an unpacked newer one (`dpkg-deb -x systemd_254….deb DIR`,
with libsystemd-shared beside it), run with its own binaries and libraries. For each, with the
unit exactly as `memoryd service install` writes it (RestartSec=5s, no test drop-in):

1. `memoryd service install` until it returns (it waits for `active`, i.e. READY=1);
2. `kill -9` of the main process until the unit is active again with a new PID;
3. `systemctl --user stop` until it returns (a clean exit, `daemon.stopped` logged);
4. `systemd-analyze --user security memoryd.service`: the overall exposure score.

Each timing is the median of `--runs` runs (a fresh start of the unit each time).

A systemd built on a newer C library than the machine's (trixie's 257 on bookworm) runs
with its own loader: unpack it with libc6 and its libraries (`dpkg-deb -x`), link `DIR/lib`
and `DIR/bin` to `usr/lib` and `usr/bin`, point each executable at them with
`patchelf --set-interpreter DIR/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --force-rpath
--set-rpath DIR/usr/lib/x86_64-linux-gnu/systemd:DIR/usr/lib/x86_64-linux-gnu FILE`, and
run it alone with `SYSTEMD_LD_LIBRARY_PATH= python bench/bench_service.py --root DIR`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import OPENCODE_FIXTURE  # noqa: E402 - after sys.path
from tests.service import systemd_user  # noqa: E402


def show(manager: systemd_user.UserManager, *props: str) -> dict[str, str]:
    out = manager.as_user("systemctl", "--user", "show", "memoryd.service", "--property=" + ",".join(props)).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def wait_until(predicate, timeout: float, what: str) -> float:
    """Poll `predicate` every 20 ms; return the seconds it took to hold."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)
    return time.monotonic() - started


def one_run(manager: systemd_user.UserManager, memoryd: str) -> tuple[float, float, float]:
    """Install (→ active), kill -9 (→ active, new PID), stop; return the three durations."""
    started = time.monotonic()
    install = manager.as_user(memoryd, "service", "install", timeout=120)
    to_active = time.monotonic() - started
    if install.returncode != 0:
        raise RuntimeError(f"service install failed: {install.stdout}{install.stderr}")
    pid = int(show(manager, "MainPID")["MainPID"])
    os.kill(pid, signal.SIGKILL)

    def restarted() -> bool:
        state = show(manager, "ActiveState", "MainPID")
        return state.get("ActiveState") == "active" and state.get("MainPID") not in ("0", str(pid))

    to_restart = wait_until(restarted, 120, "a restart after kill -9")
    started = time.monotonic()
    stop = manager.as_user("systemctl", "--user", "stop", "memoryd.service", timeout=60)
    to_stop = time.monotonic() - started
    if stop.returncode != 0 or show(manager, "Result")["Result"] != "success":
        raise RuntimeError(f"stop failed: {stop.stderr} {show(manager, 'Result')}")
    uninstall = manager.as_user(memoryd, "service", "uninstall", timeout=120)
    if uninstall.returncode != 0:
        raise RuntimeError(f"service uninstall failed: {uninstall.stderr}")
    return to_active, to_restart, to_stop


def security_score(manager: systemd_user.UserManager, memoryd: str) -> str:
    install = manager.as_user(memoryd, "service", "install", timeout=120)
    if install.returncode != 0:
        raise RuntimeError(f"service install failed: {install.stdout}{install.stderr}")
    try:
        out = manager.as_user("systemd-analyze", "--user", "security", "memoryd.service", "--no-pager", timeout=60)
        found = re.search(r"Overall exposure level for memoryd\.service:\s*(.+)", out.stdout)
        return found.group(1).strip() if found else f"(no score: {out.stderr.strip()[:200]})"
    finally:
        manager.as_user("systemctl", "--user", "stop", "memoryd.service", timeout=60)
        manager.as_user(memoryd, "service", "uninstall", timeout=120)


def bench(root: Path, runs: int) -> None:
    user = systemd_user.ensure_user()
    with tempfile.TemporaryDirectory(prefix="bench-service-") as scratch:
        manager = systemd_user.UserManager(Path(scratch), user, root)
        try:
            manager.claim()  # a test run using the test user finishes first
            systemd_user.reset_home(user)
            manager.start()
            memoryd = str(systemd_user.install_memoryd(manager, ROOT))
            db = Path(user.pw_dir) / ".local/share/opencode/opencode.db"
            db.parent.mkdir(parents=True)
            shutil.copy(OPENCODE_FIXTURE / "opencode.db", db)
            subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", user.pw_dir], check=True)
            version = manager.as_user("systemctl", "--user", "show", "--value", "-p", "Version").stdout.strip()
            times = [one_run(manager, memoryd) for _ in range(runs)]
            score = security_score(manager, memoryd)
        finally:
            manager.stop()
    active, restart, stop = (statistics.median(column) for column in zip(*times))
    print(f"systemd {version} ({root}): install→active {active:.2f} s, kill -9→active {restart:.2f} s "
          f"(RestartSec=5s), stop {stop:.2f} s; median of {runs}; security {score}")
    for index, (a, r, s) in enumerate(times, 1):
        print(f"  run {index}: active {a:.2f} s, restart {r:.2f} s, stop {s:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, action="append",
                        help="a systemd tree: / (the default) or an unpacked newer one")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    reason = systemd_user.unavailable_reason()
    if reason:
        sys.exit(f"bench_service: no real systemd user manager here: {reason}")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for root in args.root or [Path("/")]:
        bench(root, args.runs)


if __name__ == "__main__":
    main()
