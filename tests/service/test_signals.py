"""Signal handlers with real signals sent to our own pid, in the main thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from daemon.service.signals import SignalHandlers


def wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)  # signal handlers run between bytecodes of the main thread
    return True


@pytest.fixture
def exits() -> list[int]:
    return []


def test_first_sigterm_asks_for_a_graceful_stop(exits: list[int]) -> None:
    with SignalHandlers(force_exit=exits.append) as handlers:
        os.kill(os.getpid(), signal.SIGTERM)
        assert wait_for(handlers.stop.is_set)
    assert exits == []
    assert handlers.received == [signal.SIGTERM]


def test_second_stop_signal_forces_the_exit(exits: list[int]) -> None:
    with SignalHandlers(force_exit=exits.append) as handlers:
        os.kill(os.getpid(), signal.SIGTERM)
        assert wait_for(handlers.stop.is_set)
        os.kill(os.getpid(), signal.SIGINT)
        assert wait_for(lambda: exits == [1])


def test_sigint_stops_without_keyboard_interrupt(exits: list[int]) -> None:
    stop = threading.Event()
    with SignalHandlers(stop=stop, force_exit=exits.append) as handlers:
        os.kill(os.getpid(), signal.SIGINT)
        assert wait_for(stop.is_set)
    assert handlers.stop is stop and exits == []


def test_sighup_asks_for_a_reload_and_calls_back(exits: list[int]) -> None:
    calls: list[str] = []
    with SignalHandlers(on_reload=lambda: calls.append("reload"), force_exit=exits.append) as handlers:
        os.kill(os.getpid(), signal.SIGHUP)
        assert wait_for(handlers.reload.is_set)
        os.kill(os.getpid(), signal.SIGHUP)
        assert wait_for(lambda: len(calls) == 2)
        assert not handlers.stop.is_set()
    assert exits == []


def test_previous_handlers_are_restored() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    with SignalHandlers():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_installing_outside_the_main_thread_is_refused() -> None:
    errors: list[BaseException] = []

    def install() -> None:
        try:
            with SignalHandlers():
                pass
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=install)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "main thread" in str(errors[0])


SLOW_DAEMON = textwrap.dedent(
    """
    import sys, time
    from daemon.service.signals import SignalHandlers
    with SignalHandlers() as handlers:
        print("ready", flush=True)
        handlers.stop.wait()
        print("stopping", flush=True)
        time.sleep(60)  # a shutdown that hangs
    print("clean exit", flush=True)
    """
)


def test_a_real_second_sigterm_exits_a_hung_shutdown_with_status_1() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_DAEMON], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        lines = []
        while "stopping" not in (line := proc.stdout.readline()):
            assert line, f"process ended early: {lines}"
            lines.append(line)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 1
        rest = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert "forced_exit" in rest and "clean exit" not in rest


BUSY_LOGGER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from daemon.logs import get_logger, setup_logging
    from daemon.service.signals import SignalHandlers
    setup_logging("info", Path(sys.argv[1]), stderr=False)
    log = get_logger("memoryd.test")
    with SignalHandlers() as handlers:
        print("ready", flush=True)
        while not handlers.stop.is_set():  # the main thread is writing a log line whenever a signal comes
            log.info("busy.line", path="/home/dev/src/webapp", filler="x" * 200)
    print(sum(sig.name == "SIGHUP" for sig in handlers.received), flush=True)
    """
)


def test_signals_that_come_in_the_middle_of_a_log_line_are_all_logged_once(tmp_path) -> None:
    log_file = tmp_path / "memoryd.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", BUSY_LOGGER, str(log_file)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        for _ in range(300):
            proc.send_signal(signal.SIGHUP)
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert "Traceback" not in out and "Logging error" not in out
    received = int(out.split()[-1])
    assert received >= 50  # the kernel merges a signal still pending: not all of them arrive
    lines = "".join(path.read_text() for path in tmp_path.glob("memoryd.log*")).splitlines()
    assert sum('"reload_requested"' in line for line in lines) == received
    assert sum('"stop_requested"' in line for line in lines) == 1
