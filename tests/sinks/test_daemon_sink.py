"""The daemon's sink thread: background delivery, and capture that never waits on a server."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.config import load_settings
from daemon.sinks.cognee import CogneeClient, SinkError
from daemon.sinks.outbox import Outbox
from daemon.state import StateDB
from tests.capture.helpers import add_message
from tests.service.conftest import wait_for
from tests.sinks.conftest import write_config


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A server that accepts connections and never answers: the slowest Cognee there is."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def note_count(home) -> int:
    folder = home.global_root / "sessions"
    return len([p for p in folder.glob("*.md") if p.name != "index.md"]) if folder.is_dir() else 0


def outbox_stats(home) -> dict:
    state = StateDB(home.state_dir / "state.db")
    try:
        return Outbox(state).stats()
    finally:
        state.close()


def test_a_silent_server_never_delays_capture_and_the_outbox_survives_kill_9(
    home, fixture_db, daemon, notify, black_hole
):
    write_config(home.config, black_hole, "kb", cognify="never", timeout_s=30)
    daemon.env["MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S"] = "2"  # the sink thread may be mid-request
    daemon.start()
    # Capture, compile and readiness go on while the sink thread waits on the server.
    wait_for(lambda: notify.saw("READY=1"), 30, "READY=1")
    wait_for(lambda: note_count(home) >= 5, 30, "notes written")
    wait_for(lambda: outbox_stats(home)["queued"] == note_count(home), 30, "notes queued in the outbox")

    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(10)
    stats = outbox_stats(home)
    assert stats["queued"] == note_count(home) and stats["documents"] == 0


def test_the_daemon_delivers_in_the_background(home, fixture_db, daemon, notify, cognee_up, dataset, fixture_sessions):
    write_config(home.config, cognee_up.url, dataset, cognify="never")
    daemon.env["MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S"] = "2"  # the sink thread may be mid-request
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), 30, "READY=1")
    settings, _ = load_settings()
    client = CogneeClient(settings.sinks.cognee)
    wait_for(lambda: note_count(home) >= 5, 30, "notes written")

    def delivered() -> bool:
        dataset_id = client.dataset_id()
        return bool(dataset_id) and client.count(dataset_id) == note_count(home)

    wait_for(delivered, 60, "every note delivered by the daemon")
    session = fixture_sessions["deploy-pnpm"]["session"]
    add_message(fixture_db, session, "msg_zzzz_daemon", "user",
                [("prt_zzzz_daemon", {"type": "text", "text": "Remember the cache key is build-v7"})],
                int(time.time() * 1000))

    def replaced() -> bool:
        docs = {d["externalMetadata"]["session_id"]: d for d in client.documents(client.dataset_id())}
        try:
            return session in docs and "build-v7" in client.raw(client.dataset_id(), docs[session]["id"])
        except SinkError:
            return False  # listed, then replaced before its text was read: look again

    wait_for(replaced, 60, "the continued session's document replaced")
    assert client.count(client.dataset_id()) == note_count(home)
    assert daemon.stop() == 0
    client.close()


def test_an_outbox_left_by_a_killed_daemon_is_delivered_exactly_once(
    home, fixture_db, daemon, notify, black_hole, cognee_up, dataset
):
    write_config(home.config, black_hole, dataset, cognify="never", timeout_s=30)
    daemon.env["MEMORYD_SERVICE__SHUTDOWN_TIMEOUT_S"] = "2"  # the sink thread may be mid-request
    daemon.start()
    wait_for(lambda: note_count(home) >= 5 and outbox_stats(home)["queued"] == note_count(home), 30, "queued")
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(10)

    write_config(home.config, cognee_up.url, dataset, cognify="never")
    result = CliRunner().invoke(cli, ["sink", "push"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    settings, _ = load_settings()
    with CogneeClient(settings.sinks.cognee) as client:
        assert client.count(client.dataset_id()) == note_count(home)
    assert outbox_stats(home)["queued"] == 0


def test_recall_cognee_prints_local_hits_and_why_the_server_gave_no_answer(home, black_hole):
    write_config(home.config, black_hole, "kb", timeout_s=1)
    runner = CliRunner()
    saved = runner.invoke(
        cli, ["remember", "--global", "-k", "gotcha", "-t", "Deploy with pnpm", "npm ci drops the lockfile"]
    )
    assert saved.exit_code == 0, saved.output
    result = runner.invoke(cli, ["recall", "pnpm", "--cognee"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "1. Deploy with pnpm" in result.output
    assert "Cognee: no answer:" in result.output and "/api/v1/search" in result.output
