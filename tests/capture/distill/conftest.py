"""A scripted model server on 127.0.0.1, transcripts to feed it, and settings to point at it."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from daemon.capture.distill.base import Entry, Transcript
from daemon.config import LLMSettings
from daemon.opencode.reader import SessionInfo
from daemon.state import StateDB

FAKE_KEY = "sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7"
NOTE = """## What Was Worked On

- Fixed `scripts/deploy.sh` to use pnpm (ERR_PNPM_NO_LOCKFILE on CI).

## Decisions & Rationale

- Always deploy with `pnpm install --frozen-lockfile`, so the lockfile is honoured.
"""

# Names no path or command, so it holds for any session: a model note naming paths a
# session never showed is cut down to what the session does show.
ANY_SESSION_NOTE = """## Outcome / Current State

The change the session asked for is in place and was checked by hand.

## Decisions & Rationale

- Kept the change small, because the rest of the code path was already right.
"""


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    json: object = None
    raw: bytes | None = None  # sent as is instead of `json`
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # wait until the server shuts down, answering nothing
    trickle: float = 0.0  # seconds between the body's bytes (headers at once): a slow-loris answer
    delay: float = 0.0


@dataclass
class Seen:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict
    header_lines: list[tuple[str, str]] = field(default_factory=list)  # as sent, repeats included


class ModelServer:
    """Answers each POST with the next scripted Reply (or `default`), and records it."""

    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.default: Reply | None = None
        self.requests: list[Seen] = []
        self.active = 0
        self.max_active = 0
        self.released = threading.Event()
        self.hang_s = 10.0  # how long a `hang` reply waits before it closes with no answer
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = False  # server_close() joins the handler threads
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), name="model-server")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def then(self, *replies: Reply) -> ModelServer:
        self.script.extend(replies)
        return self

    def _next(self) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        if self.default is None:
            return Reply(599, {"error": "test server: no reply scripted"})
        return self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    lines = [(k.lower(), v) for k, v in self.headers.items()]
                    server.requests.append(Seen(self.path, dict(lines), body, lines))
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                reply = server._next()
                try:
                    if reply.hang:
                        server.released.wait(server.hang_s)
                        return
                    time.sleep(reply.delay)
                finally:
                    # No longer active once the answer goes out: the client may send its
                    # next request as soon as it has read this one, before this thread ends.
                    with server._lock:
                        server.active -= 1
                try:
                    data = reply.raw if reply.raw is not None else json.dumps(reply.json).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.trickle:
                        for byte in range(len(data)):
                            self.wfile.write(data[byte:byte + 1])
                            self.wfile.flush()
                            if server.released.wait(reply.trickle):
                                return
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

        return Handler

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    """A model server on a free port; stopped, and its threads joined, after the test."""
    srv = ModelServer()
    srv.start()
    yield srv
    srv.stop()


def openai_reply(content: str | None, usage: dict | None = None, **message: object) -> Reply:
    """An OpenAI-style chat completion answer."""
    body: dict = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content, **message}}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return Reply(json=body)


def anthropic_reply(text: str, usage: dict | None = None, stop_reason: str = "end_turn", thinking: str = "") -> Reply:
    """An Anthropic Messages answer."""
    content: list[dict] = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking, "signature": "x"})
    content.append({"type": "text", "text": text})
    body: dict = {"id": "msg_1", "type": "message", "role": "assistant", "content": content, "stop_reason": stop_reason}
    if usage is not None:
        body["usage"] = usage
    return Reply(json=body)


def session(title: str = "Fix deploy script") -> SessionInfo:
    return SessionInfo(
        id="ses_test1",
        title=title,
        directory="/home/dev/src/webapp",
        project_id="p1",
        parent_id=None,
        time_created=1_700_000_000_000,
        time_updated=1_700_000_100_000,
        message_count=3,
    )


def make_transcript(entries: list[Entry], text: str | None = None, title: str = "Fix deploy script") -> Transcript:
    """A transcript from entries; its text is built naively unless given."""
    if text is None:
        lines = [f"# Session: {title}", "Directory: /home/dev/src/webapp", ""]
        for e in entries:
            if e.kind == "tool":
                lines.append(f"[{e.role} · tool {e.tool}] {e.input}\n  → {e.output}")
            else:
                lines.append(f"[{e.role}] {e.text}")
        text = "\n".join(lines)
    return Transcript(session=session(title), entries=tuple(entries), text=text, hash="sha256:test")


@pytest.fixture
def work_transcript() -> Transcript:
    """Real work, and a fake key left in its text (as if a scrub had been missed)."""
    entries = [
        Entry("user", "text", text="The deploy fails with ERR_PNPM_NO_LOCKFILE. Fix scripts/deploy.sh"),
        Entry("assistant", "tool", tool="read", input={"filePath": "scripts/deploy.sh"}, output="npm ci",
              status="completed"),
        Entry("assistant", "text", text=f"Fixed. Also found OPENAI_API_KEY={FAKE_KEY} in .env"),
    ]
    return make_transcript(entries)


@pytest.fixture
def hello_transcript() -> Transcript:
    return make_transcript(
        [Entry("user", "text", text="hi"), Entry("assistant", "text", text="Hello! How can I help you today?")],
        title="Greeting",
    )


def llm_settings(provider: str, base_url: str, **overrides: object) -> LLMSettings:
    """Settings for a test server: small timeout, no real waiting."""
    values: dict = {
        "provider": provider,
        "base_url": base_url,
        "model": "qwen3:8b" if provider == "openai" else "claude-haiku-4-5",
        "timeout_s": 2,
        "max_retries": 2,
    }
    values.update(overrides)
    return LLMSettings(**values)


class Sleeps(list):
    """An injected sleep that records instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def state_db(tmp_path) -> Iterator[StateDB]:
    db = StateDB(tmp_path / "state.db")
    yield db
    db.close()
