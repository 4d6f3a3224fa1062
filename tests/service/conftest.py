"""A real `memoryd run` process and a real notify socket: fixtures for the service tests (sinks and sync import them)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def wait_for(predicate: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> object:
    """Poll `predicate` until it is truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class NotifySocket:
    """An AF_UNIX datagram socket standing in for systemd's NOTIFY_SOCKET.

    Like systemd, it reads continuously (on a thread), so the daemon's queue never fills.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.05)
        self.messages: list[str] = []
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read, name="notify-listener")
        self._reader.start()

    def _read(self) -> None:
        while not self._closed.is_set():
            try:
                self.messages.append(self.sock.recv(4096).decode())
            except (TimeoutError, BlockingIOError):
                continue

    def drain(self) -> list[str]:
        return list(self.messages)

    def saw(self, line: str) -> bool:
        return any(line in m.splitlines() for m in self.drain())

    def close(self) -> None:
        self._closed.set()
        self._reader.join(2)
        self.sock.close()


class DaemonProcess:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self, *args: str) -> subprocess.Popen:
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "daemon", *args, "run"], env=self.env, stdout=out, stderr=subprocess.STDOUT
        )
        return self.proc

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 20) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


@pytest.fixture
def notify(tmp_path: Path) -> Iterator[NotifySocket]:
    sock = NotifySocket(tmp_path / "notify.sock")
    yield sock
    sock.close()


@pytest.fixture
def daemon_env(home, notify) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "NOTIFY_SOCKET", "WATCHDOG_"))}
    env.update(
        MEMORYD_CAPTURE__SETTLE_SECONDS="0",
        MEMORYD_WATCH__DEBOUNCE_MS="50",
        MEMORYD_LOG__LEVEL="debug",
        NOTIFY_SOCKET=str(notify.path),
        WATCHDOG_USEC="2000000",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def daemon(daemon_env, tmp_path) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(daemon_env, tmp_path / "daemon.out")
    yield proc
    if proc.proc is not None and proc.proc.poll() is None:
        proc.proc.kill()
        proc.proc.wait(10)


@pytest.fixture
def hanging_model(daemon) -> Iterator:
    """A model server whose every call hangs, with the daemon pointed at it."""
    from tests.capture.distill.conftest import ModelServer, Reply

    server = ModelServer()
    server.default = Reply(hang=True)
    server.start()
    daemon.env.update(MEMORYD_LLM__PROVIDER="openai", MEMORYD_LLM__BASE_URL=server.url + "/v1", MEMORYD_LLM__MODEL="m")
    yield server
    server.stop()
