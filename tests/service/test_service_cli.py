"""`memoryd service`: dry runs, and real installs into a temp HOME with a fake systemctl/launchctl."""

from __future__ import annotations

import os
import plistlib
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.service.units import find_executable, systemd_quote

UNIT = Path(".config/systemd/user/memoryd.service")
PLIST = Path("Library/LaunchAgents/dev.memoryd.agent.plist")

# A stand-in for systemctl/launchctl: records its arguments, answers from a small table.
FAKE = """#!/bin/sh
printf '%s\\n' "$*" >> "{log}"
case "$*" in
{cases}
"--user is-active"*) echo active;;
esac
exit 0
"""


class FakeTool:
    """A fake command on PATH that records each call's arguments."""

    def __init__(self, bin_dir: Path, name: str, cases: str = "") -> None:
        self.log = bin_dir / f"{name}.calls"
        self.path = bin_dir / name
        self.path.write_text(FAKE.format(log=self.log, cases=cases))
        self.path.chmod(0o755)

    @property
    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only this folder: no real systemctl, launchctl or memoryd is found."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def expected_command() -> list[str]:
    # Nothing named memoryd on PATH: this interpreter's own script, else `python -m daemon`.
    return find_executable(sys.argv[0], lambda _name: None, sys.executable)


def expected_exec_start() -> str:
    return " ".join(systemd_quote(a, command=i > 0) for i, a in enumerate(expected_command())) + " run"


def test_install_dry_run_prints_and_touches_nothing(home, bin_dir: Path) -> None:
    systemctl = FakeTool(bin_dir, "systemctl")
    result = invoke("service", "--platform", "linux", "install", "--dry-run")
    assert result.exit_code == 0, result.output
    unit_file = home.root / UNIT
    assert f"Would write {unit_file} (mode 0644)" in result.stdout
    assert f"ExecStart={expected_exec_start()}" in result.stdout
    assert "Environment=" + systemd_quote(f"XDG_STATE_HOME={home.state}") in result.stdout
    assert (
        "  systemctl --user daemon-reload\n  systemctl --user reset-failed memoryd.service\n"
        "  systemctl --user restart memoryd.service\n  systemctl --user enable memoryd.service"
    ) in result.stdout
    assert "Nothing was changed" in result.stdout
    assert not unit_file.exists()
    assert systemctl.calls == ["--user show-environment"]  # the read-only probe only


def test_install_dry_run_notes_a_missing_systemctl(home, bin_dir: Path) -> None:
    result = invoke("service", "--platform", "linux", "install", "--dry-run")
    assert result.exit_code == 0
    assert "a real install would stop here" in result.stdout and "systemctl was not found" in result.stdout


def test_install_writes_the_unit_and_enables_it(home, bin_dir: Path) -> None:
    systemctl = FakeTool(bin_dir, "systemctl")
    result = invoke("service", "--platform", "linux", "install")
    assert result.exit_code == 0, result.output
    unit_file = home.root / UNIT
    assert unit_file.stat().st_mode & 0o777 == 0o644
    text = unit_file.read_text()
    assert f"ExecStart={expected_exec_start()}\n" in text
    assert f"EnvironmentFile=-{home.config}/memoryd/service.env" in text
    # Started (and seen active) before it is enabled: a unit that cannot start stays off.
    steps = [
        "--user show-environment",
        "--user daemon-reload",
        "--user reset-failed memoryd.service",
        "--user restart memoryd.service",
        "--user is-active memoryd.service",
        "--user enable memoryd.service",
    ]
    assert systemctl.calls == steps
    assert "loginctl enable-linger" in result.stdout

    # Installing again (say, after an upgrade) restarts the running daemon.
    again = invoke("service", "--platform", "linux", "install")
    assert again.exit_code == 0, again.output
    assert systemctl.calls[len(steps):] == steps


def test_install_carries_the_config_option(home, bin_dir: Path, tmp_path: Path) -> None:
    FakeTool(bin_dir, "systemctl")
    config = tmp_path / "custom.toml"
    config.write_text("")
    result = invoke("--config", str(config), "service", "--platform", "linux", "install")
    assert result.exit_code == 0, result.output
    assert f"Environment=MEMORYD_CONFIG={config}" in (home.root / UNIT).read_text()


def test_uninstall_stops_disables_and_removes(home, bin_dir: Path) -> None:
    systemctl = FakeTool(bin_dir, "systemctl")
    assert invoke("service", "--platform", "linux", "install").exit_code == 0
    dry = invoke("service", "--platform", "linux", "uninstall", "--dry-run")
    assert dry.exit_code == 0 and "Would remove" in dry.stdout
    assert (home.root / UNIT).exists()
    before = len(systemctl.calls)
    result = invoke("service", "--platform", "linux", "uninstall")
    assert result.exit_code == 0, result.output
    assert not (home.root / UNIT).exists()
    assert systemctl.calls[before:] == [
        "--user show-environment",
        "--user stop memoryd.service",
        "--user disable memoryd.service",
        "--user daemon-reload",
    ]


def test_uninstall_when_not_installed_says_so(home, bin_dir: Path) -> None:
    result = invoke("service", "--platform", "linux", "uninstall")
    assert result.exit_code == 0 and "not installed" in result.stdout


def test_no_user_bus_exits_1_with_what_to_do(home, bin_dir: Path) -> None:
    FakeTool(
        bin_dir,
        "systemctl",
        '"--user show-environment") echo "Failed to connect to bus: No medium found" >&2; exit 1;;',
    )
    result = invoke("service", "--platform", "linux", "install")
    assert result.exit_code == 1
    assert "No medium found" in result.stderr and "memoryd run" in result.stderr
    assert not (home.root / UNIT).exists(), "nothing is written when the manager is unreachable"


def test_missing_systemctl_exits_1_with_what_to_do(home, bin_dir: Path) -> None:
    result = invoke("service", "--platform", "linux", "install")
    assert result.exit_code == 1
    assert "systemctl was not found" in result.stderr and "your own supervisor" in result.stderr


def test_a_unit_that_cannot_start_is_left_stopped_and_disabled(home, bin_dir: Path) -> None:
    # What systemd 252 did with the unit before PrivateUsers=yes.
    show = "Result=exit-code\\nExecMainCode=1\\nExecMainStatus=218\\nActiveState=activating\\nSubState=auto-restart\\n"
    systemctl = FakeTool(
        bin_dir,
        "systemctl",
        '"--user restart memoryd.service") echo "Job for memoryd.service failed because the control process '
        'exited with error code." >&2; exit 1;;\n'
        f'"--user show memoryd.service"*) printf "{show}";;\n'
        '"--user enable"*) echo "Created symlink /x -> /y." >&2;;',
    )
    result = invoke("service", "--platform", "linux", "install")
    assert result.exit_code == 1
    error = [line for line in result.stderr.splitlines() if line.startswith("memoryd: ") and "warning" not in line]
    assert len(error) == 1, result.stderr
    assert "did not start (result: exit-code, status=218" in error[0]
    assert "stopped and disabled" in error[0] and "docs/service.md" in error[0]
    assert "Created symlink" not in result.output and "Job for" not in result.output
    assert "--user enable memoryd.service" not in systemctl.calls
    assert systemctl.calls[-3:] == ["--user stop memoryd.service", "--user disable memoryd.service", "--user daemon-reload"]


def test_a_unit_that_dies_after_starting_is_not_enabled(home, bin_dir: Path) -> None:
    systemctl = FakeTool(
        bin_dir,
        "systemctl",
        '"--user is-active"*) echo failed; exit 3;;\n'
        '"--user show memoryd.service"*) printf "Result=exit-code\\nExecMainCode=1\\nExecMainStatus=2\\n";;',
    )
    result = invoke("service", "--platform", "linux", "install")
    assert result.exit_code == 1
    assert "status=2" in result.stderr and "memoryd config check" in result.stderr
    assert "--user enable memoryd.service" not in systemctl.calls


def test_install_warns_when_the_unit_cannot_see_memoryd(home, bin_dir: Path) -> None:
    FakeTool(bin_dir, "systemctl")
    result = invoke("service", "--platform", "linux", "install", "--dry-run")
    # The test home is under /tmp (pytest's tmp_path), as a state folder there would be.
    assert "cannot see XDG_STATE_HOME" in result.stderr and "PrivateTmp=yes" in result.stderr


def test_status_shows_unit_state_file_and_daemon(home, bin_dir: Path) -> None:
    show = (
        "LoadState=loaded\\nActiveState=active\\nSubState=running\\nUnitFileState=enabled\\n"
        "MainPID=4242\\nStatusText=idle, 3 notes today\\n"
    )
    systemctl = FakeTool(bin_dir, "systemctl", f'"--user show memoryd.service"*) printf "{show}";;')
    (home.root / UNIT).parent.mkdir(parents=True)
    (home.root / UNIT).write_text("[Service]\n")
    result = invoke("service", "--platform", "linux", "status")
    assert result.exit_code == 0, result.output
    assert f"{home.root / UNIT} (present)" in result.stdout
    assert "active (running), enabled" in result.stdout
    assert "4242" in result.stdout and "idle, 3 notes today" in result.stdout
    assert "not running (never started" in result.stdout

    # A failed unit, or one restarting after a crash, is not a service doing its job.
    healthy = systemctl.path.read_text()
    for state in ("ActiveState=failed\\nSubState=failed", "ActiveState=activating\\nSubState=auto-restart"):
        systemctl.path.write_text(healthy.replace("ActiveState=active\\nSubState=running", state))
        failed = invoke("service", "--platform", "linux", "status")
        assert failed.exit_code == 1, failed.output


def test_status_reports_a_running_daemon_from_the_lock(home, bin_dir: Path) -> None:
    from daemon.service.lock import InstanceLock

    FakeTool(bin_dir, "systemctl", '"--user show memoryd.service"*) echo "LoadState=not-found";;')
    with InstanceLock(home.state_dir / "memoryd.lock"):
        result = invoke("service", "--platform", "linux", "status")
    assert result.exit_code == 1, "no unit: exit 1, even with a daemon running by hand"
    assert f"running (pid {os.getpid()}, up " in result.stdout
    assert "not loaded by systemd" in result.stdout


def test_status_without_a_bus_exits_1(home, bin_dir: Path) -> None:
    result = invoke("service", "--platform", "linux", "status")
    assert result.exit_code == 1
    assert "unit file:" in result.stdout and "service:   unknown" in result.stdout
    assert "systemctl was not found" in result.stderr


def test_launchd_install_status_uninstall(home, bin_dir: Path) -> None:
    launchctl = FakeTool(
        bin_dir,
        "launchctl",
        '"bootout "*) echo "Boot-out failed: 3: No such process" >&2; exit 3;;\n'
        '"print "*) printf "gui/0/dev.memoryd.agent = {\\n\\tstate = running\\n\\tpid = 777\\n\\tlast exit code = (never exited)\\n}\\n";;',
    )
    uid = os.getuid()
    result = invoke("service", "--platform", "darwin", "install")
    assert result.exit_code == 0, result.output
    plist_file = home.root / PLIST
    plist = plistlib.loads(plist_file.read_bytes())
    assert plist["ProgramArguments"] == [*expected_command(), "run"]
    assert plist["StandardErrorPath"] == str(home.state_dir / "launchd.log")
    assert plist["EnvironmentVariables"]["XDG_STATE_HOME"] == str(home.state)
    assert home.state_dir.is_dir(), "launchd will not create the log folder itself"
    assert plist_file.stat().st_mode & 0o777 == 0o644
    assert launchctl.calls == [
        f"bootout gui/{uid}/dev.memoryd.agent",
        f"enable gui/{uid}/dev.memoryd.agent",
        f"bootstrap gui/{uid} {plist_file}",
    ]
    assert "ignored: Boot-out failed" in result.stdout

    status = invoke("service", "--platform", "darwin", "status")
    assert status.exit_code == 0, status.output
    assert "loaded, running" in status.stdout and "777" in status.stdout

    gone = invoke("service", "--platform", "darwin", "uninstall")
    assert gone.exit_code == 0, gone.output
    assert not plist_file.exists()


def test_launchd_dry_run_on_any_machine(home, bin_dir: Path) -> None:
    result = invoke("service", "--platform", "darwin", "install", "--dry-run")
    assert result.exit_code == 0
    assert "<key>ProgramArguments</key>" in result.stdout
    assert "launchctl bootstrap gui/" in result.stdout
    assert not (home.root / PLIST).exists() and not home.state_dir.exists()


def test_unsupported_platform_exits_1(home, bin_dir: Path) -> None:
    result = invoke("service", "--platform", "win32", "install")
    assert result.exit_code == 1 and "own supervisor" in result.stderr


@pytest.mark.parametrize("launchd", [False, True])
def test_a_bad_configuration_is_not_restarted_by_launchd(home, launchd: bool) -> None:
    """launchd restarts any non-zero exit; under it, exit 2 (nothing will change) becomes 0."""
    import subprocess

    (home.config / "memoryd").mkdir()
    (home.config / "memoryd" / "config.toml").write_text("[no_such_section]\nx = 1\n")
    env = dict(os.environ)
    env.pop("XPC_SERVICE_NAME", None)
    if launchd:
        env["XPC_SERVICE_NAME"] = "dev.memoryd.agent"
    done = subprocess.run([sys.executable, "-m", "daemon", "run"], env=env, capture_output=True, text=True, timeout=60)
    assert "configuration error" in done.stderr
    if launchd:
        assert done.returncode == 0 and "not restarting under launchd" in done.stderr
    else:
        assert done.returncode == 2
