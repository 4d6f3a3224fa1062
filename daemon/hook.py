"""`python -m daemon.hook AGENT [--config PATH]`: what Claude Code's and Codex's hooks run.

A hook runs on every prompt, so this entry point imports almost nothing: it reads the
hook's JSON on stdin, asks the daemon on its socket (`POST /hook`), and prints the
`additionalContext` answer. With no daemon, it builds the answer itself (the same code
the daemon runs, `daemon.service.hookanswer`). It never fails the agent's turn and never
holds it for more than `DEADLINE_S`: any trouble prints nothing and exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

SOCKET_TIMEOUT_S = 1.2
DEADLINE_S = 1.8  # the agent's turn never waits longer than this on memoryd
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


class _Late(Exception):
    pass


def state_dir(env: dict[str, str]) -> str:
    """memoryd's state folder, as `daemon.paths.state_dir_of` finds it (without importing it)."""
    base = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "memoryd")


def ask_daemon(path: str, body: dict) -> dict:
    """POST /hook on the daemon's socket; raise OSError when no daemon answers."""
    data = json.dumps(body).encode()
    head = (
        "POST /hook HTTP/1.1\r\nHost: memoryd\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(SOCKET_TIMEOUT_S)
        sock.connect(path)
        sock.sendall(head + data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    header, _, content = b"".join(chunks).partition(b"\r\n\r\n")
    parts = header.split(b" ", 2)
    if len(parts) < 2 or parts[1] != b"200":
        raise OSError(f"the daemon answered {header[:80]!r}")
    return json.loads(content)


def answer_here(body: dict, config: str | None) -> dict:
    """No daemon. SessionStart: the session's kept block, else the newest block given in its
    folder (both a file read), else one built here from the trees' search index. A prompt
    gets nothing (that search is the daemon's): it counts as the session's first all the same."""
    from pathlib import Path

    from daemon import hookstore

    state = Path(state_dir(dict(os.environ)))
    agent, session = body["agent"], body["session_id"]
    record = hookstore.load(state, agent, session)
    if body["event"] == "UserPromptSubmit":
        if not record.get("prompted"):
            hookstore.save(state, agent, session, {**record, "prompted": True})
        return {}
    if isinstance(record.get("block"), str):
        return {"context": record["block"]}
    kept = hookstore.load_for_folder(state, agent, body["cwd"]) if body["cwd"] else None
    if kept is not None:
        hookstore.save(state, agent, session, {**record, "block": kept})
        return {"context": kept}
    return build_here(body, config)


def build_here(body: dict, config: str | None) -> dict:
    """The answer built in this process, as the daemon builds it."""
    from pathlib import Path

    from daemon.cli.app import AppContext
    from daemon.service.hookanswer import HookAnswers

    app = AppContext(Path(config) if config else None)

    def context(cwd: str | None, prompt: str, session: str | None) -> dict:
        from datetime import UTC, datetime

        from daemon.cli.memory import _workspace
        from daemon.memory.context import context_payload

        with _workspace(app, Path(cwd) if cwd else None, reading=True, option="--dir") as ws:
            return context_payload(ws, app.settings.inject, Path(cwd) if cwd else None, prompt, datetime.now(UTC), session=session)

    answers = HookAnswers(lambda: app.config.paths.state_dir, context, lambda session: None)
    text = answers.answer(body["agent"], body["event"], body["session_id"], body["cwd"], body["prompt"])
    return {"context": text}


def _late(signum: int, frame: object) -> None:
    raise _Late()


def main(argv: list[str]) -> int:
    agent = argv[1] if len(argv) > 1 else ""
    config = argv[argv.index("--config") + 1] if "--config" in argv[:-1] else os.environ.get("MEMORYD_CONFIG")
    signal.signal(signal.SIGALRM, _late)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE_S)
    try:
        event = json.loads(sys.stdin.read() or "{}")
        name = event.get("hook_event_name", "")
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) and os.path.isabs(event["cwd"]) else None
        body = {"agent": agent, "event": name, "session_id": str(event.get("session_id") or ""), "cwd": cwd,
                "prompt": str(event.get("prompt") or "")}  # fmt: skip
        if not body["session_id"]:
            return 0
        try:
            answer = ask_daemon(os.path.join(state_dir(dict(os.environ)), "memoryd.sock"), body)
        except OSError:
            answer = answer_here(body, config) if name in CONTEXT_EVENTS else {}
        text = answer.get("context") or ""
        if text and name in CONTEXT_EVENTS:
            out = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    except _Late:
        sys.stderr.write(f"memoryd hook: no answer within {DEADLINE_S} s; the session goes on without it\n")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a hook never fails the agent's turn; it says why on stderr
        sys.stderr.write(f"memoryd hook: {type(exc).__name__}: {exc}\n")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
