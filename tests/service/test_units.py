"""Rendered unit files: shape checks, systemd-analyze verify, plist round trip, no drift."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.service import units
from daemon.service.units import (
    LAUNCHD_LABEL,
    Step,
    UnsupportedPlatform,
    exit_status_text,
    find_executable,
    hidden_paths,
    plan_install,
    plan_uninstall,
    render_examples,
    render_launchd,
    render_systemd,
    start_failure_hint,
    service_environment,
    service_manager,
    systemd_quote,
    unit_path,
)

REPO = Path(__file__).resolve().parents[2]
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def unit_sections(text: str) -> dict[str, list[tuple[str, str]]]:
    """Parse a unit file into {section: [(key, value)…]}, keeping repeated keys."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = []
            continue
        key, sep, value = line.partition("=")
        assert sep and current, f"not a unit line: {line!r}"
        sections[current].append((key, value))
    return sections


def values(sections: dict[str, list[tuple[str, str]]], section: str, key: str) -> list[str]:
    return [v for k, v in sections[section] if k == key]


def test_systemd_unit_has_the_required_shape() -> None:
    text = render_systemd(["/opt/memoryd/bin/memoryd"], {"XDG_STATE_HOME": "/home/u/state"})
    unit = unit_sections(text)
    assert set(unit) == {"Unit", "Service", "Install"}
    one = {key: values(unit, "Service", key) for key, _ in unit["Service"]}
    assert one["Type"] == ["notify"]
    assert one["ExecStart"] == ["/opt/memoryd/bin/memoryd run"]
    assert one["ExecReload"] == ["kill -HUP $MAINPID"]
    assert one["Restart"] == ["on-failure"]
    assert one["WatchdogSec"] == ["60s"]
    assert one["Environment"] == ["XDG_STATE_HOME=/home/u/state"]
    assert one["EnvironmentFile"] == ["-%h/.config/memoryd/service.env"]
    # PrivateUsers: before systemd 253 the mount-namespace options fail without it (218/CAPABILITIES).
    sandbox = [("PrivateUsers", "yes"), ("NoNewPrivileges", "yes"), ("PrivateTmp", "yes"),
               ("ProtectSystem", "strict"), ("ReadWritePaths", "%h")]
    for key, value in sandbox:
        assert one[key] == [value]
    assert "ProtectHome" not in one, "ProtectHome would hide ~/.local/share/opencode and the trees"
    assert values(unit, "Install", "WantedBy") == ["default.target"]
    assert not re.search(r"@[A-Z_]+@", text), "no placeholder left"


def test_systemd_unit_without_extra_environment_has_no_environment_line() -> None:
    unit = unit_sections(render_systemd(["/usr/bin/memoryd"], {}))
    assert values(unit, "Service", "Environment") == []


@pytest.mark.parametrize(
    ("arg", "command", "quoted"),
    [
        ("/usr/bin/memoryd", False, "/usr/bin/memoryd"),
        ("/home/a b/memoryd", False, '"/home/a b/memoryd"'),
        ("50%", False, "50%%"),
        ("$HOME", True, "$$HOME"),
        ("$HOME", False, "$HOME"),
        ('say "hi"', False, '"say \\"hi\\""'),
        ("back\\slash", False, '"back\\\\slash"'),
        ("", False, '""'),
        (";", True, '";"'),
    ],
)
def test_systemd_quote(arg: str, command: bool, quoted: str) -> None:
    assert systemd_quote(arg, command=command) == quoted


def test_values_that_cannot_live_in_a_unit_are_refused() -> None:
    with pytest.raises(ValueError, match="newline"):
        render_systemd(["/usr/bin/memoryd"], {"XDG_STATE_HOME": "a\nExecStartPre=/bin/evil"})
    with pytest.raises(ValueError, match="absolute"):
        render_systemd(["memoryd"], {})
    with pytest.raises(ValueError, match="absolute"):
        render_launchd(["memoryd"], {}, Path("/tmp"))


def analyze(unit: Path, runtime: Path) -> subprocess.CompletedProcess[str]:
    # --user needs a runtime folder; a private one lets verify run without a user manager.
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SYSTEMD_LOG_COLOR": "0"}
    return subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--user", str(unit)], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_accepts_the_rendered_unit(tmp_path: Path) -> None:
    # A real executable in a folder with a space and a %, arguments with $ and quotes,
    # and environment values that need escaping: the worst an install can meet.
    odd = tmp_path / "my tools %d"
    odd.mkdir()
    exe = odd / "memoryd"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    unit = tmp_path / "memoryd.service"
    unit.write_text(
        render_systemd(
            [str(exe), "--tag", 'a "$b"'],
            {"XDG_STATE_HOME": str(tmp_path / "state 100%"), "OPENCODE_DB": "/x/$y.db"},
            env_file=tmp_path / "service.env",
        )
    )
    result = analyze(unit, tmp_path / "runtime")
    assert result.returncode == 0, result.stderr
    # verify exits 0 on mere warnings (unknown keys, bad values), so any output fails too.
    assert result.stderr.strip() == "" and result.stdout.strip() == "", result.stderr + result.stdout


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_would_catch_a_broken_unit(tmp_path: Path) -> None:
    # The control: the check above is only worth something if verify really parses.
    text = render_systemd([sys.executable], {}).replace("ProtectSystem=strict", "ProtectSystem=stricter")
    unit = tmp_path / "memoryd.service"
    unit.write_text(text + "\n[Service]\nBogusKey=1\n")
    result = analyze(unit, tmp_path / "runtime")
    assert "BogusKey" in result.stderr and "stricter" in result.stderr


def test_launchd_plist_round_trips_with_the_required_keys() -> None:
    text = render_launchd(
        ["/Users/u/.local/bin/memoryd"], {"XDG_CONFIG_HOME": "/Users/u/cfg"}, Path("/Users/u/.local/state/memoryd")
    )
    plist = plistlib.loads(text.encode())
    assert plistlib.loads(plistlib.dumps(plist)) == plist
    assert plist["Label"] == LAUNCHD_LABEL
    assert plist["ProgramArguments"] == ["/Users/u/.local/bin/memoryd", "run"]
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert isinstance(plist["ThrottleInterval"], int) and plist["ThrottleInterval"] >= 10
    assert plist["ProcessType"] == "Background"
    assert plist["StandardOutPath"] == plist["StandardErrorPath"] == "/Users/u/.local/state/memoryd/launchd.log"
    env = plist["EnvironmentVariables"]
    assert env["PATH"].split(":")[0] == "/Users/u/.local/bin"
    assert "/usr/bin" in env["PATH"].split(":")
    assert env["XDG_CONFIG_HOME"] == "/Users/u/cfg"
    assert "@" not in text


def test_launchd_plist_with_python_module_fallback() -> None:
    plist = plistlib.loads(render_launchd(["/usr/bin/python3", "-m", "daemon"], {}, Path("/tmp/s")).encode())
    assert plist["ProgramArguments"] == ["/usr/bin/python3", "-m", "daemon", "run"]


def test_committed_examples_match_the_templates() -> None:
    for relative, text in render_examples().items():
        committed = REPO / relative
        assert committed.exists(), f"{relative} missing: run `python -m daemon.service.units {REPO}`"
        assert committed.read_text(encoding="utf-8") == text, (
            f"{relative} drifted from daemon/service/templates/: "
            f"run `python -m daemon.service.units {REPO}` and commit the result"
        )


def test_templates_ship_as_package_data() -> None:
    assert "Type=notify" in units.template_text(units.SYSTEMD_UNIT)
    assert "@EXECUTABLE@" in units.template_text(units.LAUNCHD_PLIST)


def test_fill_refuses_unknown_or_leftover_placeholders() -> None:
    with pytest.raises(ValueError, match="no placeholder"):
        units._fill("x", {"NOPE": "y"})
    with pytest.raises(ValueError, match="unfilled"):
        units._fill("@A@ @B@", {"A": "a"})


@pytest.mark.parametrize(("platform", "manager"), [("linux", "systemd"), ("darwin", "launchd")])
def test_service_manager_by_platform(platform: str, manager: str) -> None:
    assert service_manager(platform) == manager


def test_unsupported_platform_says_what_to_do() -> None:
    with pytest.raises(UnsupportedPlatform, match="memoryd run"):
        service_manager("win32")


def test_unit_paths() -> None:
    home = Path("/home/u")
    assert unit_path("systemd", home) == home / ".config/systemd/user/memoryd.service"
    assert unit_path("launchd", home) == home / "Library/LaunchAgents/dev.memoryd.agent.plist"


def test_find_executable_prefers_the_running_script(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "memoryd"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert find_executable(str(script), lambda _: "/elsewhere/memoryd", "/usr/bin/python3") == [str(script)]
    # Started as `python -m daemon` (argv[0] is __main__.py): the memoryd on PATH, else the module.
    assert find_executable("/x/daemon/__main__.py", lambda _: "/usr/local/bin/memoryd", "/py") == ["/usr/local/bin/memoryd"]
    assert find_executable("/x/daemon/__main__.py", lambda _: None, "/venv/bin/python") == [
        "/venv/bin/python",
        "-m",
        "daemon",
    ]
    # `python -m daemon` from a venv: that venv's own script, not another install's on PATH.
    python = script.parent / "python"
    python.write_text("")
    assert find_executable("/x/daemon/__main__.py", lambda _: "/usr/local/bin/memoryd", str(python)) == [str(script)]
    # A script name that is not executable is not trusted.
    script.chmod(0o644)
    assert find_executable(str(script), lambda _: None, "/py") == ["/py", "-m", "daemon"]


def test_service_environment_carries_locations_not_secrets(tmp_path: Path) -> None:
    environ = {
        "XDG_STATE_HOME": "/s",
        "XDG_DATA_HOME": "",
        "OPENCODE_DB": "/db",
        "OPENAI_API_KEY": "sk-secret",
        "MEMORYD_LLM__MODEL": "m",
        "PATH": "/bin",
    }
    assert service_environment(environ) == {"XDG_STATE_HOME": "/s", "OPENCODE_DB": "/db"}
    config = tmp_path / "c.toml"
    assert service_environment({}, config)["MEMORYD_CONFIG"] == str(config)


def test_plan_install_systemd_starts_before_it_enables() -> None:
    for previous in (None, "old unit"):
        plan = plan_install("systemd", Path("/h"), 1000, "unit", previous)
        assert plan.unit_path == Path("/h/.config/systemd/user/memoryd.service")
        assert [str(s) for s in plan.steps] == [
            "systemctl --user daemon-reload",
            "systemctl --user reset-failed memoryd.service",
            "systemctl --user restart memoryd.service",
            "systemctl --user enable memoryd.service",
        ]
        assert [s.starts for s in plan.steps] == [False, False, True, False]
        assert not plan.steps[1].check, "reset-failed of a unit never loaded fails harmlessly"


def test_start_failure_is_told_by_result_and_status() -> None:
    props = {"Result": "exit-code", "ExecMainCode": "1", "ExecMainStatus": "218"}
    assert exit_status_text(props, "CAPABILITIES") == "status=218/CAPABILITIES"
    assert exit_status_text(props, None) == "status=218"
    assert "sandbox option" in start_failure_hint(props, "CAPABILITIES")
    assert "PrivateTmp" in start_failure_hint({**props, "ExecMainStatus": "203"}, "EXEC")
    killed = {"Result": "signal", "ExecMainCode": "2", "ExecMainStatus": "9"}
    assert exit_status_text(killed, None) == "signal=9"
    assert "config check" in start_failure_hint({**props, "ExecMainStatus": "2"}, None)
    assert "ready in time" in start_failure_hint({"Result": "timeout"}, None)


def test_hidden_paths_are_those_under_tmp(tmp_path: Path) -> None:
    link = tmp_path / "link"
    assert hidden_paths(["/tmp/x/memoryd", "/var/tmp", "/home/u/.local/bin/memoryd", "/tmpfoo"]) == [
        "/tmp/x/memoryd",
        "/var/tmp",
    ]
    home = Path("/home") if Path("/home").is_dir() else Path("/")
    link.symlink_to(home)  # a path outside /tmp whose name is under it is still hidden
    assert hidden_paths([str(link)]) == [str(link)]


def test_plan_install_and_uninstall_launchd() -> None:
    plan = plan_install("launchd", Path("/Users/u"), 501, "plist", None)
    assert plan.steps == (
        Step(("launchctl", "bootout", "gui/501/dev.memoryd.agent"), check=False),
        Step(("launchctl", "enable", "gui/501/dev.memoryd.agent")),
        Step(("launchctl", "bootstrap", "gui/501", "/Users/u/Library/LaunchAgents/dev.memoryd.agent.plist")),
    )
    gone = plan_uninstall("launchd", Path("/Users/u"), 501)
    assert gone.content is None and [str(s) for s in gone.steps] == ["launchctl bootout gui/501/dev.memoryd.agent"]


def test_plan_uninstall_systemd() -> None:
    plan = plan_uninstall("systemd", Path("/h"), 1000)
    assert [str(s) for s in plan.steps] == [
        "systemctl --user stop memoryd.service",
        "systemctl --user disable memoryd.service",
        "systemctl --user daemon-reload",
    ]
