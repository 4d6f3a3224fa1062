"""memoryd's unit under a real systemd user manager: install, ready, crash, reload, watchdog, stop.

Runs as root where systemd is installed (see tests/service/systemd_user.py for how a user
manager runs on a machine whose PID 1 is not systemd); skipped with the reason elsewhere,
and an error with MEMORYD_REQUIRE_SYSTEMD=1 (CI). A drop-in shortens RestartSec= and
WatchdogSec= so the whole life cycle takes seconds, not minutes; the unit is otherwise the
one `memoryd service install` writes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import OPENCODE_FIXTURE
from tests.service import systemd_user
from tests.service.conftest import wait_for

REPO = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("MEMORYD_REQUIRE_SYSTEMD") == "1"
# Short enough for a test, long enough for a cold Python start on a busy machine.
DROP_IN = """[Service]
RestartSec=1s
WatchdogSec=6s
TimeoutAbortSec=2s
"""


def _skip_or_fail(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"{reason} (MEMORYD_REQUIRE_SYSTEMD=1 makes this an error)", pytrace=False)
    pytest.skip(reason)


class Service:
    """The test user's memoryd, driven the way a user would: `memoryd …`, `systemctl --user …`."""

    def __init__(self, manager: systemd_user.UserManager, memoryd: Path) -> None:
        self.manager = manager
        self.memoryd = str(memoryd)
        self.home = Path(manager.user.pw_dir)

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return self.manager.as_user(*argv, timeout=timeout)

    def show(self) -> dict[str, str]:
        props = "ActiveState,SubState,MainPID,NRestarts,Result,StatusText,LoadState,UnitFileState"
        out = self.run("systemctl", "--user", "show", "memoryd.service", f"--property={props}").stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def main_pid(self) -> int:
        return int(self.show().get("MainPID", "0"))

    def running_with_new_pid(self, old: int) -> int | None:
        state = self.show()
        pid = int(state.get("MainPID", "0"))
        return pid if state.get("ActiveState") == "active" and pid not in (0, old) else None

    def log_events(self) -> list[str]:
        path = self.home / ".local/state/memoryd/memoryd.log"
        if not path.exists():
            return []
        return [json.loads(line).get("event", "") for line in path.read_text().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    reason = systemd_user.unavailable_reason()
    if reason:
        _skip_or_fail(f"no real systemd user manager here: {reason}")
    user = systemd_user.ensure_user()
    manager = systemd_user.UserManager(tmp_path_factory.mktemp("systemd"), user,
                                       Path(os.environ.get("SYSTEMD_ROOT", "/")))
    try:
        manager.claim()  # another run on this machine uses the test user: wait for it
        systemd_user.reset_home(user)
        manager.start()
    except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
        manager.stop()
        _skip_or_fail(f"cannot start a systemd user manager: {exc}")
    started: list[int] = []
    try:
        memoryd = systemd_user.install_memoryd(manager, REPO)
        home = Path(user.pw_dir)
        db = home / ".local/share/opencode/opencode.db"
        db.parent.mkdir(parents=True)
        shutil.copy(OPENCODE_FIXTURE / "opencode.db", db)
        drop_in = home / ".config/systemd/user/memoryd.service.d/test.conf"
        drop_in.parent.mkdir(parents=True)
        drop_in.write_text(DROP_IN)
        subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(home)], check=True)
        svc = Service(manager, memoryd)
        svc.started = started  # type: ignore[attr-defined]
        yield svc
    finally:
        for pid in started:  # every memoryd the test saw, in case one outlived its manager
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        manager.stop()


def test_the_unit_runs_its_whole_life_under_real_systemd(service: Service) -> None:
    started = service.started  # type: ignore[attr-defined]
    t0 = time.monotonic()
    install = service.run(service.memoryd, "service", "install")
    to_active = time.monotonic() - t0
    assert install.returncode == 0, install.stdout + install.stderr
    state = service.show()
    # Type=notify: active means READY=1 arrived (install waits for it).
    assert (state["ActiveState"], state["SubState"], state["UnitFileState"]) == ("active", "running", "enabled")
    pid = service.main_pid()
    started.append(pid)
    assert service.run(service.memoryd, "service", "status").returncode == 0

    sessions = service.home / ".config/opencode/memory/sessions"
    wait_for(lambda: list(sessions.glob("*.md")), 30, "notes from the first pass")
    assert "daemon.ready" in service.log_events()

    # kill -9: systemd restarts it (Restart=on-failure), with a new pid.
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    pid = wait_for(lambda: service.running_with_new_pid(pid), 30, "a restart after kill -9")
    to_restart = time.monotonic() - t0
    started.append(pid)
    assert service.show()["NRestarts"] == "1"

    # reload: SIGHUP, the same process, active again once it said READY=1.
    reload = service.run("systemctl", "--user", "reload", "memoryd.service", timeout=60)
    assert reload.returncode == 0, reload.stderr
    # `systemctl reload` may return while the unit is still 'reloading' (until READY=1 again).
    wait_for(lambda: service.show()["ActiveState"] == "active", 30, "active again after reload")
    assert service.main_pid() == pid
    wait_for(lambda: "daemon.reloaded" in service.log_events(), 10, "daemon.reloaded in the log")

    # A second memoryd on the same state exits 2 (and the unit would not restart it).
    second = service.run(service.memoryd, "run", timeout=60)
    assert second.returncode == 2, second.stderr

    # Watchdog: a frozen daemon misses its pings and is replaced.
    os.kill(pid, signal.SIGSTOP)
    pid = wait_for(lambda: service.running_with_new_pid(pid), 60, "a restart after a watchdog timeout")
    started.append(pid)

    # stop: SIGTERM, a clean exit that logs daemon.stopped.
    t0 = time.monotonic()
    stop = service.run("systemctl", "--user", "stop", "memoryd.service", timeout=60)
    to_stop = time.monotonic() - t0
    assert stop.returncode == 0, stop.stderr
    state = service.show()
    assert (state["ActiveState"], state["Result"]) == ("inactive", "success")
    assert service.log_events()[-1] == "daemon.stopped"

    journal = service.run("journalctl", "--user", "-u", "memoryd", "--no-pager", "-o", "cat").stdout
    assert "Watchdog timeout" in journal or "watchdog timeout" in journal.lower()
    memoryd_lines = [line for line in journal.splitlines() if line.startswith("{")]
    assert any('"daemon.ready"' in line for line in memoryd_lines), journal[-2000:]
    assert any('"daemon.stopped"' in line for line in memoryd_lines)

    uninstall = service.run(service.memoryd, "service", "uninstall")
    assert uninstall.returncode == 0, uninstall.stderr
    assert not (service.home / ".config/systemd/user/memoryd.service").exists()
    assert service.show()["LoadState"] == "not-found"
    assert service.run(service.memoryd, "service", "status").returncode == 1
    version = service.run("systemctl", "--user", "show", "--value", "-p", "Version").stdout.strip()
    print(f"\nsystemd {version}: active {to_active:.1f}s, restart {to_restart:.1f}s, stop {to_stop:.1f}s")


def _assert_left_nothing_enabled(service: Service, install: subprocess.CompletedProcess[str], why: str) -> None:
    assert install.returncode == 1, install.stdout + install.stderr
    errors = [line for line in install.stderr.splitlines() if line.startswith("memoryd: ") and "warning" not in line]
    assert len(errors) == 1, install.stderr
    assert "did not start" in errors[0] and why in errors[0], errors[0]
    assert "stopped and disabled" in errors[0]
    assert "Created symlink" not in install.stdout + install.stderr
    state = service.show()
    assert state["ActiveState"] in ("inactive", "failed") and state["UnitFileState"] != "enabled", state
    assert not (service.home / ".config/systemd/user/default.target.wants/memoryd.service").exists()
    assert service.run(service.memoryd, "service", "status").returncode == 1, "a failed unit is no success"


def test_an_install_whose_daemon_refuses_to_start_exits_1_and_enables_nothing(service: Service) -> None:
    config = service.home / ".config/memoryd/config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("not [toml\n")
    subprocess.run(["chown", "-R", f"{service.manager.uid}:{service.manager.user.pw_gid}",
                    str(service.home / ".config/memoryd")], check=True)
    try:
        install = service.run(service.memoryd, "service", "install")
        # Exit 2 (a configuration error) is not restarted (RestartPreventExitStatus=2).
        _assert_left_nothing_enabled(service, install, "status=2)")  # memoryd's 2, not systemd's name for it
        assert "memoryd config check" in install.stderr
        assert service.show()["NRestarts"] == "0"
    finally:
        config.unlink()
        service.run(service.memoryd, "service", "uninstall")


def test_a_memoryd_under_tmp_is_warned_about_and_its_unit_is_not_left_enabled(service: Service) -> None:
    # PrivateTmp=yes gives the unit its own /tmp: a memoryd installed there cannot be run (203/EXEC).
    folder = Path(tempfile.mkdtemp(prefix="memoryd-bin-", dir="/tmp"))
    try:
        hidden = folder / "memoryd"
        shutil.copy(service.memoryd, hidden)
        folder.chmod(0o755)
        hidden.chmod(0o755)
        install = service.run(str(hidden), "service", "install")
        assert "warning: the service cannot see memoryd itself" in install.stderr, install.stderr
        _assert_left_nothing_enabled(service, install, "EXEC")
    finally:
        service.run(service.memoryd, "service", "uninstall")
        shutil.rmtree(folder)
