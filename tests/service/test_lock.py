"""Single-instance lock: real flocks, a second holder in a subprocess, kill -9."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from daemon.service.lock import AlreadyRunning, InstanceLock, LockInfo, read_lock

HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from daemon.service.lock import InstanceLock
    with InstanceLock(Path(sys.argv[1])):
        print("locked", flush=True)
        time.sleep(60)
    """
)

TRY = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from daemon.service.lock import AlreadyRunning, InstanceLock
    try:
        with InstanceLock(Path(sys.argv[1]), grace_s=0.1):
            print("acquired")
    except AlreadyRunning as exc:
        print(f"already running pid={exc.pid}")
        print(exc)
        sys.exit(2)
    """
)


def start_holder(path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_lock_records_pid_and_start_and_reads_alive(tmp_path: Path) -> None:
    path = tmp_path / "state" / "memoryd.lock"
    started = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert read_lock(path) is None
    with InstanceLock(path, now=lambda: started) as lock:
        assert lock.held
        info = read_lock(path)
        assert info == LockInfo(pid=os.getpid(), started=started, alive=True)
        assert info.uptime(started + timedelta(minutes=5)) == timedelta(minutes=5)
        assert path.stat().st_mode & 0o777 == 0o600
    after = read_lock(path)
    assert after == LockInfo(pid=os.getpid(), started=started, alive=False)
    assert after.uptime(started + timedelta(hours=1)) is None
    assert path.exists(), "the file stays: unlinking a lock file invites two daemons"


def test_second_holder_in_a_subprocess_fails_naming_the_pid(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.lock"
    with InstanceLock(path):
        result = subprocess.run([sys.executable, "-c", TRY, str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert f"already running pid={os.getpid()}" in result.stdout
    assert f"pid {os.getpid()}" in result.stdout  # the message a person sees
    # Once released, the same subprocess gets it.
    again = subprocess.run([sys.executable, "-c", TRY, str(path)], capture_output=True, text=True, timeout=30)
    assert again.returncode == 0 and "acquired" in again.stdout


def test_lock_is_released_when_the_holder_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.lock"
    holder = start_holder(path)
    try:
        info = read_lock(path)
        assert info is not None and info.alive and info.pid == holder.pid
        with pytest.raises(AlreadyRunning) as caught:
            InstanceLock(path, grace_s=0.05).acquire()
        assert caught.value.pid == holder.pid
        assert str(holder.pid) in str(caught.value)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        holder.stdout.close()
    dead = read_lock(path)
    assert dead is not None and not dead.alive and dead.pid == holder.pid
    with InstanceLock(path):
        assert read_lock(path).pid == os.getpid()


def test_a_status_probe_is_not_mistaken_for_a_running_daemon(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.lock"
    path.write_text("")
    probe = os.open(path, os.O_RDONLY)
    fcntl.flock(probe, fcntl.LOCK_SH)  # what read_lock holds for an instant
    timer = threading.Timer(0.15, lambda: fcntl.flock(probe, fcntl.LOCK_UN))
    timer.start()
    try:
        with InstanceLock(path, grace_s=2):
            pass
    finally:
        timer.join()
        os.close(probe)


SPAWNER = textwrap.dedent(
    """
    import subprocess, sys, time
    from pathlib import Path
    from daemon.service.lock import InstanceLock
    lock = InstanceLock(Path(sys.argv[1]))
    lock.acquire()
    # close_fds=False: only close-on-exec keeps the lock's descriptor from the child.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], close_fds=False)
    print(child.pid, flush=True)
    time.sleep(60)
    """
)


def test_a_child_process_does_not_inherit_the_lock(tmp_path: Path) -> None:
    """The daemon dies (kill -9) while a process it started lives on: the lock is free.

    A child that inherited the descriptor would keep the flock held for as long as it
    runs, and no daemon could start.
    """
    path = tmp_path / "memoryd.lock"
    holder = subprocess.Popen([sys.executable, "-c", SPAWNER, str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    child_pid = int(holder.stdout.readline())
    try:
        assert read_lock(path).alive
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        os.kill(child_pid, 0)  # still running
        info = read_lock(path)
        assert info is not None and not info.alive
        with InstanceLock(path, grace_s=0.1):
            pass
    finally:
        os.kill(child_pid, signal.SIGKILL)
        holder.stdout.close()


@pytest.mark.parametrize("content", ["", "garbage", "[1, 2]", '{"pid": "x", "started": 5}'])
def test_an_odd_lock_file_reads_as_unknown(tmp_path: Path, content: str) -> None:
    path = tmp_path / "memoryd.lock"
    path.write_text(content)
    assert read_lock(path) == LockInfo(pid=None, started=None, alive=False)
    with InstanceLock(path):
        assert read_lock(path).pid == os.getpid()


def test_acquiring_twice_is_a_programming_error(tmp_path: Path) -> None:
    with InstanceLock(tmp_path / "memoryd.lock") as lock:
        with pytest.raises(RuntimeError):
            lock.acquire()


def test_already_running_message_says_what_to_do(tmp_path: Path) -> None:
    message = str(AlreadyRunning(1234, tmp_path / "memoryd.lock"))
    assert "pid 1234" in message and "systemctl --user stop memoryd" in message and "kill 1234" in message
