"""A scripted OpenAI-compatible chat server for driving real OpenCode offline.

OpenCode talks to it through ``@ai-sdk/openai-compatible``.  Every
``POST /v1/chat/completions`` is answered with server-sent events built from a
*script*: a list of steps shaped like the steps in ``scenarios.json``::

    {"text": "...", "reasoning": "...", "tools": [{"name": "read", "args": {...}}]}

A step with tools ends with ``finish_reason: tool_calls`` (OpenCode runs the tools and
asks again); a step without tools ends the turn with ``stop``.

Matching a request to a script:

* A key matches a user message that contains it (after undoing the quotes
  ``opencode run`` puts around the prompt); a key equal to the whole prompt beats a
  mere substring, then the longest key wins.  See :meth:`ScriptedModel._match`.
* A request without ``tools`` is a title request and gets the script's title.
* If the *last* user message matches a script, that script answers and the step is the
  number of assistant messages after that user message.  This is how a continued
  session (``opencode run --session``) starts the script registered for the follow-up
  prompt: OpenCode sends the whole history, one assistant message per model step.
* Otherwise the script matching the *first* user message answers and the step is the
  number of assistant messages in the whole conversation, so one flat script can also
  span a session and its follow-ups.
* When no script matches or the script is used up, the answer is a plain "Done.".
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import traceback
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

Step = dict[str, Any]
T = TypeVar("T")

MODEL_ID = "fake-model"
DEFAULT_TITLE = "Scripted session"
DONE_TEXT = "Done."


def substitute(value: T, root: str | Path) -> T:
    """Return ``value`` with ``{root}`` replaced by ``root`` in every string inside it."""
    if isinstance(value, str):
        return value.replace("{root}", str(root))  # type: ignore[return-value]
    if isinstance(value, Mapping):
        return {k: substitute(v, root) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [substitute(v, root) for v in value]  # type: ignore[return-value]
    return value


def split_turns(steps: Sequence[Mapping[str, Any]]) -> list[list[Step]]:
    """Split a flat step list into turns; a step without tools closes a turn."""
    turns: list[list[Step]] = [[]]
    for step in steps:
        turns[-1].append(dict(step))
        if not step.get("tools"):
            turns.append([])
    return [turn for turn in turns if turn]


@dataclass
class Script:
    """The scripted answers for one prompt."""

    key: str
    steps: list[Step]
    title: str = DEFAULT_TITLE


@dataclass(frozen=True)
class Served:
    """What the server answered to one request (for debugging and assertions)."""

    kind: str  # "title", "step", "done" or "unmatched"
    key: str | None
    step: int | None


def message_text(message: Mapping[str, Any]) -> str:
    """The text of an OpenAI chat message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def unquote_prompt(text: str) -> str:
    """Undo the quoting ``opencode run`` applies to a message argument with spaces.

    ``opencode run "fix it"`` stores the prompt as ``"fix it"`` (inner ``"`` escaped).
    """
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] == '"':
        return stripped[1:-1].replace('\\"', '"')
    return text


def _key_pattern(key: str) -> re.Pattern[str]:
    """A regex finding ``key`` in a prompt, with ASCII word boundaries at word-like ends."""
    head = r"(?<![A-Za-z0-9_])" if key[:1].isascii() and key[:1].isalnum() else ""
    tail = r"(?![A-Za-z0-9_])" if key[-1:].isascii() and key[-1:].isalnum() else ""
    return re.compile(head + re.escape(key) + tail)


class ScriptedModel:
    """A threaded scripted chat-completions server on 127.0.0.1 (a context manager)."""

    def __init__(self, host: str = "127.0.0.1", default_title: str = DEFAULT_TITLE) -> None:
        self.host = host
        self.default_title = default_title
        self.requests: list[dict[str, Any]] = []
        self.served: list[Served] = []
        self.errors: list[str] = []  # tracebacks of requests the server failed to answer
        self._scripts: list[Script] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripts ---------------------------------------------------------------------

    def add_session(
        self, key: str, steps: Sequence[Mapping[str, Any]], title: str | None = None
    ) -> None:
        """Register ``steps`` for requests whose user prompt contains ``key``."""
        if not key:
            raise ValueError("script key must not be empty")
        with self._lock:
            self._scripts.append(Script(key, [dict(s) for s in steps], title or self.default_title))

    def add_scenario(self, scenario: Mapping[str, Any], root: str | Path) -> None:
        """Register a ``scenarios.json`` entry: its prompt, follow-ups and subagents.

        The flat ``steps`` list is split into turns (see :func:`split_turns`): the first
        turn answers ``prompt``, the next ones answer ``followups[i].prompt``.
        """
        scenario = substitute(dict(scenario), root)
        title = scenario.get("title")
        turns = split_turns(scenario.get("steps", []))
        prompts = [scenario["prompt"]] + [f["prompt"] for f in scenario.get("followups", [])]
        if len(turns) != len(prompts):
            raise ValueError(
                f"scenario {scenario.get('id')!r}: {len(turns)} turns for {len(prompts)} prompts"
            )
        for prompt, turn in zip(prompts, turns, strict=True):
            self.add_session(prompt, turn, title)
        for child in scenario.get("children", []):
            self.add_session(child["prompt"], child["steps"], child.get("title", title))

    # -- server lifecycle ------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound TCP port (the server must be started)."""
        if self._server is None:
            raise RuntimeError("ScriptedModel is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ScriptedModel:
        """Bind to a free port and serve in a daemon thread."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer((self.host, 0), _Handler)
        server.daemon_threads = False  # server_close() joins handler threads
        server.model = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="scripted-model", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- inspection helpers ------------------------------------------------------------

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The received requests that offered tools (i.e. not title requests)."""
        with self._lock:
            return [r for r in self.requests if r.get("tools")]

    def tool_results(self) -> list[str]:
        """Contents of every ``tool`` message the model has been sent, in order."""
        seen: list[str] = []
        for request in self.chat_requests:
            for message in request.get("messages", []):
                if message.get("role") == "tool":
                    text = message_text(message)
                    if text not in seen:
                        seen.append(text)
        return seen

    # -- answering -------------------------------------------------------------------

    def answer(self, body: Mapping[str, Any]) -> tuple[Served, Step]:
        """Choose the step (or title/"Done.") that answers one request body."""
        messages = [m for m in body.get("messages", []) if isinstance(m, Mapping)]
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        first = message_text(messages[users[0]]) if users else ""
        last = message_text(messages[users[-1]]) if users else ""
        with self._lock:
            self.requests.append(dict(body))
            if not body.get("tools"):
                # [system, "Generate a title for this conversation:", <prompt>]
                script = self._match(last) or self._match(first)
                served = Served("title", script.key if script else None, None)
                step: Step = {"text": script.title if script else self.default_title}
                self.served.append(served)
                return served, step
            script, start = self._match(last), users[-1] if users else 0
            if script is None:
                script, start = self._match(first), 0
            if script is None:
                served, step = Served("unmatched", None, None), {"text": DONE_TEXT}
            else:
                index = sum(1 for m in messages[start:] if m.get("role") == "assistant")
                if index < len(script.steps):
                    served, step = Served("step", script.key, index), script.steps[index]
                else:
                    served, step = Served("done", script.key, index), {"text": DONE_TEXT}
            self.served.append(served)
            return served, step

    def _match(self, text: str) -> Script | None:
        """The script whose key best matches ``text``, or None.

        A key equal to the whole prompt wins; otherwise the longest key contained in
        it (the latest added wins ties).  A key that starts or ends with an ASCII letter
        or digit must do so at a word boundary, so the key "hi" does not match "this".
        """
        prompt = unquote_prompt(text)
        best: Script | None = None
        best_score = (-1, -1)
        for script in self._scripts:
            if not _key_pattern(script.key).search(prompt):
                continue
            score = (int(script.key.strip() == prompt.strip()), len(script.key))
            if score >= best_score:
                best, best_score = script, score
        return best

    def events(self, body: Mapping[str, Any], step: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The ``chat.completion.chunk`` objects streamed for one step."""
        completion_id = f"chatcmpl-{next(self._ids)}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", MODEL_ID),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        yield chunk({"role": "assistant", "content": ""})
        if step.get("reasoning"):
            yield chunk({"reasoning_content": step["reasoning"]})
        if step.get("text"):
            yield chunk({"content": step["text"]})
        tools = list(step.get("tools") or [])
        for index, tool in enumerate(tools):
            call = {
                "index": index,
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": tool["name"], "arguments": json.dumps(tool.get("args", {}))},
            }
            yield chunk({"tool_calls": [call]})
        final = chunk({}, "tool_calls" if tools else "stop")
        prompt_tokens = max(1, len(json.dumps(body.get("messages", []))) // 4)
        completion_tokens = max(1, len(json.dumps(step)) // 4)
        final["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        yield final


class _Handler(BaseHTTPRequestHandler):
    """HTTP glue: parse the request, stream the scripted answer as SSE."""

    server_version = "ScriptedModel/1"
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        model: ScriptedModel = self.server.model  # type: ignore[attr-defined]
        try:
            body = json.loads(self._read_body() or b"{}")
        except ValueError:
            self._plain(400, "invalid JSON body")
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._plain(404, f"no route for POST {self.path}")
            return
        try:
            _served, step = model.answer(body)
            events = list(model.events(body, step))
        except Exception:  # a broken script must show up in the test, not hang OpenCode
            model.errors.append(traceback.format_exc())
            self._plain(500, "scripted model error (see ScriptedModel.errors)")
            return
        if body.get("stream") is False:
            self._json(200, _collapse(events))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
        else:
            self._plain(404, f"no route for GET {self.path}")

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _plain(self, status: int, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


def _collapse(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Fold streamed chunks into one non-streaming ``chat.completion`` response."""
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    tool_calls: list[dict[str, Any]] = []
    finish = "stop"
    usage: Any = None
    for event in events:
        choice = event["choices"][0]
        delta = choice["delta"]
        message["content"] += delta.get("content") or ""
        if delta.get("reasoning_content"):
            message["reasoning_content"] = delta["reasoning_content"]
        tool_calls.extend(
            {k: v for k, v in call.items() if k != "index"} for call in delta.get("tool_calls", [])
        )
        finish = choice["finish_reason"] or finish
        usage = event.get("usage", usage)
    if tool_calls:
        message["tool_calls"] = tool_calls
    first = events[0]
    return {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }
