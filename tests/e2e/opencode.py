"""Drive the real OpenCode CLI (npm ``opencode-ai``) offline, for end-to-end tests.

:class:`OpenCodeHome` is a throw-away user home whose OpenCode config points at a
:class:`tests.e2e.fake_model.ScriptedModel`; :meth:`OpenCodeHome.run` runs
``opencode run --auto`` in it and returns the session id, and the ``sessions`` /
``messages`` / ``parts`` helpers read OpenCode's own SQLite database read-only.

Nothing here needs the network: the model is on 127.0.0.1, ``@ai-sdk/openai-compatible``
is bundled in the 1.18.x binary, the models.dev catalogue fetch, autoupdate, sharing
and LSP downloads are switched off by environment variables, and the background
``npm install @opencode-ai/plugin`` OpenCode starts in its config directory is
pre-empted by a stub ``node_modules`` (see :meth:`OpenCodeHome.write_config`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OPENCODE_VERSION = "1.18.33"
REPO = Path(__file__).resolve().parents[2]
INSTALL_PREFIX = REPO / ".cache" / "opencode"
#: A persistent XDG_CACHE_HOME shared by every fake home (OpenCode keeps provider
#: packages it downloads under ``$XDG_CACHE_HOME/opencode/packages``).
SHARED_XDG_CACHE = REPO / ".cache" / "opencode-xdg-cache"
PROVIDER_ID = "fake"
MODEL_ID = "fake-model"
DEFAULT_TIMEOUT = 120.0

#: Environment variables OpenCode 1.18 honours that keep a run offline and quiet.
OFFLINE_ENV: dict[str, str] = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",  # no https://models.opencode.ai/api.json
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",  # ignore ~/.claude prompts and skills
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "OPENCODE_DISABLE_CHANNEL_DB": "1",  # always opencode.db, never opencode-<channel>.db
    "NO_COLOR": "1",
    "TERM": "dumb",
}
#: Variables copied from the caller's environment (everything else is dropped, so a
#: developer's API keys or OPENCODE_* settings cannot leak into a test run).
PASSTHROUGH_ENV = (
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
    "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
    "NPM_CONFIG_REGISTRY", "npm_config_registry",
)  # fmt: skip
_SESSION_ID = re.compile(r'"sessionID"\s*:\s*"(ses_[A-Za-z0-9]+)"')


def opencode_binary() -> Path | None:
    """The real OpenCode executable, or None when it is not installed.

    Looks at ``$MEMORYD_OPENCODE_BIN``, then the install made by
    ``.ci/install-opencode`` under ``<repo>/.cache/opencode``, then ``PATH``.
    """
    explicit = os.environ.get("MEMORYD_OPENCODE_BIN")
    if explicit:
        path = Path(explicit).expanduser()
        return path if _is_executable(path) else None
    modules = INSTALL_PREFIX / "node_modules"
    # postinstall copies the right platform build (AVX2 or baseline) to opencode.exe.
    candidates = [modules / "opencode-ai" / "bin" / "opencode.exe"]
    candidates += sorted(modules.glob("opencode-*/bin/opencode"), key=_platform_rank)
    for path in candidates:
        if _is_executable(path) and _is_native(path):
            return path
    found = shutil.which("opencode")
    return Path(found) if found else None


def require_opencode() -> Path:
    """The OpenCode binary for a test; skip without it, or fail if ``MEMORYD_REQUIRE_E2E=1``."""
    return require_binary(opencode_binary(), OPENCODE_VERSION, "MEMORYD_OPENCODE_BIN")


def require_binary(binary: Path | None, version: str, variable: str) -> Path:
    """``binary``, or a skip naming how to install ``version`` (a failure if ``MEMORYD_REQUIRE_E2E=1``)."""
    import pytest  # only tests call this

    if binary is not None:
        return binary
    reason = f"OpenCode {version} not installed: run .ci/install-opencode or set {variable}"
    if os.environ.get("MEMORYD_REQUIRE_E2E") == "1":
        pytest.fail(f"{reason} (MEMORYD_REQUIRE_E2E=1 makes this an error)", pytrace=False)
    pytest.skip(reason)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _is_native(path: Path) -> bool:
    """True for an ELF/Mach-O binary (not the npm JS shim)."""
    with path.open("rb") as fh:
        magic = fh.read(4)
    return magic in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


def _platform_rank(path: Path) -> tuple[int, str]:
    """Prefer the plain build (baseline first on CPUs without AVX2), then musl ones."""
    name = path.parents[1].name
    baseline_first = not _has_avx2()
    return (("baseline" in name) != baseline_first) + 2 * ("musl" in name), name


def _has_avx2() -> bool:
    """True unless /proc/cpuinfo exists and lacks avx2 (the plain x64 build needs it)."""
    try:
        return "avx2" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return True


class OpenCodeError(RuntimeError):
    """``opencode run`` failed or timed out; the message carries its output tails."""


@dataclass
class RunResult:
    """One finished ``opencode run``."""

    session_id: str
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    events: list[dict[str, Any]] = field(default_factory=list)


class OpenCodeHome:
    """A fake user home configured so OpenCode talks only to a scripted model.

    ``root`` gets ``.config``, ``.local/share``, ``.local/state`` (the XDG dirs) and
    ``HOME`` points at it.  ``cache_dir`` is used as ``XDG_CACHE_HOME`` and may be shared
    between homes (default: :data:`SHARED_XDG_CACHE`).  ``mcp`` is written verbatim as the
    config's ``mcp`` section, ``extra_config`` is merged over the top level.
    """

    #: The table OpenCode keeps its sessions in (2.0 has its own).
    SESSION_TABLE = "session"

    def __init__(
        self,
        root: Path,
        model_url: str,
        *,
        binary: Path | None = None,
        cache_dir: Path | None = None,
        mcp: Mapping[str, Any] | None = None,
        extra_config: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.model_url = model_url
        self.binary = binary or opencode_binary()
        self.data = self.root / ".local" / "share"
        self.config = self.root / ".config"
        self.state = self.root / ".local" / "state"
        self.cache = Path(cache_dir) if cache_dir else SHARED_XDG_CACHE
        self.mcp = dict(mcp or {})
        self.extra_config = dict(extra_config or {})
        self.extra_env = dict(env or {})
        self.runs: list[RunResult] = []
        for directory in (self.data, self.config, self.state, self.cache):
            directory.mkdir(parents=True, exist_ok=True)
        self.write_config()

    # -- paths and environment ---------------------------------------------------------

    @property
    def config_dir(self) -> Path:
        """``$XDG_CONFIG_HOME/opencode``."""
        return self.config / "opencode"

    @property
    def config_path(self) -> Path:
        """The global ``opencode.json``."""
        return self.config_dir / "opencode.json"

    @property
    def db_path(self) -> Path:
        """OpenCode's database, ``$XDG_DATA_HOME/opencode/opencode.db``."""
        return self.data / "opencode" / "opencode.db"

    @property
    def log_dir(self) -> Path:
        """Where OpenCode writes its own log files."""
        return self.data / "opencode" / "log"

    @property
    def env(self) -> dict[str, str]:
        """The full environment an ``opencode`` process runs with."""
        env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
        no_proxy = {"127.0.0.1", "localhost"}
        for key in ("NO_PROXY", "no_proxy"):
            no_proxy.update(x for x in os.environ.get(key, "").split(",") if x)
        env.update(
            HOME=str(self.root),
            XDG_DATA_HOME=str(self.data),
            XDG_CONFIG_HOME=str(self.config),
            XDG_STATE_HOME=str(self.state),
            XDG_CACHE_HOME=str(self.cache),
            NO_PROXY=",".join(sorted(no_proxy)),
            no_proxy=",".join(sorted(no_proxy)),
        )
        env.setdefault("PATH", os.defpath)
        env.update(OFFLINE_ENV)
        env.update(self.extra_env)
        return env

    # -- configuration -----------------------------------------------------------------

    def config_data(self) -> dict[str, Any]:
        """The ``opencode.json`` content: fake provider, no sharing, permissive tools."""
        model = f"{PROVIDER_ID}/{MODEL_ID}"
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                PROVIDER_ID: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Scripted model",
                    "options": {"baseURL": self.model_url, "apiKey": "none"},
                    "models": {MODEL_ID: {"name": "Scripted model"}},
                }
            },
            "model": model,
            "small_model": model,
            "share": "disabled",
            "autoupdate": False,
            "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
        }
        if self.mcp:
            config["mcp"] = self.mcp
        config.update(self.extra_config)
        return config

    def write_config(self) -> None:
        """Write ``opencode.json`` and stub the config dir's plugin dependencies.

        On every start OpenCode forks a background ``npm install @opencode-ai/plugin``
        in each writable config directory that lacks ``node_modules`` (or whose
        ``package.json``/``package-lock.json`` do not list it).  A fresh home would pay
        a registry round trip each run and usually be killed mid-way when the run
        exits; an empty ``node_modules`` plus both manifests naming the package makes
        OpenCode consider it installed.  Only TypeScript plugins need the real package.
        """
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(self.config_data(), indent=2) + "\n")
        deps = {"@opencode-ai/plugin": OPENCODE_VERSION}
        (self.config_dir / "node_modules").mkdir(exist_ok=True)
        (self.config_dir / "package.json").write_text(json.dumps({"dependencies": deps}))
        lock = {"lockfileVersion": 3, "requires": True, "packages": {"": {"dependencies": deps}}}
        (self.config_dir / "package-lock.json").write_text(json.dumps(lock))

    # -- running -------------------------------------------------------------------------

    def run(
        self,
        prompt: str,
        worktree: Path,
        session: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        extra_args: Sequence[str] = (),
        verbatim: bool = False,
    ) -> str:
        """Run ``opencode run --auto`` on ``prompt`` in ``worktree``; return the session id.

        ``session`` continues an existing session.  ``opencode run`` wraps a message
        argument that contains spaces in double quotes, so by default the stored prompt
        is ``"<prompt>"`` (as in the fixture DB); ``verbatim=True`` passes the words
        separately so the stored text equals ``prompt``, as typed in the TUI.  Raises
        :class:`OpenCodeError` (with the tails of stdout, stderr and OpenCode's log) on
        a non-zero exit, a timeout, an error event, or when no session id is found.
        """
        if self.binary is None:
            raise OpenCodeError("OpenCode binary not found; run .ci/install-opencode")
        args = [str(self.binary), "run", "--auto", "--format", "json", "--dir", str(worktree)]
        if session:
            args += ["--session", session]
        args += [*extra_args, "--", *(prompt.split(" ") if verbatim else [prompt])]
        before = self._root_session_ids()
        started = time.monotonic()
        proc = subprocess.Popen(
            args,
            cwd=worktree,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,  # so a timeout can kill bash tools it spawned too
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            raise OpenCodeError(
                self._describe(f"timed out after {timeout:.0f}s", args, stdout, stderr)
            ) from None
        finally:
            _kill_group(proc)  # reap stragglers (e.g. MCP servers) left in the group
        return self._finish(args, proc.returncode, stdout, stderr, started, session, before)

    def _finish(
        self, args: list[str], code: int, stdout: str, stderr: str, started: float, session: str | None, before: set[str]
    ) -> str:
        """Check a finished run, record it in :attr:`runs` and return its session id."""
        seconds = time.monotonic() - started
        if code != 0:
            raise OpenCodeError(self._describe(f"exited with {code}", args, stdout, stderr))
        events = _json_lines(stdout)
        session_id = session or _session_from_events(events, stdout)
        if session_id is None:
            new = self._root_session_ids() - before
            session_id = new.pop() if len(new) == 1 else None
        if session_id is None:
            raise OpenCodeError(self._describe("no session id found", args, stdout, stderr))
        for event in events:
            if event.get("type") == "error":
                raise OpenCodeError(self._describe(f"reported an error: {event}", args, stdout, stderr))
        self.runs.append(RunResult(session_id, args, code, stdout, stderr, seconds, events))
        return session_id

    @property
    def last_run(self) -> RunResult | None:
        """The most recent successful run."""
        return self.runs[-1] if self.runs else None

    def _describe(self, what: str, args: Sequence[str], stdout: str, stderr: str) -> str:
        log = self._log_text()
        problems = "\n".join(
            line for line in log.splitlines() if "level=ERROR" in line or "level=WARN" in line
        )
        return (
            f"opencode {what}: {' '.join(args)}\n"
            f"--- stderr (tail) ---\n{_tail(stderr)}\n"
            f"--- stdout (tail) ---\n{_tail(stdout)}\n"
            f"--- {self.log_dir}: warnings and errors (tail) ---\n{_tail(problems, 10)}\n"
            f"--- {self.log_dir} (tail) ---\n{_tail(log, 15)}\n"
            "(OpenCode retries failed model calls with backoff, so a broken or unreachable"
            " model usually shows up as a timeout.)"
        )

    def _log_text(self) -> str:
        logs = sorted(self.log_dir.glob("*.log"), key=lambda p: p.stat().st_mtime)
        return logs[-1].read_text(errors="replace") if logs else "(no log)"

    # -- reading the database ------------------------------------------------------------

    def connect(self) -> sqlite3.Connection:
        """A read-only connection to OpenCode's database (rows as ``sqlite3.Row``)."""
        if not self.db_path.exists():
            raise FileNotFoundError(f"no OpenCode database at {self.db_path}")
        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=10)
        conn.row_factory = sqlite3.Row
        return conn

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        conn = self.connect()
        try:
            return [dict(row) for row in conn.execute(sql, params)]
        finally:
            conn.close()

    def _root_session_ids(self) -> set[str]:
        if not self.db_path.exists():
            return set()
        return {r["id"] for r in self._query("SELECT id FROM session WHERE parent_id IS NULL")}

    def session(self, session_id: str) -> dict[str, Any]:
        """The session row for ``session_id`` (KeyError if absent)."""
        rows = self._query(f"SELECT * FROM {self.SESSION_TABLE} WHERE id = ?", (session_id,))
        if not rows:
            raise KeyError(session_id)
        return rows[0]

    def sessions(self) -> list[dict[str, Any]]:
        """All session rows, oldest first."""
        return self._query(f"SELECT * FROM {self.SESSION_TABLE} ORDER BY time_created, id")

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """The session's ``message`` rows in order, with ``data`` decoded from JSON."""
        rows = self._query(
            "SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,)
        )
        return [{**r, "data": json.loads(r["data"])} for r in rows]

    def parts(self, session_id: str) -> list[dict[str, Any]]:
        """The session's ``part`` rows in order, with ``data`` decoded from JSON."""
        rows = self._query(
            "SELECT p.* FROM part p JOIN message m ON m.id = p.message_id"
            " WHERE p.session_id = ? ORDER BY m.time_created, m.id, p.id",
            (session_id,),
        )
        return [{**r, "data": json.loads(r["data"])} for r in rows]


def make_worktree(path: Path, files: Mapping[str, str] | None = None, git: bool = True) -> Path:
    """Create ``path`` with ``files`` (relative path → text); optionally a git repo.

    With ``git`` the files are committed, so OpenCode gives the project a real id (the
    root commit hash) as it does for a user's repository.
    """
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if git:
        _git(path, "init", "-q")
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "--allow-empty", "--no-verify", "-m", "init")
    return path


def _git(cwd: Path, *args: str) -> None:
    """Run git in ``cwd`` with a fixed identity and no signing, raising on failure."""
    settings = ["user.name=memoryd tests", "user.email=tests@memoryd.invalid"]
    settings += ["commit.gpgsign=false", "init.defaultBranch=main"]
    command = ["git", *(x for kv in settings for x in ("-c", kv)), *args]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed in {cwd}: {result.stderr.strip()}")


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process group started for ``proc`` (ignoring an already-gone group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


def _session_from_events(events: Sequence[Mapping[str, Any]], stdout: str) -> str | None:
    for event in events:
        sid = event.get("sessionID")
        if isinstance(sid, str) and sid.startswith("ses_"):
            return sid
    match = _SESSION_ID.search(stdout)
    return match.group(1) if match else None


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:]) or "(empty)"
