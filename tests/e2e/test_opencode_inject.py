"""End to end: memory reaches real OpenCode sessions by itself (the installed plugin).

Real OpenCode 1.18.33 talks to a scripted model that records every request; memoryd is
installed with `memoryd opencode install` into a fake home, exactly as a user would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fake_model import ScriptedModel, message_text
from tests.e2e.opencode import OpenCodeHome, make_worktree, require_opencode
from tests.e2e.test_opencode_harness import load_scenario
from tests.service.conftest import wait_for

pytestmark = pytest.mark.e2e

RULE = "Never push to main directly"
LESSON = "pnpm deploy needs the frozen lockfile"
LESSON_BODY = "The deploy broke because pnpm install rewrote the lockfile on the runner; use --frozen-lockfile."
OTHER = "Billing service uses port 7311"
BLOCK = re.compile(r"<memoryd-context>.*?</memoryd-context>", re.DOTALL)


@dataclass
class World:
    base: Path
    model: ScriptedModel
    home: OpenCodeHome
    worktree: Path
    scenario: dict[str, Any]
    env: dict[str, str]

    def memoryd(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "daemon", *args], env=self.env, cwd=cwd or self.worktree, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        return result

    @property
    def socket(self) -> Path:
        return self.home.state / "memoryd" / "memoryd.sock"

    def start_daemon(self, settle: int = 30) -> subprocess.Popen[bytes]:
        env = {**self.env, "MEMORYD_CAPTURE__SETTLE_SECONDS": str(settle)}
        out = (self.base / "daemon.out").open("ab")
        daemon = subprocess.Popen([sys.executable, "-m", "daemon", "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
        wait_for(lambda: self.socket.exists(), timeout=30, what="the daemon's socket")
        return daemon


def stop(daemon: subprocess.Popen[bytes]) -> None:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(10)


def make_world(binary: Path, home_class: type[OpenCodeHome] = OpenCodeHome) -> Iterator[World]:
    """The world of these tests (for either OpenCode): a project with its lesson, a hard
    rule, another project with its own fact, memoryd installed into the fake home."""
    # A short base folder: a unix socket's path must stay under ~100 bytes.
    base = Path(tempfile.mkdtemp(prefix="mdi-")).resolve()
    scenario = load_scenario("deploy-pnpm")
    if home_class is not OpenCodeHome:
        from tests.e2e.opencode2 import v2_scenario

        scenario = v2_scenario(scenario)
    worktree = make_worktree(base / "src" / scenario["project"], scenario["files"]).resolve()
    (worktree / ".memory").mkdir()
    other = make_worktree(base / "src" / "billing", {"README.md": "billing\n"}).resolve()
    (other / ".memory").mkdir()
    try:
        with ScriptedModel() as model:
            model.add_scenario(scenario, base / "src")
            home = home_class(base / "h", model.url, binary=binary)
            keep = ("MEMORYD_", "XDG_", "OPENCODE", "NOTIFY_SOCKET")
            env = {**{k: v for k, v in os.environ.items() if not k.startswith(keep)}, **home.env}
            w = World(base, model, home, worktree, scenario, env)
            w.memoryd("remember", "--hard-rule", "-k", "rule", "-t", RULE, "Always open a pull request; CI must pass.")
            w.memoryd("remember", "-k", "lesson", "-t", LESSON, LESSON_BODY)
            w.memoryd("remember", "-k", "fact", "-t", OTHER, "The billing API listens on 7311.", cwd=other)
            w.memoryd("opencode", "install")
            yield w
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def world() -> Iterator[World]:
    yield from make_world(require_opencode())


def system_messages(request: dict[str, Any]) -> list[str]:
    return [message_text(m) for m in request["messages"] if m.get("role") == "system"]


def title_requests(model: ScriptedModel) -> list[dict[str, Any]]:
    return [r for r in model.requests if not r.get("tools")]


def assert_injected(model: ScriptedModel, since: int = 0) -> str:
    """Every agent request since `since` has one system message with the same block; return it."""
    requests = [r for r in model.requests[since:] if r.get("tools")]
    assert requests, "OpenCode sent no agent request"
    blocks = []
    for request in requests:
        systems = system_messages(request)
        assert len(systems) == 1, f"{len(systems)} system messages"
        found = BLOCK.findall(systems[0])
        assert len(found) == 1, "the memory block is missing or doubled"
        blocks.append(found[0])
    assert len(set(blocks)) == 1, "the block changed between the steps of one session"
    block = blocks[0]
    assert RULE in block and LESSON in block
    assert "Relevant to the first prompt" in block and "rewrote the lockfile" in block
    assert OTHER not in block, "another project's memory leaked in"
    for request in title_requests(model)[-1:]:
        assert not any("memoryd" in s for s in system_messages(request)), "the title request was changed"
    return block


def first_turn(world: World) -> tuple[str, float]:
    """One turn with the daemon up: every step got exactly what `memoryd context` shows."""
    shown = world.memoryd("context", "--dir", str(world.worktree), "--prompt", world.scenario["prompt"])
    sid = world.home.run(world.scenario["prompt"], world.worktree)
    returned = time.monotonic()
    assert shown.stdout.strip() == assert_injected(world.model)
    return sid, returned


def assert_note_soon(world: World, sid: str, returned: float, timeout: float) -> None:
    """The turn's end wrote the note at once, not after settle_seconds (30 here).

    The deadline leaves room for a loaded machine; bench_inject.py measures the delay.
    """
    sessions = world.worktree / ".memory" / "sessions"
    note = wait_for(lambda: [p for p in sessions.glob("*.md") if p.name != "index.md"], timeout=timeout, what="the note")
    assert time.monotonic() - returned < 25, "the note waited for settle_seconds, not for the turn's end"
    assert sid in note[0].read_text()


def plugin_off_title(world: World) -> list[Any]:
    """A turn with the plugin switched off: the title request's messages as OpenCode makes them."""
    world.home.extra_env["MEMORYD_PLUGIN_OFF"] = "1"
    world.home.run(world.scenario["prompt"], world.worktree)
    del world.home.extra_env["MEMORYD_PLUGIN_OFF"]
    assert not any("memoryd-context" in s for r in world.model.requests for s in system_messages(r))
    return title_requests(world.model)[-1]["messages"]


def test_daemon_socket_gives_every_step_the_block_and_notes_on_idle(world: World) -> None:
    daemon = world.start_daemon(settle=30)
    try:
        sid, returned = first_turn(world)
        assert_note_soon(world, sid, returned, timeout=10)
        log = (world.base / "daemon.out").read_text()
        assert "session.idle" in log and "Traceback" not in log
    finally:
        stop(daemon)


def assert_fallback_injects(world: World) -> None:
    """With no daemon, the plugin runs `memoryd context`; the title request is left as OpenCode makes it."""
    plain_title = plugin_off_title(world)
    start = len(world.model.requests)
    world.home.run(world.scenario["prompt"], world.worktree)
    assert not world.socket.exists()
    assert_injected(world.model, since=start)
    assert title_requests(world.model)[-1]["messages"] == plain_title


def test_without_daemon_the_plugin_runs_memoryd_context(world: World) -> None:
    assert_fallback_injects(world)


class BrokenSocket:
    """A unix socket at the daemon's path that answers garbage, or nothing at all."""

    def __init__(self, path: Path, mode: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(16)
        self.server.settimeout(0.1)
        self.mode = mode
        self.held: list[socket.socket] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            if self.mode == "garbage":
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{not json")
                conn.close()
            else:
                self.held.append(conn)  # read nothing, answer nothing

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(5)
        self.server.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize("mode", ["garbage", "hang"])
def test_a_broken_daemon_socket_never_breaks_a_session(world: World, mode: str) -> None:
    broken = BrokenSocket(world.socket, mode)
    try:
        world.home.run(world.scenario["prompt"], world.worktree, timeout=90)
    finally:
        broken.close()
    # The session completed, and memory still arrived through `memoryd context`.
    assert_injected(world.model)


def _serve(world: World) -> tuple[subprocess.Popen[str], str]:
    binary = world.home.binary
    proc = subprocess.Popen(
        [str(binary), "serve", "--port", "0", "--hostname", "127.0.0.1"],
        cwd=world.worktree, env=world.home.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []

    def url() -> str | None:
        line = proc.stdout.readline() if proc.stdout else ""
        lines.append(line)
        match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        return match.group(1) if match else None

    found = wait_for(url, timeout=60, what=f"opencode serve's address ({lines})")
    return proc, str(found)


def test_compaction_carries_the_inventory_and_the_save_instruction(world: World) -> None:
    sid = world.home.run(world.scenario["prompt"], world.worktree)
    start = len(world.model.requests)
    proc, url = _serve(world)
    try:
        body = json.dumps({"providerID": "fake", "modelID": "fake-model"}).encode()
        request = urllib.request.Request(
            f"{url}/session/{sid}/summarize?directory={world.worktree}", data=body,
            headers={"Content-Type": "application/json"}, method="POST",
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=90) as response:
            assert response.status == 200
    finally:
        proc.terminate()
        proc.wait(20)
    compaction = [
        r for r in world.model.requests[start:]
        if "memoryd_remember" in json.dumps(r["messages"]) and "Before this conversation is summarised" in json.dumps(r["messages"])
    ]  # fmt: skip
    assert compaction, "no compaction request carried the save instruction"
    text = json.dumps(compaction[0]["messages"], ensure_ascii=False)
    assert LESSON in text and "## Memories" in text
