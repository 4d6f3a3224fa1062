"""Render the systemd unit and the launchd plist for this machine, and plan their install.

Pure functions: the templates come from package data (daemon/service/templates/),
everything machine-specific is an argument. `memoryd service` does the I/O.
The files in the repository's `systemd/` and `launchd/` folders are these templates
rendered with EXAMPLE_* inputs; a test fails when they drift
(`python -m daemon.service.units` rewrites them).
"""

from __future__ import annotations

import os
import plistlib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

SYSTEMD_UNIT = "memoryd.service"
LAUNCHD_LABEL = "dev.memoryd.agent"
LAUNCHD_PLIST = f"{LAUNCHD_LABEL}.plist"
UNIT_FILE_MODE = 0o644

# Variables that decide where memoryd reads and writes. The service manager starts
# memoryd with its own environment, so values set in the installing shell are carried
# into the unit; secrets are not (the unit file is world-readable).
CARRIED_ENV = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "OPENCODE_DB", "MEMORYD_CONFIG")
# launchd agents start with PATH=/usr/bin:/bin:/usr/sbin:/sbin; add the usual tool folders.
LAUNCHD_PATH = ("/usr/local/bin", "/opt/homebrew/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")

Manager = Literal["systemd", "launchd"]

_PLACEHOLDER = re.compile(r"@[A-Z_]+@")


class UnsupportedPlatform(Exception):
    """No service manager memoryd knows how to use on this platform."""


def template_text(name: str) -> str:
    """Return a template shipped in daemon/service/templates/."""
    return resources.files("daemon.service").joinpath("templates", name).read_text(encoding="utf-8")


def _fill(template: str, values: Mapping[str, str]) -> str:
    """Replace every @KEY@ placeholder; an empty multi-line value removes its line."""
    for key, value in values.items():
        token = f"@{key}@"
        if token not in template:
            raise ValueError(f"template has no placeholder {token}")
        if value == "":
            template = re.sub(rf"^{re.escape(token)}\n", "", template, flags=re.MULTILINE)
        template = template.replace(token, value)
    left = _PLACEHOLDER.findall(template)
    if left:
        raise ValueError(f"template placeholders left unfilled: {sorted(set(left))}")
    return template


def _check_value(value: str) -> str:
    if "\n" in value or "\0" in value:
        raise ValueError(f"value {value!r} contains a newline or NUL; a unit file cannot hold it")
    return value


def systemd_quote(arg: str, *, command: bool = False) -> str:
    """Quote one word for a unit file: % specifiers escaped, $ too in command arguments."""
    text = _check_value(arg).replace("%", "%%")
    if command:
        # systemd expands $VAR in Exec lines; $$ is a literal dollar.
        text = text.replace("$", "$$")
    if text and not re.search(r"[\s\"'\\;]", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_systemd(executable: Sequence[str], env: Mapping[str, str], *, env_file: Path | None = None) -> str:
    """Return the user unit that starts `executable run` with `env` set."""
    if not executable or not Path(executable[0]).is_absolute():
        raise ValueError(f"the executable must be an absolute path, got {list(executable)!r}")
    # The program path itself is never variable-expanded, only the arguments after it.
    exec_start = " ".join(systemd_quote(arg, command=i > 0) for i, arg in enumerate(executable))
    environment = "\n".join(
        "Environment=" + systemd_quote(f"{key}={_check_value(value)}") for key, value in sorted(env.items())
    )
    # EnvironmentFile= takes the rest of the line as the path: no quoting, only % escaped.
    env_path = "%h/.config/memoryd/service.env" if env_file is None else _check_value(str(env_file)).replace("%", "%%")
    return _fill(
        template_text(SYSTEMD_UNIT),
        {"EXEC_START": exec_start, "ENVIRONMENT": environment, "ENV_FILE": env_path},
    )


def launchd_path(executable: Sequence[str]) -> str:
    """Return PATH for the agent: the executable's folder first, then the usual ones."""
    folders = [str(Path(executable[0]).parent), *LAUNCHD_PATH]
    return ":".join(dict.fromkeys(folders))


def render_launchd(
    executable: Sequence[str], env: Mapping[str, str], log_dir: Path, *, label: str = LAUNCHD_LABEL
) -> str:
    """Return the agent plist that runs `executable run`, logging into `log_dir`."""
    if not executable or not Path(executable[0]).is_absolute():
        raise ValueError(f"the executable must be an absolute path, got {list(executable)!r}")
    plist: dict[str, Any] = plistlib.loads(template_text(LAUNCHD_PLIST).encode("utf-8"))
    plist["Label"] = label
    args = plist["ProgramArguments"]
    at = args.index("@EXECUTABLE@")
    plist["ProgramArguments"] = [*args[:at], *executable, *args[at + 1 :]]
    for key in ("StandardOutPath", "StandardErrorPath"):
        plist[key] = plist[key].replace("@LOG_DIR@", str(log_dir))
    variables = dict(plist["EnvironmentVariables"])
    variables["PATH"] = launchd_path(executable)
    variables.update(env)
    plist["EnvironmentVariables"] = variables
    text = plistlib.dumps(plist, sort_keys=False).decode("utf-8")
    left = _PLACEHOLDER.findall(text)
    if left:
        raise ValueError(f"plist placeholders left unfilled: {sorted(set(left))}")
    return text


def service_manager(platform: str) -> Manager:
    """Return which service manager runs memoryd on `platform` (a sys.platform value)."""
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    raise UnsupportedPlatform(
        f"installing a service is supported on Linux (systemd) and macOS (launchd), "
        f"not on {platform!r}. Run `memoryd run` under your own supervisor instead."
    )


def unit_path(manager: Manager, home: Path) -> Path:
    """Return where the unit file lives for `manager`."""
    if manager == "systemd":
        # Always ~/.config: the user manager does not see an XDG_CONFIG_HOME set in a shell.
        return home / ".config" / "systemd" / "user" / SYSTEMD_UNIT
    return home / "Library" / "LaunchAgents" / LAUNCHD_PLIST


def find_executable(argv0: str, which: Callable[[str], str | None], python: str) -> list[str]:
    """Return the command that starts memoryd: the running script, the script of this
    interpreter's install, the one on PATH, else `python -m daemon`."""
    # Not resolved through symlinks: pipx links ~/.local/bin/memoryd into a venv that
    # an upgrade may recreate; the link stays valid, a resolved path might not.
    running = os.path.abspath(argv0) if Path(argv0).name == "memoryd" and os.sep in argv0 else None
    # Started as `python -m daemon`: this interpreter's own script beats another install's.
    beside = os.path.join(os.path.dirname(os.path.abspath(python)), "memoryd")
    for candidate in (running, beside):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return [candidate]
    found = which("memoryd")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(python), "-m", "daemon"]


def service_environment(environ: Mapping[str, str], config_file: Path | None = None) -> dict[str, str]:
    """Return the variables the service needs to see what this shell sees."""
    env = {key: environ[key] for key in CARRIED_ENV if environ.get(key)}
    if config_file is not None:
        env["MEMORYD_CONFIG"] = os.path.abspath(config_file)
    return env


@dataclass(frozen=True)
class Step:
    """One command of a plan; `check=False` steps may fail (e.g. stopping what is not running)."""

    argv: tuple[str, ...]
    check: bool = True
    starts: bool = False  # it starts the service: its failure is the service's, explained as such

    def __str__(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class ServicePlan:
    """What install or uninstall will do: the unit file to write or remove, then the steps."""

    manager: Manager
    unit_path: Path
    content: str | None  # None: the file is removed
    steps: tuple[Step, ...] = field(default_factory=tuple)


def _systemctl(*args: str, check: bool = True, starts: bool = False) -> Step:
    return Step(("systemctl", "--user", *args), check, starts)


def plan_install(
    manager: Manager,
    home: Path,
    uid: int,
    content: str,
    previous: str | None,
) -> ServicePlan:
    """Plan writing `content` as the unit and (re)starting it; `previous` is the old file."""
    path = unit_path(manager, home)
    if manager == "systemd":
        return ServicePlan(
            manager,
            path,
            content,
            (
                _systemctl("daemon-reload"),
                # A unit that hit its start limit refuses `restart` until this clears it.
                _systemctl("reset-failed", SYSTEMD_UNIT, check=False),
                # `restart` starts a stopped unit and replaces a running daemon (a changed
                # unit, an upgrade); for Type=notify it returns once READY=1 arrived or the
                # start failed. Enabled only after that: a unit that cannot start must not
                # fail again at every login.
                _systemctl("restart", SYSTEMD_UNIT, starts=True),
                _systemctl("enable", SYSTEMD_UNIT),
            ),
        )
    target = f"gui/{uid}/{LAUNCHD_LABEL}"
    return ServicePlan(
        manager,
        path,
        content,
        (
            # Unload whatever is loaded under the label (fails harmlessly when nothing is).
            Step(("launchctl", "bootout", target), check=False),
            # Clears an earlier `launchctl disable`, which would make bootstrap fail.
            Step(("launchctl", "enable", target)),
            Step(("launchctl", "bootstrap", f"gui/{uid}", str(path))),
        ),
    )


# What `systemctl show` is asked after a start failed, and how that is told.
FAILURE_PROPERTIES = ("ActiveState", "SubState", "Result", "ExecMainCode", "ExecMainStatus", "NRestarts")
_CLD_EXITED = "1"
# Exit statuses systemd itself uses when it cannot set up the process (200-243).
_SANDBOX_STEPS = {"CAPABILITIES", "NAMESPACE", "NO_NEW_PRIVILEGES", "SECCOMP", "ADDRESS_FAMILIES",
                  "USER", "GROUP", "PERSONALITY", "KEYRING"}
HIDDEN_BY_PRIVATE_TMP = ("/tmp", "/var/tmp")


def exit_status_text(props: Mapping[str, str], name: str | None) -> str:
    """Return `status=218/CAPABILITIES` (or `signal=9`) from the unit's ExecMain* values."""
    code = props.get("ExecMainCode", "")
    status = props.get("ExecMainStatus", "")
    if code and code != _CLD_EXITED and status not in ("", "0"):
        return f"signal={status}"
    return f"status={status}/{name}" if name else f"status={status or '?'}"


def start_failure_hint(props: Mapping[str, str], name: str | None) -> str:
    """Return what to do about a start that failed the way `props` says."""
    result = props.get("Result", "")
    status = props.get("ExecMainStatus", "")
    if name == "EXEC":
        return ("systemd cannot run memoryd's executable: it must exist, and not under /tmp or "
                "/var/tmp, which the unit's PrivateTmp= hides; reinstall memoryd elsewhere")
    if name in _SANDBOX_STEPS or (status.isdigit() and 200 <= int(status) <= 243):
        return ("this systemd refuses a sandbox option; switch it off in a drop-in as "
                "docs/service.md says (\"The unit does not start\")")
    if result == "timeout":
        return "memoryd did not report ready in time; `memoryd logs` says what it was doing"
    if status == "2":
        return ("memoryd refused to start (a configuration error, or another memoryd running): "
                "`memoryd config check`, `memoryd service status`")
    return "`memoryd logs --level error` says why"


def hidden_paths(paths: Sequence[str | Path]) -> list[str]:
    """Return those of `paths` the unit cannot see: under /tmp or /var/tmp (PrivateTmp=yes)."""
    hidden = []
    for path in paths:
        for form in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            if any(form == top or form.startswith(top + "/") for top in HIDDEN_BY_PRIVATE_TMP):
                hidden.append(str(path))
                break
    return hidden


def plan_uninstall(manager: Manager, home: Path, uid: int) -> ServicePlan:
    """Plan stopping, disabling and removing the unit."""
    path = unit_path(manager, home)
    if manager == "systemd":
        return ServicePlan(
            manager,
            path,
            None,
            # stop, then disable: `disable --now` is refused by systemctl 257 where it cannot
            # tell that systemd runs (no /run/systemd/system), though the user manager does.
            (_systemctl("stop", SYSTEMD_UNIT, check=False), _systemctl("disable", SYSTEMD_UNIT),
             _systemctl("daemon-reload")),
        )
    return ServicePlan(manager, path, None, (Step(("launchctl", "bootout", f"gui/{uid}/{LAUNCHD_LABEL}"), check=False),))


# Inputs for the example files committed at the repository's top level.
EXAMPLE_EXECUTABLE = ("/home/you/.local/bin/memoryd",)
EXAMPLE_ENV_FILE = Path("/home/you/.config/memoryd/service.env")
EXAMPLE_MAC_EXECUTABLE = ("/Users/you/.local/bin/memoryd",)
EXAMPLE_LOG_DIR = Path("/Users/you/.local/state/memoryd")


def render_examples() -> dict[str, str]:
    """Return the example files as {repo-relative path: text}."""
    return {
        f"systemd/{SYSTEMD_UNIT}": render_systemd(EXAMPLE_EXECUTABLE, {}, env_file=EXAMPLE_ENV_FILE),
        f"launchd/{LAUNCHD_PLIST}": render_launchd(EXAMPLE_MAC_EXECUTABLE, {}, EXAMPLE_LOG_DIR),
    }


def write_examples(repo_root: Path) -> list[Path]:
    """Rewrite the example files under `repo_root`; return their paths."""
    written = []
    for relative, text in render_examples().items():
        path = repo_root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for written_path in write_examples(root):
        print(f"wrote {written_path}")
