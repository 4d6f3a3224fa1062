"""Hook benchmark: what the command Claude Code's and Codex's hooks run costs a turn.

    python bench/bench_hooks.py [--memories 2000] [--runs 40] [--from-checkout]

With `--memories` memories in a project tree, runs `python -m daemon.hook claude` as the
agent runs it (a new process, the hook's JSON on stdin) `--runs` times per event and
prints wall-time p50/p95/max, process start included, and the CPU time:

1. daemon up: SessionStart of a new session (the block built and kept), SessionStart of
   a resumed one (the kept block), UserPromptSubmit of a first prompt (a search), and of a
   later prompt (nothing to add), Stop (the idle notice);
2. daemon down: SessionStart answered in the hook process itself (the newest block given
   in the folder; for a folder never served, one built from the index: one run, as the
   next session there finds it kept), a first prompt (nothing added), Stop.

Targets (issue 39): p95 < 50 ms with the daemon, < 300 ms without, never > 2 s (the hook
gives up at 1.8 s itself). The hook runs with the interpreter of a non-editable install
(`bench/installed.py`), as `memoryd install` writes it; `--from-checkout` uses this
checkout's dev venv (its editable-install finder adds to every start).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_memory import child_cpu, pct, write_tree  # noqa: E402
from bench.commandenv import command_env  # noqa: E402
from bench.installed import memoryd_as_installed  # noqa: E402
from bench.machine import machine_line  # noqa: E402

PROMPT = "why does npm install break the pnpm lockfile in CI again"


def run_hook(python: Path, env: dict[str, str], event: dict) -> tuple[float, float, int]:
    """(wall s, CPU s, characters printed) of one hook call."""
    cpu = child_cpu()
    start = time.perf_counter()
    done = subprocess.run([str(python), "-m", "daemon.hook", "claude"], input=json.dumps(event), env=env,
                          capture_output=True, text=True, timeout=10)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"hook failed: {done.returncode} {done.stderr}")
    return wall, child_cpu() - cpu, len(done.stdout)


def series(name: str, python: Path, env: dict[str, str], events: list[dict]) -> None:
    runs = [run_hook(python, env, e) for e in events]
    walls = [r[0] * 1000 for r in runs]
    cpus = [r[1] * 1000 for r in runs]
    chars = max(r[2] for r in runs)
    print(f"  {name:<34} wall p50 {pct(walls, 50):6.1f}  p95 {pct(walls, 95):6.1f}  max {max(walls):6.1f} ms"
          f"   CPU p50 {pct(cpus, 50):5.1f} ms   out {chars} chars")  # fmt: skip


def events(project: Path, name: str, runs: int, tag: str, prompt: str = "", same: bool = False, **extra: str) -> list[dict]:
    base = {"cwd": str(project), "hook_event_name": name, "transcript_path": "/dev/null", **extra}
    if prompt:
        base["prompt"] = prompt
    return [{**base, "session_id": f"{tag}-{0 if same else n}"} for n in range(runs)]


def wait_socket(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            with socket.socket(socket.AF_UNIX) as sock:
                if sock.connect_ex(str(path)) == 0:
                    return
        time.sleep(0.1)
    raise SystemExit(f"no daemon socket at {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--from-checkout", action="store_true")
    args = parser.parse_args()
    print(machine_line())
    script = Path(sys.executable).with_name("memoryd") if args.from_checkout else memoryd_as_installed()
    python = script.with_name("python")
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-hooks-") as tmp:
        home = Path(tmp)
        project = home / "code" / "shop"
        (project / ".git").mkdir(parents=True)
        write_tree(project / ".memory", args.memories)
        other = home / "code" / "api"  # a folder no session was given a block in yet
        (other / ".git").mkdir(parents=True)
        write_tree(other / ".memory", args.memories, seed=11)
        env = command_env({k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "XDG_"))}, HOME=str(home))
        # Index the tree once, as a first session start would.
        for folder in (project, other):
            subprocess.run([str(script), "reindex"], cwd=folder, env=env, check=True, capture_output=True)
        print(f"{args.memories} memories in one project tree; {args.runs} runs each; hook interpreter {python}")
        daemon = subprocess.Popen([str(script), "run"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_socket(home / ".local" / "state" / "memoryd" / "memoryd.sock")
            run_hook(python, env, events(project, "SessionStart", 1, "warm")[0])  # the daemon's first answer builds its caches
            print("daemon up:")
            series("SessionStart, new session", python, env, events(project, "SessionStart", args.runs, "new", source="startup"))
            series("SessionStart, resumed session", python, env, events(project, "SessionStart", args.runs, "new", source="resume"))
            series("UserPromptSubmit, first prompt", python, env, events(project, "UserPromptSubmit", args.runs, "p", PROMPT))
            series("UserPromptSubmit, later prompt", python, env, events(project, "UserPromptSubmit", args.runs, "p", PROMPT))
            series("Stop (idle notice)", python, env, events(project, "Stop", args.runs, "s"))
        finally:
            daemon.terminate()
            daemon.wait(30)
        print("daemon down:")
        series("SessionStart, new session", python, env, events(project, "SessionStart", args.runs, "down", source="startup"))
        series("SessionStart, folder never served", python, env, events(other, "SessionStart", 1, "cold", source="startup"))
        series("UserPromptSubmit, first prompt", python, env, events(project, "UserPromptSubmit", args.runs, "downp", PROMPT))
        series("Stop", python, env, events(project, "Stop", args.runs, "downs"))


if __name__ == "__main__":
    main()
