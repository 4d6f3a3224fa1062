"""The viewer and the daemon: the socket records what it served, and starts the viewer
when `memoryd ui` asks (a real `memoryd run` and a real `memoryd ui`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import httpx

from daemon.service.context_server import ContextServer, request
from daemon.service.given import GIVEN_FILE, read_given

from .conftest import World

FAKE_KEY = "sk-proj-" + "Q7w8E9r0T1y2U3i4O5p6" * 3


def _context(sock: Path, project: Path, prompt: str, session: str | None) -> dict:
    query = {"dir": str(project), "prompt": prompt, **({"session": session} if session else {})}
    status, payload = request(sock, "GET", "/context?" + urllib.parse.urlencode(query))
    assert status == 200
    return payload


def _wait_for(condition, seconds: float = 10.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_socket_records_each_served_block_once_with_the_prompt_scrubbed(world: World, short_dir: Path) -> None:
    server = ContextServer(lambda: world.config, lambda _sid: None)
    assert server.start(short_dir / "s.sock")
    state = world.config.paths.state_dir
    already = len(read_given(state, 1000))
    try:
        prompt = f"why does the WAL checkpoint stall? my key is {FAKE_KEY}"
        served = _context(short_dir / "s.sock", world.project, prompt, "ses_given_1")
        _context(short_dir / "s.sock", world.project, prompt, "ses_given_1")  # the plugin asks again: one record
        _context(short_dir / "s.sock", world.project, "anything", None)  # no session: not a session's block
        _wait_for(lambda: len(read_given(state, 1000)) > already)
    finally:
        server.close()  # drains the record
    entries = read_given(state, 1000)
    assert len(entries) == already + 1
    newest = entries[0]
    assert newest["session"] == "ses_given_1" and newest["block"] == served["block"]
    assert newest["relevant"] == served["relevant"] and world.ids["wal"] in newest["relevant"]
    assert FAKE_KEY not in newest["prompt"] and "[REDACTED" in newest["prompt"]
    raw = (state / GIVEN_FILE).read_text()
    assert FAKE_KEY not in raw and (state / GIVEN_FILE).stat().st_mode & 0o777 == 0o600


def test_post_ui_starts_the_viewer_once_and_says_its_port(world: World, short_dir: Path) -> None:
    from daemon.ui.server import start_viewer

    started = []

    def start_ui() -> int:
        if not started:
            started.append(start_viewer(lambda: world.config, daemon=True))
        return started[0].port

    server = ContextServer(lambda: world.config, lambda _sid: None, start_ui)
    assert server.start(short_dir / "s.sock")
    try:
        first = request(short_dir / "s.sock", "POST", "/ui")
        second = request(short_dir / "s.sock", "POST", "/ui")
        assert first[0] == 200 and first == second and len(started) == 1
        viewer = started[0]
        page = httpx.get(f"http://127.0.0.1:{first[1]['port']}/memories", params={"token": viewer.viewer.secret},
                         follow_redirects=True)  # fmt: skip
        assert page.status_code == 200 and "Use WAL mode" in page.text and "served by the daemon" in page.text
    finally:
        server.close()
        for viewer in started:
            viewer.close()


def test_a_daemon_without_a_viewer_says_so(world: World, short_dir: Path) -> None:
    server = ContextServer(lambda: world.config, lambda _sid: None)
    assert server.start(short_dir / "s.sock")
    try:
        status, data = request(short_dir / "s.sock", "POST", "/ui")
    finally:
        server.close()
    assert status == 404 and "no viewer" in data["error"]


def test_memoryd_ui_opens_the_running_daemons_viewer(home, world: World) -> None:  # noqa: ANN001
    env = {**os.environ, "MEMORYD_CAPTURE__SETTLE_SECONDS": "30"}
    daemon = subprocess.Popen([sys.executable, "-m", "daemon", "run"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        _wait_for(lambda: world.config.paths.socket_file.exists(), 60)
        ui = subprocess.run([sys.executable, "-m", "daemon", "ui", "--no-browser"], env=env, capture_output=True,
                            text=True, timeout=60)  # fmt: skip
        assert ui.returncode == 0, ui.stderr
        url = re.search(r"\(the daemon serves it\): (http://127\.0\.0\.1:\d+/\?token=\S+)", ui.stdout).group(1)
        client = httpx.Client(follow_redirects=True)
        assert "served by the daemon" in client.get(url).text
        assert "Never push to main" in client.get(url.split("?")[0] + "memories").text
    finally:
        daemon.terminate()
        out, _ = daemon.communicate(timeout=60)
    assert daemon.returncode == 0, out
    assert "ui.listening" in out and "Traceback" not in out


def test_the_daemons_viewer_stops_when_idle_and_starts_again_on_its_port(world: World) -> None:
    from daemon.ui.server import start_viewer

    viewer = start_viewer(lambda: world.config, daemon=True, idle_stop_s=0.3)
    try:
        port = viewer.port
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 401  # a request keeps it up a while
        _wait_for(lambda: not viewer.alive, 10)
        assert not viewer.alive
    finally:
        viewer.close()
    again = start_viewer(lambda: world.config, daemon=True, port=port)
    try:
        assert again.port == port and httpx.get(f"http://127.0.0.1:{port}/").status_code == 401
    finally:
        again.close()
