"""Notifier against real AF_UNIX datagram sockets, as systemd would listen."""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from daemon.service.notify import Notifier, notify_address, watchdog_interval_from


@pytest.fixture
def listener() -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket bound to a path (short enough for sun_path), like systemd's."""
    with tempfile.TemporaryDirectory(prefix="md-notify-", dir="/tmp") as folder:
        path = os.path.join(folder, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        sock.settimeout(2)
        try:
            yield sock, path
        finally:
            sock.close()


def receive(sock: socket.socket) -> bytes:
    return sock.recv(4096)


def test_messages_reach_a_path_socket(listener: tuple[socket.socket, str]) -> None:
    sock, path = listener
    with Notifier(env={"NOTIFY_SOCKET": path}, monotonic_ns=lambda: 5_000_123_456) as notifier:
        assert notifier.enabled
        assert notifier.ready()
        assert receive(sock) == b"READY=1"
        assert notifier.status("distilled 3 sessions\nqueue empty")
        assert receive(sock) == b"STATUS=distilled 3 sessions queue empty"
        assert notifier.watchdog()
        assert receive(sock) == b"WATCHDOG=1"
        assert notifier.reloading()
        assert receive(sock) == b"RELOADING=1\nMONOTONIC_USEC=5000123"
        assert notifier.stopping()
        assert receive(sock) == b"STOPPING=1"


def test_messages_reach_an_abstract_socket() -> None:
    name = f"memoryd-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2)
    try:
        notifier = Notifier(env={"NOTIFY_SOCKET": "@" + name})
        assert notifier.ready()
        assert receive(sock) == b"READY=1"
        notifier.close()
    finally:
        sock.close()


def test_without_notify_socket_everything_is_a_quiet_no_op() -> None:
    notifier = Notifier(env={})
    with capture_logs() as logs:
        assert not notifier.enabled
        assert notifier.ready() is False
        assert notifier.status("x") is False
        assert notifier.watchdog() is False
        assert notifier.stopping() is False
        assert notifier.reloading() is False
    assert logs == []
    assert notifier.watchdog_interval() is None


def test_a_vanished_socket_is_logged_not_raised(tmp_path: Path) -> None:
    notifier = Notifier(env={"NOTIFY_SOCKET": str(tmp_path / "gone")})
    with capture_logs() as logs:
        assert notifier.ready() is False
    notifier.close()
    assert logs[0]["event"] == "notify_failed"
    assert logs[0]["message"] == "READY=1"


def test_an_unsupported_address_disables_the_notifier() -> None:
    with capture_logs() as logs:
        notifier = Notifier(env={"NOTIFY_SOCKET": "vsock:2:1234"})
    assert not notifier.enabled
    assert logs[0]["event"] == "notify_socket_unsupported"


@pytest.mark.parametrize(
    ("value", "address"),
    [("/run/user/1000/systemd/notify", "/run/user/1000/systemd/notify"), ("@abc", b"\0abc"), ("", None), (None, None), ("relative", None)],
)
def test_notify_address(value: str | None, address: str | bytes | None) -> None:
    assert notify_address(value) == address


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"}, 15.0),
        ({"WATCHDOG_USEC": "30000000"}, 15.0),  # older systemd: no WATCHDOG_PID
        ({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "43"}, None),  # meant for another process
        ({"WATCHDOG_USEC": "0", "WATCHDOG_PID": "42"}, None),
        ({"WATCHDOG_USEC": "soon", "WATCHDOG_PID": "42"}, None),
        ({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "x"}, None),
        ({}, None),
    ],
)
def test_watchdog_interval_is_half_the_period_for_this_pid(env: dict[str, str], expected: float | None) -> None:
    assert watchdog_interval_from(env, pid=42) == expected
    assert Notifier(env=env, pid=42).watchdog_interval() == expected


def test_watchdog_interval_defaults_to_our_own_pid() -> None:
    env = {"WATCHDOG_USEC": "4000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier(env=env).watchdog_interval() == 2.0


def test_a_listener_that_never_reads_does_not_block_the_daemon(tmp_path):
    """A full datagram queue drops messages instead of hanging the sender."""
    import socket as _socket

    from daemon.service.notify import Notifier

    path = tmp_path / "deaf.sock"
    deaf = _socket.socket(_socket.AF_UNIX, _socket.SOCK_DGRAM)
    deaf.bind(str(path))
    try:
        notifier = Notifier(env={"NOTIFY_SOCKET": str(path)})
        results = [notifier.status(f"pass {n} " + "x" * 2000) for n in range(2000)]
        assert results[0] is True and results[-1] is False  # queue filled, later ones dropped
        notifier.close()
    finally:
        deaf.close()
