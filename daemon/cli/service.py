"""`memoryd service install|uninstall|status`: run memoryd as a systemd or launchd user service.

Rendering and planning are pure (daemon.service.units); this module checks that the
service manager is reachable, writes or removes the unit file, runs the plan's commands
and prints what happened.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from daemon.cli.app import EXIT_FAILED, EXIT_OK, fail
from daemon.service import units

PLATFORM_KEY = "memoryd.service.platform"
# `enable --now` waits for READY=1, which may take a while on a cold start.
COMMAND_TIMEOUT_S = 120
PROBE_TIMEOUT_S = 15

NO_SYSTEMCTL = (
    "systemctl was not found, so there is no systemd here to run memoryd as a service. "
    "Run `memoryd run` under your own supervisor instead (a container entrypoint, "
    "supervisord, runit, a tmux pane…)."
)
NO_USER_BUS = (
    "`systemctl --user` cannot reach your user service manager ({detail}). This happens in "
    "containers, CI, and `su`/`sudo`/ssh sessions without a systemd login session. Log in "
    "normally (or use `machinectl shell $USER@`), check that XDG_RUNTIME_DIR=/run/user/$(id -u) "
    "is set, or run `memoryd run` under your own supervisor instead."
)
NO_LAUNCHCTL = (
    "launchctl was not found, so there is no launchd here to run memoryd as an agent. "
    "Run `memoryd run` under your own supervisor instead."
)


class ManagerUnavailable(Exception):
    """The service manager cannot be used from here; the message says what to do instead."""


def _environ() -> dict[str, str]:
    return dict(os.environ)


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def _run(argv: tuple[str, ...], timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run a service-manager command, capturing its output."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "no output"


def check_manager(manager: units.Manager) -> None:
    """Raise ManagerUnavailable unless the service manager can be driven from this session."""
    if manager == "launchd":
        if shutil.which("launchctl") is None:
            raise ManagerUnavailable(NO_LAUNCHCTL)
        return
    if shutil.which("systemctl") is None:
        raise ManagerUnavailable(NO_SYSTEMCTL)
    try:
        probe = _run(("systemctl", "--user", "show-environment"), timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ManagerUnavailable(NO_USER_BUS.format(detail="no answer")) from None
    if probe.returncode != 0:
        raise ManagerUnavailable(NO_USER_BUS.format(detail=_first_line(probe.stderr or probe.stdout)))


def _manager(ctx: click.Context) -> units.Manager:
    try:
        return units.service_manager(ctx.meta[PLATFORM_KEY])
    except units.UnsupportedPlatform as exc:
        fail(str(exc), EXIT_FAILED)
        raise  # fail() exits; this line only tells type checkers so


def _render(ctx: click.Context, manager: units.Manager) -> str:
    """Return the unit or plist for this machine."""
    from daemon.config import default_config_file

    environ = _environ()
    executable = units.find_executable(sys.argv[0], shutil.which, sys.executable)
    env = units.service_environment(environ, ctx.obj.config_path)
    if manager == "systemd":
        return units.render_systemd(executable, env, env_file=default_config_file(environ).parent / "service.env")
    return units.render_launchd(executable, env, ctx.obj.paths.state_dir)


def _execute(plan: units.ServicePlan) -> None:
    """Run the plan's steps in order; stop at the first required one that fails.

    A step that starts the service and fails leaves it stopped and disabled, and the
    message says why it failed (the unit's result and exit status), not what systemctl
    printed on the way.
    """
    for step in plan.steps:
        click.echo(f"$ {step}")
        try:
            result = _run(step.argv)
        except subprocess.TimeoutExpired:
            if step.starts:
                _start_failed(plan, f"did not become active within {COMMAND_TIMEOUT_S} s")
            fail(f"`{step}` did not finish within {COMMAND_TIMEOUT_S} s. {_diagnose_hint(plan)}", EXIT_FAILED)
        if step.starts and plan.manager == "systemd" and (result.returncode != 0 or not _systemd_active()):
            _start_failed(plan, "did not start")
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip() or f"exit status {result.returncode}"
            if not step.check:
                click.echo(f"  (ignored: {_first_line(detail)})")
                continue
            fail(f"`{step}` failed: {detail}\n{_diagnose_hint(plan)}", EXIT_FAILED)


def _systemd_active() -> bool:
    probe = _run(("systemctl", "--user", "is-active", units.SYSTEMD_UNIT), PROBE_TIMEOUT_S)
    return probe.stdout.strip() == "active"


def _exit_status_name(status: str) -> str | None:
    """`218` → `CAPABILITIES`, from systemd's own table (`systemd-analyze exit-status`).

    Only systemd's own codes (200 and up, a step before memoryd ran); below that the status
    is memoryd's, and the table's generic names (2 = INVALIDARGUMENT) would mislead."""
    if not status.isdigit() or int(status) < 200 or shutil.which("systemd-analyze") is None:
        return None
    try:
        result = _run(("systemd-analyze", "exit-status", status), PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None
    for line in result.stdout.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 2 and fields[1] == status and fields[0] != "-":
            return fields[0]
    return None


def _start_failed(plan: units.ServicePlan, what: str) -> None:
    """Stop and disable a unit that cannot start, say why in one line, exit 1."""
    props = _systemd_properties(units.FAILURE_PROPERTIES)
    name = _exit_status_name(props.get("ExecMainStatus", ""))
    # Stop the restart loop, and do not leave it enabled: it would fail at every login.
    # daemon-reload: the manager caches the unit file's state, `status` would still say enabled.
    for argv in (("stop", units.SYSTEMD_UNIT), ("disable", units.SYSTEMD_UNIT), ("daemon-reload",)):
        _run(("systemctl", "--user", *argv), PROBE_TIMEOUT_S)
    result = props.get("Result") or "unknown"
    fail(
        f"{units.SYSTEMD_UNIT} {what} (result: {result}, {units.exit_status_text(props, name)}); "
        f"it is left stopped and disabled. {_sentence(units.start_failure_hint(props, name))}; "
        f"`journalctl --user -u memoryd -e` has the details, then run `memoryd service install` again.",
        EXIT_FAILED,
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _systemd_properties(names: tuple[str, ...]) -> dict[str, str]:
    result = _run(("systemctl", "--user", "show", units.SYSTEMD_UNIT, f"--property={','.join(names)}"), PROBE_TIMEOUT_S)
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


def _diagnose_hint(plan: units.ServicePlan) -> str:
    if plan.manager == "systemd":
        return (
            "See why with `systemctl --user status memoryd` and `journalctl --user -u memoryd -e`, "
            "or `memoryd logs`."
        )
    return f"See why with `launchctl print gui/{os.getuid()}/{units.LAUNCHD_LABEL}` and `memoryd logs`."


@click.group(epilog="Where the files go and how to troubleshoot: docs/service.md.")
@click.option("--platform", hidden=True, default=sys.platform, help="Pretend to be this sys.platform (tests).")
@click.pass_context
def service(ctx: click.Context, platform: str) -> None:
    """Install, remove or check memoryd as a login service (systemd on Linux, launchd on macOS)."""
    ctx.meta[PLATFORM_KEY] = platform


@service.command()
@click.option("--dry-run", is_flag=True, help="Print the file and the commands; change nothing.")
@click.pass_context
def install(ctx: click.Context, dry_run: bool) -> None:
    """Write the unit for this machine, then enable and start it (again after an upgrade: restart)."""
    from daemon.files import atomic_write_text, ensure_dir

    manager = _manager(ctx)
    content = _render(ctx, manager)
    path = units.unit_path(manager, _home())
    previous = path.read_text(encoding="utf-8") if path.exists() else None
    plan = units.plan_install(manager, _home(), os.getuid(), content, previous)
    _warn_hidden(ctx, manager)
    if dry_run:
        verb = "replace" if previous is not None else "write"
        click.echo(f"Would {verb} {path} (mode 0644):\n")
        click.echo(content)
        if manager == "launchd":
            click.echo(f"Would create {ctx.obj.paths.state_dir} (for launchd.log) if missing.")
        click.echo("Would run:")
        for step in plan.steps:
            click.echo(f"  {step}")
        try:
            check_manager(manager)  # read-only probe, so the preview also says if it would work
        except ManagerUnavailable as exc:
            click.echo(f"Note: a real install would stop here: {exc}")
        click.echo("Nothing was changed (--dry-run).")
        return
    _require_manager(manager)
    if manager == "launchd":
        # launchd opens launchd.log itself and will not create its folder.
        ensure_dir(ctx.obj.paths.state_dir)
    atomic_write_text(path, content, mode=units.UNIT_FILE_MODE)
    click.echo(f"Wrote {path}")
    _execute(plan)
    click.echo("memoryd is installed and running. Check it with `memoryd service status`; follow it with `memoryd logs -f`.")
    if manager == "systemd":
        click.echo(
            "It starts when you log in. To keep it running while you are logged out: "
            "`loginctl enable-linger $USER`."
        )


def _warn_hidden(ctx: click.Context, manager: units.Manager) -> None:
    """Warn when the unit would not see memoryd or its folders (PrivateTmp= hides /tmp)."""
    if manager != "systemd":
        return
    import daemon

    executable = units.find_executable(sys.argv[0], shutil.which, sys.executable)
    looked_at = {executable[0]: "memoryd itself"}
    if executable[1:2] == ["-m"]:
        looked_at[str(Path(daemon.__file__).parent)] = "memoryd's code"
    for key, value in units.service_environment(_environ(), ctx.obj.config_path).items():
        looked_at.setdefault(value, key)
    for path in units.hidden_paths(list(looked_at)):
        click.echo(
            f"memoryd: warning: the service cannot see {looked_at[path]} ({path}): the unit's "
            "PrivateTmp=yes gives it an empty /tmp and /var/tmp. Install memoryd and keep its "
            "folders elsewhere (e.g. `pipx install`), or the service will not find them.",
            err=True,
        )


def _require_manager(manager: str) -> None:
    """Stop with the manager's own explanation when it cannot be reached (no user bus…)."""
    try:
        check_manager(manager)
    except ManagerUnavailable as exc:
        fail(str(exc), EXIT_FAILED)


@service.command()
@click.option("--dry-run", is_flag=True, help="Print the commands; change nothing.")
@click.pass_context
def uninstall(ctx: click.Context, dry_run: bool) -> None:
    """Stop and disable the service and remove its unit file (memories and state stay)."""
    manager = _manager(ctx)
    plan = units.plan_uninstall(manager, _home(), os.getuid())
    if not plan.unit_path.exists():
        click.echo(f"memoryd is not installed as a service ({plan.unit_path} does not exist).")
        return
    if dry_run:
        click.echo("Would run:")
        for step in plan.steps[:1]:
            click.echo(f"  {step}")
        click.echo(f"Would remove {plan.unit_path}")
        for step in plan.steps[1:]:
            click.echo(f"  {step}")
        click.echo("Nothing was changed (--dry-run).")
        return
    _require_manager(manager)
    # Stop first, remove the file, then let the manager forget it.
    stop, rest = plan.steps[:1], plan.steps[1:]
    _execute(units.ServicePlan(plan.manager, plan.unit_path, None, stop))
    plan.unit_path.unlink(missing_ok=True)
    click.echo(f"Removed {plan.unit_path}")
    _execute(units.ServicePlan(plan.manager, plan.unit_path, None, rest))
    click.echo("memoryd is uninstalled. Your memory trees, state and log are untouched.")


def human_duration(delta: timedelta) -> str:
    """Return a short duration like `3d 4h`, `2h 5m` or `40s`."""
    seconds = int(delta.total_seconds())
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")]
    shown = [f"{n}{unit}" for n, unit in parts if n][:2]
    return " ".join(shown) or "0s"


def _daemon_line(lock_file: Path) -> str:
    from daemon.service.lock import read_lock

    info = read_lock(lock_file)
    if info is None:
        return "not running (never started with this state folder)"
    if info.alive:
        uptime = info.uptime(datetime.now(UTC))
        since = f", up {human_duration(uptime)}" if uptime is not None else ""
        return f"running (pid {info.pid or '?'}{since})"
    return f"not running (last pid {info.pid or '?'})"


# States of a unit that is doing its job (or about to): anything else makes `status` exit 1.
_SYSTEMD_OK = {("active", "running"), ("reloading", "running"), ("activating", "start")}


def _systemd_state() -> tuple[list[tuple[str, str]], bool]:
    """Return what `systemctl --user show` says about the unit, as labelled lines, and
    whether it is running as it should."""
    props = "LoadState,ActiveState,SubState,UnitFileState,MainPID,StatusText,FragmentPath"
    result = _run(("systemctl", "--user", "show", units.SYSTEMD_UNIT, f"--property={props}"), PROBE_TIMEOUT_S)
    if result.returncode != 0:
        raise ManagerUnavailable(NO_USER_BUS.format(detail=_first_line(result.stderr or result.stdout)))
    values = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    if values.get("LoadState") == "not-found":
        return [("unit", "not loaded by systemd (run `memoryd service install`)")], False
    active, sub = values.get("ActiveState", "?"), values.get("SubState", "?")
    state = f"{active} ({sub}), {values.get('UnitFileState', '?')}"
    lines = [("unit", state)]
    if values.get("MainPID", "0") != "0":
        lines.append(("main pid", values["MainPID"]))
    if values.get("StatusText"):
        lines.append(("status", values["StatusText"]))
    return lines, (active, sub) in _SYSTEMD_OK


def _launchd_state(uid: int) -> tuple[list[tuple[str, str]], bool]:
    """Return what `launchctl print` says about the agent, as labelled lines, and whether
    it is running."""
    result = _run(("launchctl", "print", f"gui/{uid}/{units.LAUNCHD_LABEL}"), PROBE_TIMEOUT_S)
    if result.returncode != 0:
        return [("agent", "not loaded by launchd (run `memoryd service install`)")], False
    fields: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, sep, value = line.strip().partition(" = ")
        if sep and key in ("state", "pid", "last exit code") and key not in fields:
            fields[key] = value.strip()
    lines = [("agent", f"loaded, {fields.get('state', 'state unknown')}")]
    if "pid" in fields:
        lines.append(("pid", fields["pid"]))
    if "last exit code" in fields:
        lines.append(("last exit", fields["last exit code"]))
    return lines, fields.get("state") == "running"


@service.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Show the service's state, where its unit file is, and whether the daemon runs.

    Exits 1 when the service is not running as it should (failed, stopped, restarting,
    not installed) or its manager cannot be asked.
    """
    ctx.obj.load_despite_errors()  # a service that will not start often has a bad config
    manager = _manager(ctx)
    path = units.unit_path(manager, _home())
    rows: list[tuple[str, str]] = [("unit file", f"{path} ({'present' if path.exists() else 'missing'})")]
    code = EXIT_OK
    problem = None
    try:
        check_manager(manager)
        state, healthy = _systemd_state() if manager == "systemd" else _launchd_state(os.getuid())
        rows += state
        if not healthy or not path.exists():
            code = EXIT_FAILED  # failed, stopped or missing: not a service doing its job
    except ManagerUnavailable as exc:
        rows.append(("service", "unknown"))
        problem, code = str(exc), EXIT_FAILED
    rows.append(("daemon", _daemon_line(ctx.obj.paths.lock_file)))
    logs = "memoryd logs -f" + ("  (or: journalctl --user -u memoryd -f)" if manager == "systemd" else "")
    rows.append(("logs", logs))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        click.echo(f"{label + ':':<{width + 1}} {value}")
    if problem:
        click.echo(f"memoryd: {problem}", err=True)
    ctx.exit(code)
