"""The model-backed distiller: one shared httpx client, bounded retries, the budget.

Which failures are worth another try (_Retry), which stop the pass (StopPass: the
server's state, not the session's), and which fail just this session (DistillError) is
decided in `_attempt`; tenacity only repeats.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, NoReturn, Protocol

import httpx
import structlog
import tenacity

from daemon.capture.distill.base import Distilled, DistillError, MalformedAnswer, StopPass, Transcript
from daemon.capture.distill.budget import Budget, Reservation, estimate_tokens
from daemon.capture.distill.evidence import gather, report
from daemon.capture.distill.grounding import grounded_note
from daemon.capture.distill.junk import obviously_junk
from daemon.capture.distill.output import read_note
from daemon.capture.distill.prompt import PROMPT_VERSION, SYSTEM_PROMPT, user_message
from daemon.capture.distill.turns import split_turns
from daemon.capture.lifecycle import ServerFaults
from daemon.scrub import redact

log = structlog.get_logger(__name__)

RETRY_AFTER_CAP_S = 60.0  # a server asking for a longer pause is retried next pass instead
MAX_ANSWER_BYTES = 16 * 1024 * 1024  # a note is a few kB; more is a server streaming garbage
BACKOFF = tenacity.wait_exponential_jitter(initial=1, max=30, jitter=1)
USER_AGENT = "memoryd"


class Dialect(Protocol):
    """One wire format: where to post, what to send, how to read the answer (pure)."""

    provider: str

    def endpoint(self, base_url: str) -> str: ...

    def key_env(self, base_url: str) -> str: ...

    def headers(self, api_key: str) -> dict[str, str]: ...

    def body(self, llm: Any, system: str, user: str) -> dict[str, Any]: ...

    def usage(self, data: Any) -> int | None: ...

    def text(self, data: Any) -> str: ...


class _Retry(Exception):
    """A failure worth another attempt; `retry_after` is the server's requested pause."""

    def __init__(
        self, message: str, retry_after: float | None = None, unreachable: bool = False, hung: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable  # no connection at all: the server, not the session
        self.hung = hung  # no answer within llm.timeout_s


def make_client(llm: Any) -> httpx.Client:
    """Return the daemon's one HTTP client for LLMSettings `llm`, pooled to its concurrency."""
    return httpx.Client(
        timeout=httpx.Timeout(llm.timeout_s, connect=min(llm.timeout_s, 10.0)),
        limits=httpx.Limits(max_connections=llm.concurrency, max_keepalive_connections=llm.concurrency),
        headers={"user-agent": USER_AGENT},
    )


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Return the pause a Retry-After header asks for, in seconds (delta or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT; a zone-less one is read as such
        return None
    return max(0.0, when.timestamp() - now)


def _server_message(response: httpx.Response) -> str:
    """Return the error text a server put in its body, short."""
    try:
        data = response.json()
    except ValueError:
        data = None
    message: Any = None
    if isinstance(data, dict):
        error = data.get("error", data.get("message"))
        message = error.get("message") if isinstance(error, dict) else error
    if not message:
        message = response.text
    return " ".join(str(message).split())[:200]


class ModelDistiller:
    """Distills a transcript with one model server; safe to call from `concurrency` threads."""

    def __init__(
        self,
        llm: Any,
        dialect: Dialect,
        *,
        api_key: str,
        key_env: str,
        client: httpx.Client,
        budget: Budget | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        faults: ServerFaults | None = None,
    ) -> None:
        self.llm = llm
        self.dialect = dialect
        self.name = f"{dialect.provider}:{llm.model}"
        self.prompt_version = PROMPT_VERSION
        self.concurrency = llm.concurrency
        self.url = dialect.endpoint(llm.base_url)
        self._key = api_key
        self._key_env = key_env
        self._client = client
        self._budget = budget
        self._sleep = sleep
        self._clock = clock
        self._headers = httpx.Headers({"content-type": "application/json", **dialect.headers(api_key)})
        # Case-insensitive merge: a configured "Anthropic-Version" replaces the default.
        self._headers.update(llm.extra_headers)
        self._slots = threading.BoundedSemaphore(llm.concurrency)
        self.faults = faults or ServerFaults()  # the Capturer's: its passes begin and end runs of failures
        self._cancelled = False

    # -- the Distiller interface ------------------------------------------------

    def distill(self, transcript: Transcript) -> Distilled:
        """Return the model's note for `transcript`, or junk; raise DistillError/StopPass."""
        if obviously_junk(transcript):
            return Distilled(junk=True, distiller=self.name, prompt_version=self.prompt_version)
        self._require_key()
        evidence = gather(split_turns(transcript.entries))  # what the tools recorded: in the prompt, and the check
        user = user_message(transcript, report(evidence))
        body = self.dialect.body(self.llm, SYSTEM_PROMPT, user)
        # Reserve what the call may cost at most: its input plus a full answer.
        estimate = estimate_tokens(SYSTEM_PROMPT + user) + self.llm.max_output_tokens
        with self._reserve(estimate) as reservation, self._slots:
            response = self._post(body, transcript.hash)
            data, tokens = self._settle(response, SYSTEM_PROMPT + user, reservation)
        try:
            text = self.dialect.text(data)
        except ValueError as exc:
            raise DistillError(self._clean(f"model server {self.url}: {exc}")) from None
        note = read_note(text, self.url)
        body, summary = note.body, note.summary
        if not note.junk:
            body, summary, dropped, flagged = grounded_note(note.body, transcript.text, transcript.session.directory,
                                                            evidence)
            if dropped:
                log.info("note.ungrounded_dropped", session_id=transcript.session.id, count=len(dropped), items=dropped[:10])
            if flagged:
                log.info("note.outcome_flagged", session_id=transcript.session.id, check=flagged)
        return Distilled(
            junk=note.junk,
            body=body,
            summary=summary,
            distiller=self.name,
            prompt_version=self.prompt_version,
            calls=1,
            tokens=tokens,
        )

    def close(self) -> None:
        """Close the HTTP client and its connections (and the budget's own store, if any)."""
        self._client.close()
        if self._budget is not None:
            self._budget.close()

    def cancel(self) -> None:
        """From another thread (shutdown): no new request, and close the connections."""
        self._cancelled = True
        self._client.close()

    # -- steps --------------------------------------------------------------------

    def _require_key(self) -> None:
        if self._key_env and not self._key:
            raise StopPass(
                f"model server {self.url} needs an API key, but ${self._key_env} is not set in "
                "memoryd's environment (llm.api_key_env; for the service, set it in the unit's "
                "Environment= or EnvironmentFile=)",
                reason="auth",
            )

    def _reserve(self, tokens: int) -> AbstractContextManager[Reservation | None]:
        return nullcontext() if self._budget is None else self._budget.reserve(tokens)

    def _settle(self, response: httpx.Response, sent: str, reservation: Reservation | None) -> tuple[Any, int]:
        """Record the answered call in the budget, then return (decoded JSON, tokens used)."""
        try:
            data: Any = response.json()
        except ValueError:
            data = None
        tokens = self.dialect.usage(data) if data is not None else None
        if tokens is None:
            tokens = estimate_tokens(sent + response.text)
        # An answered call is spent whatever its content: record before judging it.
        if reservation is not None:
            reservation.record(1, tokens)
        if data is None:
            excerpt = redact(" ".join(response.text.split())[:80])
            raise DistillError(self._clean(f"model server {self.url} returned malformed JSON ({excerpt!r})"))
        return data, tokens

    def _post(self, body: dict[str, Any], key: str) -> httpx.Response:
        """POST `body`, retrying what is worth retrying; return the 2xx response."""
        attempts = self.llm.max_retries + 1
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(attempts),
            retry=tenacity.retry_if_exception_type(_Retry),
            wait=self._wait,
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(self._attempt, body, key)
        except _Retry as exc:
            # Rare: fewer attempts per call (llm.max_retries) than open the breaker. Still the
            # server's state, not the session's: retried later, never given up on.
            message = self._clean(f"model server {self.url}: {exc}; gave up after {attempts} attempts")
            if exc.unreachable:
                # A stopped server is no session's fault: hold them all, untouched.
                raise StopPass(message + "; is it running? Sessions are held", reason="unavailable") from None
            raise DistillError(message, transient=True) from None

    def _server_failed(self, exc: _Retry, key: str) -> _Retry:
        """Count a server failure; stop the pass when the breaker opens, else retry."""
        if not self.faults.failed(key, hung=exc.hung):
            return exc
        hint = "is it running? " if exc.unreachable else ("is it hanging? " if exc.hung else "")
        raise StopPass(
            self._clean(
                f"model server {self.url} {self.faults.describe_stop(exc.hung)} (last: {exc}); "
                f"{hint}the pass stopped and its sessions are held until the server answers again"
            ),
            reason="unavailable",
        ) from None

    def _attempt(self, body: dict[str, Any], key: str) -> httpx.Response:
        """One request; sort any failure into retry, stop-the-pass, or fail-this-session."""
        response = self._request(body, key)
        status = response.status_code
        if (status >= 500 and status != 503) or status == 408:
            raise self._server_failed(_Retry(f"HTTP {status} ({redact(_server_message(response))})"), key)
        if status < 300:
            self._check_answer(response, key)
        if status != 503:
            self.faults.answered()  # the server answered: whatever it said, it is up
        if status < 300:
            return response
        self._refused(response, key)

    def _request(self, body: dict[str, Any], key: str) -> httpx.Response:
        """Send one request; a transport failure counts against the server."""
        if self._cancelled:
            raise StopPass("memoryd is stopping: model calls cancelled", reason="shutdown")
        try:
            return self._send(body, key)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._server_failed(_Retry(f"cannot connect ({type(exc).__name__}: {exc})", unreachable=True), key) from exc
        except httpx.TimeoutException as exc:
            hung = _Retry(f"no answer within {self.llm.timeout_s:g} s (llm.timeout_s)", hung=True)
            raise self._server_failed(hung, key) from exc
        except httpx.TransportError as exc:
            raise self._server_failed(_Retry(f"cannot reach the server ({type(exc).__name__}: {exc})"), key) from exc
        except RuntimeError as exc:  # the client was closed under us: shutdown
            if not self._cancelled:
                raise
            raise StopPass("memoryd is stopping: model calls cancelled", reason="shutdown") from exc

    def _check_answer(self, response: httpx.Response, key: str) -> None:
        """A 2xx that is not JSON, or not an answer at all, is the server's fault, not the session's."""
        status = response.status_code
        try:
            data = response.json()
        except ValueError:
            excerpt = redact(" ".join(response.text.split())[:80])
            raise self._server_failed(_Retry(f"HTTP {status} with malformed JSON ({excerpt!r})"), key) from None
        if (wrong := self._not_an_answer(data)) is not None:
            raise self._server_failed(_Retry(f"HTTP {status} with JSON that is no answer ({wrong})"), key)

    def _refused(self, response: httpx.Response, key: str) -> NoReturn:
        """Raise what a 4xx or a 503 means: stop the pass, retry, or fail this session."""
        status = response.status_code
        detail = redact(_server_message(response))
        if status in (401, 403):
            raise StopPass(self._auth_message(status, detail), reason="auth")
        if status in (429, 503):
            wait = parse_retry_after(response.headers.get("retry-after"), self._clock())
            if wait is not None and wait > RETRY_AFTER_CAP_S:
                # Rate limits and overload are the server's state, not this session's: stop
                # the pass (a StopPass is a retryable DistillError) and leave sessions pending.
                raise StopPass(
                    self._clean(
                        f"model server {self.url} answered HTTP {status} and asks to wait {wait:.0f} s, "
                        f"more than {RETRY_AFTER_CAP_S:.0f} s; trying again next pass"
                    ),
                    reason="rate_limit",
                    wait_s=wait,
                )
            retry = _Retry(f"HTTP {status} ({detail})", retry_after=wait)
            raise self._server_failed(retry, key) if status == 503 else retry
        if status == 404:
            # Wrong base_url or an unknown model: every session would fail the same way.
            raise StopPass(
                self._clean(
                    f"model server {self.url} answered HTTP 404 ({detail}): check llm.base_url "
                    f"(Ollama: http://127.0.0.1:11434/v1) and that llm.model = {self.llm.model!r} exists there"
                ),
                reason="config",
            )
        # Other 4xx (context too long, bad parameter): this request will not get better.
        raise DistillError(self._clean(f"model server {self.url} answered HTTP {status} ({detail})"), retryable=False)

    def _send(self, body: dict[str, Any], key: str) -> httpx.Response:
        """POST `body` and read the whole answer.

        httpx's timeout bounds each read, so a server that trickles its answer a few bytes
        at a time would hold the pass forever; the body must also be in within
        llm.timeout_s of the headers, or it counts as no answer (a hang). Past
        MAX_ANSWER_BYTES it is the server's failure (and memory is not spent on it)."""
        with self._client.stream("POST", self.url, json=body, headers=self._headers) as streamed:
            deadline = time.monotonic() + self.llm.timeout_s
            chunks, size = [], 0
            for chunk in streamed.iter_raw():
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    too_big = _Retry(f"HTTP {streamed.status_code} with an answer over {MAX_ANSWER_BYTES // 1024} KiB")
                    raise self._server_failed(too_big, key)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer trickled in for longer than llm.timeout_s",
                                            request=streamed.request)
        # The raw bytes, decoded once (Content-Encoding) as a plain response would be.
        return httpx.Response(streamed.status_code, headers=streamed.headers, content=b"".join(chunks),
                              request=streamed.request)

    def _not_an_answer(self, data: Any) -> str | None:
        """What makes `data` no answer of this API at all, or None (a refusal or an empty
        note is an answer, judged once the call is settled)."""
        try:
            self.dialect.text(data)
        except MalformedAnswer as exc:
            return str(exc)
        except ValueError:
            return None
        return None

    def _auth_message(self, status: int, detail: str) -> str:
        if self._key_env:
            text = (
                f"model server {self.url} rejected the API key from ${self._key_env} (HTTP {status}: {detail}); "
                "check the key, or llm.api_key_env"
            )
        else:
            text = (
                f"model server {self.url} wants an API key (HTTP {status}: {detail}); set llm.api_key_env "
                "to the name of the environment variable that holds it"
            )
        return self._clean(text)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retry) and exc.retry_after is not None:
            return exc.retry_after
        if isinstance(exc, _Retry) and exc.hung:
            return 0.0  # the unanswered request already waited a whole llm.timeout_s
        return BACKOFF(state)

    def _log_retry(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "model call failed, retrying",
            url=self.url,
            attempt=state.attempt_number,
            wait_s=round(wait, 2),
            error=self._clean(str(exc)),
        )

    def _clean(self, text: str) -> str:
        """Return `text` with secrets redacted, this server's key included whatever its shape."""
        # Short keys ("x" for servers that want any key) would mangle the text, and are not secrets.
        if len(self._key) >= 8:
            text = text.replace(self._key, "[REDACTED:api_key]")
        return redact(text)

