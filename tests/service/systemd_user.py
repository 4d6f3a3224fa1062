"""A real systemd *user* manager (and journald) for an unprivileged user, started as root.

The machines the suite runs on often boot without systemd as PID 1; Debian's systemd can
still run a user manager for an ordinary user, which is all memoryd's unit needs
(`Type=notify`, `WatchdogSec=`, `Restart=`, `journalctl --user`). The recipe:

1. a standalone journald, its runtime journal on a private tmpfs (else it never splits
   per-user journals and `journalctl --user` shows nothing);
2. a delegated cgroup, as `user@.service` would get;
3. `systemd --user` in a private mount namespace where `/run/systemd/system` exists (systemd
   refuses to start otherwise), `/run` is a mount point, and `unit-root` exists.

Everything started here is stopped by its PID. `SYSTEMD_ROOT` points at an unpacked newer
systemd (`dpkg-deb -x systemd_254….deb DIR`) to run that one instead, with its libraries on
LD_LIBRARY_PATH (or, with `SYSTEMD_LD_LIBRARY_PATH=""`, none: for a tree built on a newer C
library whose binaries were pointed at their own loader and libraries with patchelf).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

USER = "memoryd-e2e"
CGROUP_HIERARCHIES = ("unified", "systemd")
# One user manager for the test user at a time on a machine: two (two test runs at once)
# would share its /run/user/UID, cgroup and journal and stop each other's.
LOCK = Path("/run/lock/memoryd-systemd-e2e.lock")
LOCK_WAIT_S = 600.0


def unavailable_reason() -> str | None:
    """Why a user manager cannot be run here, or None when it can."""
    if os.geteuid() != 0:
        return "needs root (to start a user manager for a test user)"
    for tool in ("systemctl", "journalctl", "unshare", "setpriv", "useradd"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not Path("/lib/systemd/systemd").exists() or not Path("/lib/systemd/systemd-journald").exists():
        return "systemd is not installed (/lib/systemd/systemd)"
    if not Path("/sys/fs/cgroup/unified").is_dir() and not Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return "no cgroup2 hierarchy under /sys/fs/cgroup"
    return None


def ensure_user(name: str = USER) -> pwd.struct_passwd:
    """Return the test user, creating it (with a home, in systemd-journal) if missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/sh", name], check=True)
        subprocess.run(["usermod", "-aG", "systemd-journal", name], check=False)
        return pwd.getpwnam(name)


@dataclass
class UserManager:
    """systemd --user for `user`, with its own journald; `start()`, then `stop()`."""

    scratch: Path
    user: pwd.struct_passwd
    systemd_root: Path = Path("/")
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _lock: int | None = None
    _cgroups: list[Path] = field(default_factory=list)
    _made: list[Path] = field(default_factory=list)

    @property
    def uid(self) -> int:
        return self.user.pw_uid

    @property
    def runtime_dir(self) -> Path:
        return Path(f"/run/user/{self.uid}")

    def _binary(self, name: str) -> str:
        return str(self.systemd_root / "lib" / "systemd" / name)

    def _env_prefix(self) -> list[str]:
        if self.systemd_root == Path("/"):
            return []
        # A tree whose binaries find their own libraries (patchelf'd onto a newer C library,
        # which must not reach memoryd's Python): SYSTEMD_LD_LIBRARY_PATH="" sets none.
        override = os.environ.get("SYSTEMD_LD_LIBRARY_PATH")
        if override is not None:
            return [f"LD_LIBRARY_PATH={override}"] if override else []
        # libsystemd-shared: usr/lib/x86_64-linux-gnu/systemd since 253 or so, lib/systemd before
        libs = [self.systemd_root / "usr/lib/x86_64-linux-gnu/systemd", self.systemd_root / "lib/systemd",
                self.systemd_root / "usr/lib/x86_64-linux-gnu", self.systemd_root / "lib/x86_64-linux-gnu"]
        return ["LD_LIBRARY_PATH=" + ":".join(str(lib) for lib in libs)]

    def user_env(self) -> dict[str, str]:
        """The environment a login shell of the user would have."""
        path = "/usr/local/bin:/usr/bin:/bin"
        if self.systemd_root != Path("/"):
            path = f"{self.systemd_root / 'bin'}:{self.systemd_root / 'usr/bin'}:{path}"
        env = {
            "HOME": self.user.pw_dir,
            "USER": self.user.pw_name,
            "LOGNAME": self.user.pw_name,
            "PATH": path,
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.runtime_dir}/bus",
            "LANG": "C.UTF-8",
        }
        for item in self._env_prefix():
            key, _, value = item.partition("=")
            env[key] = value
        return env

    def as_user(self, *argv: str, timeout: float = 60, env: dict[str, str] | None = None,
                check: bool = False) -> subprocess.CompletedProcess[str]:
        """Run `argv` as the user (cwd: their home), capturing its output."""
        full_env = self.user_env() | (env or {})
        cmd = ["setpriv", f"--reuid={self.uid}", f"--regid={self.user.pw_gid}", "--init-groups",
               "env", "-i", *[f"{k}={v}" for k, v in full_env.items()], *argv]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=check,
                              cwd=self.user.pw_dir)

    def _spawn(self, argv: list[str]) -> int:
        proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc.pid

    def claim(self) -> None:
        """Wait (up to LOCK_WAIT_S) until no other run uses the test user; start() does it too.

        Call it before touching the user's home. stop() lets go."""
        if self._lock is not None:
            return
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._lock = fd
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise RuntimeError(f"another run holds {LOCK} (a user manager for {self.user.pw_name})") from None
                time.sleep(0.5)

    def start(self, timeout: float = 30) -> None:
        """Start journald and the user manager; return once the manager answers."""
        self.claim()
        for path in (Path("/run/systemd/journal"), Path("/run/log")):
            if not path.exists():
                path.mkdir(parents=True)
                self._made.append(path)
        self._spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                     "mount -t tmpfs -o mode=0755 tmpfs /run/log && exec env "
                     + " ".join(self._env_prefix()) + " " + self._binary("systemd-journald")])
        deadline = time.monotonic() + timeout
        while not Path("/run/systemd/journal/socket").exists():
            if time.monotonic() > deadline:
                raise RuntimeError("journald did not create /run/systemd/journal/socket")
            time.sleep(0.1)
        subprocess.run(["journalctl", "--flush"], capture_output=True, timeout=30, check=False)
        cg = f"user.slice/user-{self.uid}.slice/user@{self.uid}.service"
        for hierarchy in CGROUP_HIERARCHIES:
            base = Path("/sys/fs/cgroup") / hierarchy
            if not base.is_dir():
                continue
            folder = base / cg
            # Remove on stop the topmost folder made here (user.slice, on a machine without one).
            top = next((p for p in reversed(folder.parents) if not p.exists()), folder)
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run(["chown", "-R", f"{self.uid}:{self.user.pw_gid}", str(folder)], check=True)
            self._cgroups.append(top)
        self.runtime_dir.mkdir(parents=True, exist_ok=True)
        os.chown(self.runtime_dir, self.uid, self.user.pw_gid)
        self.runtime_dir.chmod(0o700)
        fake = self.scratch / "fake-run-systemd"
        for sub in ("system", "journal"):
            (fake / sub).mkdir(parents=True, exist_ok=True)
        for sub in ("unit-root", "mount-rootfs"):
            (fake / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        env = " ".join(f"{k}={v}" for k, v in self.user_env().items() if k != "DBUS_SESSION_BUS_ADDRESS")
        join = "; ".join(f"echo $$ > {base}/{cg}/cgroup.procs" for base in self._cgroup_bases())
        script = (
            f"mount --rbind /run /run && mount --bind /run/systemd/journal {fake}/journal && "
            f"mount --rbind {fake} /run/systemd && {join} && {self._executor_mount()}"
            f"exec setpriv --reuid={self.uid} --regid={self.user.pw_gid} --init-groups env -i {env} "
            f"{self._binary('systemd')} --user --log-target=journal"
        )
        self._spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c", script])
        while True:
            # Not `is-system-running`: outside the manager's namespace it says "offline".
            probe = self.as_user("systemctl", "--user", "show", "--value", "-p", "SystemState", timeout=10)
            if probe.stdout.strip() in ("running", "degraded"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the user manager did not come up: {probe.stdout} {probe.stderr}")
            time.sleep(0.2)

    def _executor_mount(self) -> str:
        """systemd 255 and later run each unit through systemd-executor, at a path compiled
        in (/usr/lib/systemd/): in the manager's own mount namespace, the tree's folder is
        laid over the machine's (an overlay: the machine's user units stay visible)."""
        tree = self.systemd_root / "usr/lib/systemd"
        if self.systemd_root == Path("/") or not (tree / "systemd-executor").exists():
            return ""
        return f"mount -t overlay overlay -o lowerdir={tree}:/usr/lib/systemd /usr/lib/systemd && "

    def _cgroup_bases(self) -> list[Path]:
        return [Path("/sys/fs/cgroup") / h for h in CGROUP_HIERARCHIES if (Path("/sys/fs/cgroup") / h).is_dir()]

    def stop(self) -> None:
        """Stop the user manager, then journald, by PID; remove what start() made; let go."""
        try:
            self._stop()
        finally:
            if self._lock is not None:
                os.close(self._lock)  # releases the flock
                self._lock = None

    def _stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        for folder in reversed(self._cgroups):
            # Children first: the user manager leaves app.slice and friends behind.
            for child in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
                if child.is_dir():
                    try:
                        child.rmdir()
                    except OSError:
                        pass  # a cgroup with a process left in it; the error is reported below
            try:
                folder.rmdir()
            except OSError as exc:
                raise RuntimeError(f"cgroup {folder} still in use after the user manager stopped: {exc}") from exc
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        for path in reversed(self._made):
            shutil.rmtree(path, ignore_errors=True)


def usable_python(manager: UserManager) -> str:
    """An interpreter of this Python's version that the user can run (ours may sit under /root)."""
    import sys

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (os.path.realpath(sys.executable), f"/usr/bin/python{version}", f"/usr/local/bin/python{version}"):
        probe = manager.as_user(candidate, "-c", "import sys; print(sys.version_info[:2])", timeout=30)
        if probe.returncode == 0 and probe.stdout.strip() == str(tuple(sys.version_info[:2])):
            return candidate
    raise RuntimeError(f"no Python {version} the user {manager.user.pw_name} can run")


def install_memoryd(manager: UserManager, repo: Path) -> Path:
    """Give the user a venv whose `memoryd` runs this checkout; return that script's path.

    The venv sees this checkout and our installed dependencies through a .pth file when
    the user can read them and the unit can see them, else through copies (a checkout
    under /root is not readable, one under /tmp is hidden by PrivateTmp);
    nothing is downloaded. It lives in the user's home, where the unit can see it.
    """
    import site
    import sys

    home = Path(manager.user.pw_dir)
    venv = home / "venv"
    python = usable_python(manager)
    manager.as_user(python, "-m", "venv", "--without-pip", str(venv), check=True, timeout=120)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = venv / "lib" / version / "site-packages"
    sources = [str(repo), *site.getsitepackages()]
    probe = manager.as_user(python, "-c", f"import sys; sys.path[:0] = {sources!r}; import daemon, pydantic, watchdog")
    # The unit's PrivateTmp=yes hides /tmp and /var/tmp: a checkout there must be copied too.
    hidden = any(Path(source).is_relative_to(tmp) for source in sources for tmp in ("/tmp", "/var/tmp"))
    if probe.returncode != 0 or hidden:
        copies = home / "memoryd-code"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "pip", "pip-*", "_pytest", "pytest*")
        shutil.copytree(repo / "daemon", copies / "daemon", ignore=ignore, dirs_exist_ok=True)
        for index, folder in enumerate(site.getsitepackages()):
            shutil.copytree(folder, copies / f"site-{index}", ignore=ignore, dirs_exist_ok=True, symlinks=True)
        subprocess.run(["chown", "-R", f"{manager.uid}:{manager.user.pw_gid}", str(copies)], check=True)
        sources = [str(copies), *(str(copies / f"site-{i}") for i in range(len(site.getsitepackages())))]
    (packages / "memoryd-checkout.pth").write_text("\n".join(sources) + "\n", encoding="utf-8")
    script = venv / "bin" / "memoryd"
    script.write_text(f"#!{venv}/bin/python\nfrom daemon.cli.main import main\nmain()\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def reset_home(user: pwd.struct_passwd) -> None:
    """Empty the test user's home (it is ours alone), keeping the folder itself."""
    home = Path(user.pw_dir)
    for entry in home.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
