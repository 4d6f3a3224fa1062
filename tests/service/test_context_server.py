"""The daemon's unix socket for the OpenCode plugin: real sockets, real threads, a real daemon."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.config import Config, load_settings
from daemon.service.context_server import ContextServer, connect, request
from tests.capture.helpers import add_message
from tests.conftest import OPENCODE_FIXTURE
from tests.service.conftest import wait_for


@pytest.fixture
def server(home, short_dir: Path) -> Iterator[tuple[ContextServer, Path, list[str]]]:
    settings, paths = load_settings()
    config = Config(settings, paths)
    memory = paths.global_root / "lesson" / "wal.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("---\ntitle: Use WAL mode\nkind: lesson\nid: l1\n---\n\nReaders never wait.\n")
    idle: list[str] = []
    server = ContextServer(lambda: config, idle.append)
    path = short_dir / "memoryd.sock"
    old = os.umask(0)  # the socket must be 0600 whatever the umask
    try:
        assert server.start(path)
    finally:
        os.umask(old)
    yield server, path, idle
    server.close()


def context_target(prompt: str = "", directory: str = "/") -> str:
    return "/context?" + urllib.parse.urlencode({"dir": directory, "prompt": prompt})


def test_socket_is_private_and_removed_on_close(server) -> None:
    srv, path, _ = server
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    srv.close()
    assert not path.exists()


def test_a_stale_socket_file_is_replaced(home, short_dir: Path) -> None:
    settings, paths = load_settings()
    config = Config(settings, paths)
    path = short_dir / "memoryd.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # what a daemon killed with -9 leaves behind
    srv = ContextServer(lambda: config, lambda _: None)
    try:
        assert srv.start(path)
        assert request(path, "GET", "/health")[0] == 200
    finally:
        srv.close()


def test_concurrent_clients_get_the_same_answer(server) -> None:
    _, path, _ = server
    answers: list[tuple[int, str]] = []
    lock = threading.Lock()

    def client() -> None:
        for _ in range(10):
            # A generous timeout: the first answer indexes the tree, and CI's cores are shared.
            status, data = request(path, "GET", context_target("why WAL?"), timeout=60)
            with lock:
                answers.append((status, json.dumps(data, sort_keys=True)))

    threads = [threading.Thread(target=client) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(answers) == 120
    assert {status for status, _ in answers} == {200}
    assert len({body for _, body in answers}) == 1
    payload = json.loads(answers[0][1])
    assert "Use WAL mode" in payload["block"] and payload["relevant"] == ["l1"]


def test_malformed_requests_get_clear_errors_and_the_server_goes_on(server) -> None:
    _, path, idle = server
    assert request(path, "GET", "/nope")[0] == 404
    assert request(path, "POST", "/idle")[0] == 400  # no body
    assert request(path, "POST", "/idle", {"session": "x"})[0] == 400
    assert request(path, "POST", "/idle", {"session_id": 42})[0] == 400
    assert request(path, "POST", "/idle", {"session_id": "x" * 500})[0] == 400
    assert request(path, "GET", "/context?dir=relative/path")[0] == 400
    assert b"400 - Bad request" in raw(path, b"\x00\xff garbage\r\n\r\n")
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(str(path))  # says nothing: must not hold up anyone else
    try:
        assert request(path, "GET", "/health")[0] == 200
        assert request(path, "POST", "/idle", {"session_id": "ses_1"}) == (202, {"ok": True})
    finally:
        silent.close()
    assert idle == ["ses_1"]


def test_answers_follow_the_index_written_by_another_process(server, home) -> None:
    srv, path, _ = server
    first = request(path, "GET", context_target())[1]
    subprocess.run(
        [sys.executable, "-m", "daemon", "remember", "--global", "-k", "gotcha", "-t", "Tabs break the Makefile", "Use tabs."],
        check=True, capture_output=True, env=os.environ.copy(),
    )  # fmt: skip
    second = request(path, "GET", context_target())[1]
    assert "Tabs break the Makefile" in second["block"]
    assert second["generation"] != first["generation"]


def healthy(sock: Path) -> bool:
    try:
        return request(sock, "GET", "/health")[0] == 200
    except OSError:  # not there yet, or a dead daemon's file
        return False


@pytest.fixture
def short_home(home, short_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """The state folder in a short path, so the daemon can bind its socket."""
    monkeypatch.setenv("XDG_STATE_HOME", str(short_dir))
    return short_dir / "memoryd" / "memoryd.sock"


def test_daemon_serves_the_socket_across_restarts_and_idle_writes_the_note(short_home: Path, home, daemon_env, daemon) -> None:
    sock = short_home
    db = home.opencode_db
    db.parent.mkdir(parents=True)
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", db)
    env = {**daemon_env, "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"], "MEMORYD_CAPTURE__SETTLE_SECONDS": "600"}
    daemon.env = env
    daemon.start()
    wait_for(lambda: "daemon.ready" in daemon.output(), timeout=30, what="daemon.ready")
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert request(sock, "GET", "/health")[0] == 200

    # A session written just now settles for 10 minutes, unless OpenCode says it is idle.
    session = json.loads((OPENCODE_FIXTURE / "sessions.json").read_text())["deploy-pnpm"]["session"]
    # Our copy, standing in for OpenCode writing: the session goes on with a new message.
    part = ("prt_zzzzidle", {"type": "text", "text": "one more thing"})
    add_message(db, session, "msg_zzzzidle", "user", [part], int(time.time() * 1000))
    wait_for(lambda: '"settling": 1' in daemon.output(), timeout=20, what="the session settling")
    assert request(sock, "POST", "/idle", {"session_id": session})[0] == 202
    wait_for(lambda: f'"session_id": "{session}", "event": "session.idle"' in daemon.output(), what="session.idle")
    notes = home.config / "opencode" / "memory" / "sessions"
    wait_for(lambda: any(session[-8:] in p.name for p in notes.glob("*.md")), timeout=20, what="the idle session's note")

    assert daemon.stop() == 0
    assert not sock.exists()
    daemon.start()  # a new daemon serves again
    wait_for(lambda: healthy(sock), timeout=30, what="the socket again")
    daemon.proc.kill()  # kill -9 leaves the socket file behind …
    daemon.proc.wait(10)
    assert sock.exists()
    daemon.start()  # … and the next daemon replaces it
    wait_for(lambda: healthy(sock), timeout=30, what="the socket after kill -9")
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.output()


def test_warm_rebuilds_recent_folders_after_a_change(server, home) -> None:
    srv, path, _ = server
    request(path, "GET", context_target("anything", "/"))
    subprocess.run(
        [sys.executable, "-m", "daemon", "remember", "--global", "-k", "fact", "-t", "Warm fact", "It is warm."],
        check=True, capture_output=True, env=os.environ.copy(),
    )  # fmt: skip
    srv.warm()  # the worker does this after refreshing a tree
    assert any("Warm fact" in p.text for p in srv._stable.values())
    assert "Warm fact" in request(path, "GET", context_target("other prompt", "/"))[1]["block"]


def raw(path: Path, data: bytes, timeout: float = 5.0, read: bool = True) -> bytes:
    """Send `data` as is on a fresh connection; return all that comes back until close."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        connect(sock, path, timeout)  # a full listen queue waited out, as `request` does
        sock.sendall(data)
        if not read:
            return b""
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass  # the server dropped us: what arrived so far is the answer
        return b"".join(chunks)


def status_of(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else None


@pytest.mark.parametrize(
    "head",
    [
        b"POST /idle HTTP/1.1\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}",
        b"POST /idle HTTP/1.1\r\nContent-Length: -5\r\nConnection: close\r\n\r\n{}",
        b"POST /idle HTTP/1.1\r\nContent-Length: \xb2\r\nConnection: close\r\n\r\n{}",  # isdigit(), not int()
        b"POST /idle HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}",
        b"POST /idle HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"POST /idle HTTP/1.1\r\nContent-Length: 99999999999999999999\r\nConnection: close\r\n\r\n{}",
        b"POST /idle HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]",
        b"POST /idle HTTP/1.1\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnull",
        b"GET /context?dir=/tmp/%00x HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /context?dir=/" + b"a" * 5000 + b" HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /context?dir=%ff%fe HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"BREW /pot HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"\x00\x01\x02 garbage\r\n\r\n",
        b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n",
    ],
)
def test_malformed_requests_get_a_4xx_and_no_traceback(server, capfd, head: bytes) -> None:
    _, path, idle = server
    answer = raw(path, head)
    status = status_of(answer)
    # A 4xx, or (for what is not even HTTP/1.x) an error text and a close.
    assert (status is None and b"Error" in answer) or (status is not None and 400 <= status < 500), answer[:200]
    assert request(path, "GET", "/health")[0] == 200, "the server still answers"
    assert idle == []
    assert "Traceback" not in capfd.readouterr().err


def test_clients_that_leave_mid_request_are_dropped_quietly(server, capfd) -> None:
    _, path, idle = server
    for _ in range(50):
        raw(path, b"GET /context?dir=/&prompt=wal HTTP/1.1\r\nConnection: close\r\n\r\n", read=False)
        raw(path, b"POST /idle HTTP/1.1\r\nContent-Length: 50\r\n\r\n{\"session_id\": ", read=False)
        raw(path, b"GET /cont", read=False)
    assert request(path, "GET", "/health")[0] == 200
    time.sleep(0.5)  # the handlers of the departed clients finish
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert idle == [], "a body cut short is no idle notice"


def test_a_client_that_trickles_its_headers_is_cut_off_at_the_deadline(server, capfd) -> None:
    srv, path, _ = server
    srv.deadline_s = 1.0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 8:
            try:
                sock.sendall(b"X-Slow: 1\r\n")  # each line well within the per-read timeout
                if sock.recv(1, socket.MSG_DONTWAIT) == b"":
                    closed = True
                    break
            except BlockingIOError:
                pass  # nothing to read yet: still connected
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.3)
        assert closed, "the server kept a trickling client past its deadline"
    assert request(path, "GET", "/health")[0] == 200
    assert "Traceback" not in capfd.readouterr().err


def socket_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("memoryd-socket-") and t.name[15:].isdigit()]


def test_requests_are_answered_by_kept_workers_not_a_thread_each(server) -> None:
    from daemon.service import socket_pool

    srv, path, _ = server
    pool = srv._server.pool
    for _ in range(60):  # one client after another: the same few workers answer them all
        assert request(path, "GET", "/health")[0] == 200
        assert request(path, "GET", context_target("why WAL?"))[0] == 200
    assert pool._started == socket_pool.KEPT
    assert len([t for t in socket_threads() if t in pool._workers]) == socket_pool.KEPT


def test_a_crowd_of_silent_clients_holds_up_no_one_and_leaves_no_crowd(server) -> None:
    from daemon.service import socket_pool

    srv, path, idle = server
    pool = srv._server.pool
    silent = []
    try:
        for _ in range(socket_pool.KEPT + 6):  # more than the kept workers: each holds one
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(path))
            sock.sendall(b"GET /health HTTP/1.1\r\n")  # and never ends its headers
            silent.append(sock)
        assert request(path, "GET", "/health")[0] == 200
        assert request(path, "POST", "/idle", {"session_id": "ses_2"})[0] == 202
        assert pool.size > socket_pool.KEPT + 6
    finally:
        for sock in silent:
            sock.close()
    wait_for(lambda: pool.size <= socket_pool.KEPT + socket_pool.SPARE, timeout=20, what="the extra workers ending")
    assert idle == ["ses_2"]
    assert request(path, "GET", "/health")[0] == 200


def test_close_ends_every_waiting_worker_and_frees_the_path(home, short_dir: Path) -> None:
    settings, paths = load_settings()
    config = Config(settings, paths)
    path = short_dir / "memoryd.sock"
    for _ in range(3):  # start and stop again: nothing left behind each time
        srv = ContextServer(lambda: config, lambda _: None)
        assert srv.start(path)
        assert request(path, "GET", "/health")[0] == 200
        pool = srv._server.pool
        workers = [t for t in socket_threads() if t in pool._workers]
        assert len(workers) == pool.size > 0
        srv.close()  # waits for the waiting workers; the one that just answered ends as it finishes
        wait_for(lambda: pool.size == 0 and not any(t.is_alive() for t in workers), timeout=10, what="every worker ending")
        assert not path.exists()
        with pytest.raises(OSError):
            request(path, "GET", "/health")


def test_a_new_memory_folder_and_a_moved_worktree_are_seen_by_the_next_request(server, home, tmp_path: Path) -> None:
    _, path, _ = server
    for name in ("one", "two"):
        (tmp_path / name / ".git").mkdir(parents=True)
    current = tmp_path / "current"  # where OpenCode runs: a link to one worktree, then the other
    current.symlink_to(tmp_path / "one")

    def block() -> str:  # the same first prompt each time: a cached answer must not hide a change
        status, data = request(path, "GET", context_target("why the flaky migration?", str(current)), timeout=60)
        assert status == 200
        return data["block"]

    def lesson(name: str) -> None:
        (tmp_path / name / ".memory" / "lesson").mkdir(parents=True)
        (tmp_path / name / ".memory" / "lesson" / "m.md").write_text(
            f"---\ntitle: Flaky migration in repo {name}\nkind: lesson\n---\n\nRun it twice.\n"
        )

    assert "Flaky migration" not in block()
    lesson("one")  # the project makes its memory folder
    assert "Flaky migration in repo one" in block()
    lesson("two")
    current.unlink()
    current.symlink_to(tmp_path / "two")
    shown = block()
    assert "Flaky migration in repo two" in shown and "repo one" not in shown
