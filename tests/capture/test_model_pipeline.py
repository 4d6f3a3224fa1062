"""Model-backed capture end to end: the real fixture database, a real HTTP model server on
127.0.0.1, the pipeline and the `memoryd distill` / `memoryd status` commands.

What the server received is the evidence: which sessions cost a call, what left the
machine, how many requests a bad key or a spent budget let through.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import frontmatter
import pytest
from click.testing import CliRunner

from daemon.capture.distill.base import SECTIONS
from daemon.capture.distill.prompt import PROMPT_VERSION
from daemon.capture.pipeline import PassOptions, open_capturer
from daemon.cli.main import cli
from daemon.config import Config, load_settings
from daemon.state import StateDB
from daemon.status import format_status, gather
from tests.capture.distill.conftest import ModelServer, Reply, anthropic_reply, openai_reply

MODEL = "qwen3:8b"
MARK = "Written by the test model"
MODEL_NOTE = f"""## What Was Worked On

- {MARK}: traced the failure to its cause and changed the code.

## Decisions & Rationale

- Kept the change small, because the rest of the code path was already right.
"""
DAY = 86_400.0


class _Recorded(list):
    """The server's request log; also remembers, per handler thread, its latest request."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def append(self, item) -> None:  # noqa: ANN001 - a tests.capture.distill.conftest.Seen
        self.local.last = item
        super().append(item)


class RoutedServer(ModelServer):
    """The distill tests' model server, able to answer by request: `route(body) -> Reply | None`."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = _Recorded()
        self.route = None

    def _next(self) -> Reply:
        if self.route is not None:
            reply = self.route(self.requests.local.last.body)
            if reply is not None:
                return reply
        return super()._next()

    def asked(self, directory: str) -> int:
        """How many requests carried the transcript of the session in `directory`."""
        return sum(f"Directory: {directory}\n" in user_turn(seen.body) for seen in self.requests)


def user_turn(body: dict) -> str:
    return body["messages"][-1]["content"]


@pytest.fixture
def model() -> Iterator[RoutedServer]:
    """An OpenAI-style model server answering every request with MODEL_NOTE."""
    srv = RoutedServer()
    srv.default = openai_reply(MODEL_NOTE, usage={"total_tokens": 120})
    srv.start()
    yield srv
    srv.stop()


def use_model(monkeypatch, base_url: str, provider: str = "openai", **llm) -> None:
    """Configure memoryd through the environment, as a user would (CLI and load_settings)."""
    values = {"provider": provider, "base_url": base_url, "model": MODEL, "max_retries": 0, "timeout_s": 5, **llm}
    for key, value in values.items():
        monkeypatch.setenv(f"MEMORYD_LLM__{key.upper()}", str(value))


def memoryd(*args: str):
    return CliRunner().invoke(cli, list(args))


def distill(*args: str):
    return memoryd("distill", "--settle", "0", *args)


def status_text(clock=time.time) -> str:
    settings, paths = load_settings()
    return format_status(gather(Config(settings, paths), clock))


def capture_at(clock, **capture):
    """open_capturer() with the environment's settings, settle 0, and an injected clock."""
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    for key, value in capture.items():
        setattr(settings.capture, key, value)
    return open_capturer(Config(settings, paths), clock)


def notes_in(root: Path) -> dict[str, Path]:
    """session id → note file, for every session note under `root`."""
    notes = (p for p in sorted(root.rglob("*.md")) if p.parent.name == "sessions" and p.name != "index.md")
    return {frontmatter.load(p)["session_id"]: p for p in notes}


def records(home) -> dict:
    state = StateDB(home.state_dir / "state.db")
    try:
        return {r.session_id: r for r in state.records()}
    finally:
        state.close()


def roots(fixture_sessions) -> list[dict]:
    return [s for s in fixture_sessions.values() if not s["junk"]]


def tomorrow() -> float:
    return time.time() + DAY


# -- 1, 2: notes, identity, junk, idempotency, secrets ------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_distill_writes_the_models_notes_once(home, fixture_db, fixture_sessions, model, monkeypatch, provider):
    key = "test-key-Qm4Rt7Vx2Zb9"
    if provider == "anthropic":
        model.default = anthropic_reply(MODEL_NOTE, usage={"input_tokens": 90, "output_tokens": 30})
        use_model(monkeypatch, model.url, "anthropic", api_key_env="TEST_MODEL_KEY")
    else:
        use_model(monkeypatch, model.url + "/v1", api_key_env="TEST_MODEL_KEY")
    monkeypatch.setenv("TEST_MODEL_KEY", key)

    result = distill()
    assert result.exit_code == 0, result.output
    assert "6 distilled, 0 unchanged, 1 junk, 0 settling, 0 failed" in result.output
    assert "Model: 6 call(s), 720 token(s)." in result.output

    # One request per session with work; the greeting is recognised without a model.
    greeting = fixture_sessions["junk-hello"]
    assert len(model.requests) == 6 and model.asked(greeting["project"]) == 0
    assert all(model.asked(s["project"]) == 1 for s in roots(fixture_sessions) if s["project"] != greeting["project"])
    path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    assert {seen.path for seen in model.requests} == {path}
    assert {seen.body["model"] for seen in model.requests} == {MODEL}

    notes = notes_in(home.global_root)
    assert set(notes) == {s["session"] for s in roots(fixture_sessions)}
    assert records(home)[greeting["session"]].status == "junk"
    for scenario in roots(fixture_sessions):
        post = frontmatter.load(notes[scenario["session"]])
        assert post["distiller"] == f"{provider}:{MODEL}" and post["prompt_version"] == PROMPT_VERSION
        assert post["kind"] == "session" and post["project"] == scenario["project"]
        assert {"title", "description", "started", "updated", "tags", "id"} <= set(post.metadata)
        assert post["description"].startswith(MARK)
        provenance, body = post.content.split("\n\n", 1)
        assert provenance.startswith(f"> Source: OpenCode session `{scenario['session']}` · started ")
        assert provenance.endswith(f" · project `{scenario['project']}`")
        assert body.strip() == MODEL_NOTE.strip()  # the model's note, as it wrote it
        assert [line[3:] for line in body.splitlines() if line.startswith("## ")] == [SECTIONS[0], SECTIONS[2]]

    # Nothing changed: a second run costs nothing.
    again = distill()
    assert again.exit_code == 0 and "0 distilled, 7 unchanged" in again.output
    assert len(model.requests) == 6

    # Neither the API key nor any secret of the sessions went anywhere but the header.
    assert {seen.headers.get("authorization", seen.headers.get("x-api-key")) for seen in model.requests} in (
        {f"Bearer {key}"},
        {key},
    )
    written = [p for p in home.root.rglob("*") if p.is_file() and "opencode.db" not in p.name]
    assert any(p.suffix == ".log" for p in written)
    for p in written:
        assert key.encode() not in p.read_bytes(), f"the API key leaked into {p}"


def test_secrets_never_reach_the_model_nor_any_file(home, fixture_db, fixture_sessions, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1")
    scenario = fixture_sessions["secrets"]
    assert distill().exit_code == 0
    (sent,) = [seen for seen in model.requests if f"Directory: {scenario['project']}\n" in user_turn(seen.body)]
    assert "client.py" in user_turn(sent.body) and "[REDACTED" in user_turn(sent.body)
    forbidden = [f for s in fixture_sessions.values() for f in s["forbidden"]]
    assert "AKIAIOSFODNN7EXAMPLE" in forbidden
    for seen in model.requests:
        raw = json.dumps(seen.body)
        for secret in forbidden:
            assert secret not in raw, f"{secret} was sent to the model"
    for p in home.root.rglob("*"):
        if p.is_file() and "opencode.db" not in p.name:
            data = p.read_bytes()
            for secret in forbidden:
                assert secret.encode() not in data, f"{secret} leaked into {p}"


# -- 3: the daily budget ----------------------------------------------------------------------
# One call at a time here: these tests count calls per day exactly. (With two threads the
# Budget can refuse a call it still has room for: a settled call is briefly counted both as
# spent and as in flight. Safe, never over budget, but not exact.)


def test_spent_budget_leaves_sessions_pending_until_tomorrow(home, fixture_db, fixture_sessions, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1", daily_call_budget=3)
    result = distill()
    assert result.exit_code == 0, result.output
    assert "3 distilled, 0 unchanged, 1 junk, 0 settling, 0 failed, 3 pending" in result.output
    assert "daily model budget is spent" in result.output and "tomorrow" in result.output
    assert len(model.requests) == 3
    notes = notes_in(home.global_root)
    assert len(notes) == 3  # no extractive stand-ins
    waiting = [r for r in records(home).values() if r.status == "held"]
    assert len(waiting) == 3 and all("budget" in r.last_error for r in waiting)
    assert not [r for r in records(home).values() if r.status == "failed"]

    shown = memoryd("status").output
    assert "3 held, 0 to retry, 0 failed" in shown
    assert "3/3 calls" in shown and "budget spent" in shown

    # Same day, again: the budget still holds, no request goes out.
    assert "3 pending" in distill().output and len(model.requests) == 3

    # Tomorrow the rest is done, and nothing is done twice.
    capture = capture_at(tomorrow)
    try:
        report = capture.run_pass()
    finally:
        capture.close()
    assert sorted(report.distilled) == sorted(r.session_id for r in waiting) and not report.pending
    assert len(model.requests) == 6
    assert set(notes_in(home.global_root)) == {s["session"] for s in roots(fixture_sessions)}
    assert "6 distilled, 1 junk, 0 settling, 0 held, 0 to retry, 0 failed" in status_text(tomorrow)


def test_budget_fallback_writes_extractive_notes_then_upgrades_them(home, fixture_db, fixture_sessions, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1", daily_call_budget=3, fallback="extractive")
    result = distill()
    assert result.exit_code == 0, result.output
    assert "6 distilled, 0 unchanged, 1 junk, 0 settling, 0 failed" in result.output
    assert "budget is spent" in result.output and "3 session(s) got an extractive note" in result.output
    assert len(model.requests) == 3

    notes = notes_in(home.global_root)
    assert set(notes) == {s["session"] for s in roots(fixture_sessions)}
    made_by = {sid: frontmatter.load(p)["distiller"] for sid, p in notes.items()}
    stand_ins = sorted(sid for sid, who in made_by.items() if who == "extractive")
    assert len(stand_ins) == 3 and sorted(made_by.values()).count(f"openai:{MODEL}") == 3
    recs = records(home)
    assert sorted(sid for sid, r in recs.items() if r.needs_upgrade) == stand_ins
    assert "3 awaiting a model upgrade" in memoryd("status").output

    # Same day: the stand-ins are current; nothing is called, nothing rewritten.
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in notes.values()}
    again = distill()
    assert "0 distilled" in again.output and len(model.requests) == 3
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in notes.values()} == before

    # Tomorrow the model redoes them, in the same files.
    capture = capture_at(tomorrow)
    try:
        report = capture.run_pass()
    finally:
        capture.close()
    assert sorted(report.distilled) == stand_ins and len(model.requests) == 6
    assert notes_in(home.global_root) == notes
    for sid in stand_ins:
        assert frontmatter.load(notes[sid])["distiller"] == f"openai:{MODEL}"
        assert MARK in notes[sid].read_text()
    assert not [r for r in records(home).values() if r.needs_upgrade]
    assert "awaiting a model upgrade" not in status_text(tomorrow)


def test_an_upgrade_the_model_cannot_do_stops_costing_calls(home, fixture_db, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1", daily_call_budget=5, fallback="extractive", concurrency=1)
    assert distill().exit_code == 0
    (stand_in,) = [r for r in records(home).values() if r.needs_upgrade]
    note = Path(stand_in.note_path)
    kept = note.read_bytes()

    def route(body: dict) -> Reply | None:
        if f"Directory: {stand_in.project_dir}\n" in user_turn(body):
            return Reply(400, {"error": {"message": "maximum context length exceeded"}})
        return None

    model.route = route
    capture = capture_at(tomorrow)
    try:
        first = capture.run_pass()
        assert [sid for sid, _ in first.failed] == [stand_in.session_id]
        asked = len(model.requests)
        for _ in range(2):  # later passes leave it alone until the session changes
            again = capture.run_pass()
            assert not again.failed and not again.distilled
        assert len(model.requests) == asked
    finally:
        capture.close()
    assert note.read_bytes() == kept  # its extractive note stays
    assert "maximum context length exceeded" in status_text(tomorrow)


# -- 4, 8 and the other stops: one clear message, sessions stay pending ---------------------------


def test_rejected_key_stops_the_pass_after_one_request(home, fixture_db, model, monkeypatch):
    model.default = Reply(401, {"error": {"message": "Incorrect API key provided"}})
    use_model(monkeypatch, model.url + "/v1", api_key_env="TEST_MODEL_KEY")
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-wrong-Hq3Lm8Np2Rs6Tv0Xz4")
    result = distill()
    assert len(model.requests) == 1
    assert result.exit_code == 1
    assert result.output.count("rejected the API key from $TEST_MODEL_KEY") == 1
    assert "sk-wrong" not in result.output
    assert "0 distilled" in result.output and "0 failed" in result.output
    assert "1 junk" in result.output  # a greeting needs no model, stop or no stop
    assert not notes_in(home.global_root)
    statuses = {r.status for r in records(home).values() if r.status != "junk"}
    assert statuses == {"held"}
    shown = memoryd("status").output
    assert "rejected the API key from $TEST_MODEL_KEY" in shown and "0 failed" in shown

    # The key is fixed: the next run does them all.
    model.default = openai_reply(MODEL_NOTE)
    fixed = distill()
    assert fixed.exit_code == 0 and "6 distilled" in fixed.output and "1 unchanged" in fixed.output


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_leaves_sessions_pending(home, fixture_db, monkeypatch):
    use_model(monkeypatch, f"http://127.0.0.1:{closed_port()}/v1")
    result = distill()
    assert result.exit_code == 1
    assert "not reachable" in result.output and "is it running" in result.output
    assert not notes_in(home.global_root)
    assert {r.status for r in records(home).values() if r.status != "junk"} == {"held"}
    shown = memoryd("status").output
    assert "cannot connect" in shown and "0 failed" in shown


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (Reply(404, {"error": {"message": "model 'qwen3:8b' not found"}}), ["check llm.base_url", "llm.model"]),
        (Reply(429, {"error": "slow down"}, headers={"retry-after": "3600"}), ["asks to wait", "run again later"]),
    ],
    ids=["config", "rate_limit"],
)
def test_other_stops_say_what_to_do(home, fixture_db, model, monkeypatch, reply, says):
    model.default = reply
    use_model(monkeypatch, model.url + "/v1")
    result = distill()
    assert len(model.requests) == 1 and result.exit_code == 1
    for words in says:
        assert words in result.output
    assert "0 failed" in result.output and not notes_in(home.global_root)


# -- 5: the circuit breaker -------------------------------------------------------------------


def test_a_session_the_server_always_fails_waits_with_backoff_and_never_blocks_the_others(
    home, fixture_db, fixture_sessions, model, monkeypatch
):
    """A 500 for one input is the server's state as far as memoryd can tell: the session
    is retried later, more and more rarely, never given up on; the others are not held."""
    from daemon.capture.pipeline import PassOptions

    broken = fixture_sessions["big-log"]
    healthy = [s for s in roots(fixture_sessions) if s is not broken]
    failing = {"on": True}

    def route(body: dict) -> Reply | None:
        if failing["on"] and f"Directory: {broken['project']}\n" in user_turn(body):
            return Reply(500, {"error": {"message": "CUDA out of memory"}})
        return None

    model.route = route
    use_model(monkeypatch, model.url + "/v1")
    now = [time.time()]
    capture = capture_at(lambda: now[0], max_failed_passes=2)
    daemon_pass = PassOptions(patient=True)
    try:
        first = capture.run_pass(daemon_pass)
        assert [sid for sid, _ in first.pending] == [broken["session"]] and len(first.distilled) == 5
        assert not first.stop_reason  # one input failing does not open the breaker
        asked = model.asked(broken["project"])
        assert capture.state.get(broken["session"]).status == "retry"
        capture.run_pass(daemon_pass)
        assert model.asked(broken["project"]) == asked  # not due yet: no call
        for _ in range(3):  # more passes than max_failed_passes: still never failed
            now[0] = capture.state.get(broken["session"]).retry_at / 1000 + 1
            again = capture.run_pass(daemon_pass)
            assert not again.failed and [sid for sid, _ in again.pending] == [broken["session"]]
        record = capture.state.get(broken["session"])
        assert record.status == "retry" and record.attempts == 4 and "HTTP 500" in record.last_error
        assert record.retry_at - int(now[0] * 1000) >= 8 * 60_000  # the pause grows each time
        shown = status_text()
        assert "retry " + broken["session"] in shown and "CUDA out of memory" in shown and "0 failed" in shown
        # Once the server copes, its note is written.
        failing["on"] = False
        now[0] = record.retry_at / 1000 + 1
        fixed = capture.run_pass(daemon_pass)
        assert fixed.distilled == [broken["session"]]
    finally:
        capture.close()
    assert set(notes_in(home.global_root)) == {s["session"] for s in roots(fixture_sessions)}
    assert all(model.asked(s["project"]) == 1 for s in healthy)


# -- 6: stale notes after a model change --------------------------------------------------------


def test_changing_the_model_marks_notes_stale_and_redistill_stale_redoes_only_them(
    home, fixture_db, fixture_sessions, model, monkeypatch
):
    use_model(monkeypatch, model.url + "/v1", model="model-a")
    assert distill().exit_code == 0
    assert len(model.requests) == 6
    notes = notes_in(home.global_root)
    assert "stale" not in memoryd("status").output

    monkeypatch.setenv("MEMORYD_LLM__MODEL", "model-b")
    assert "6 distilled" in memoryd("status").output and "6 stale" in memoryd("status").output
    plain = distill()
    # Notes wait for --redistill-stale; the junk verdict is judged again by the new
    # model at once (a greeting costs it no call).
    assert "0 distilled, 6 unchanged, 1 junk" in plain.output and len(model.requests) == 6

    redo = distill("--redistill-stale")
    assert redo.exit_code == 0, redo.output
    assert "6 distilled" in redo.output and "1 junk" not in redo.output
    assert len(model.requests) == 12
    assert {seen.body["model"] for seen in model.requests[6:]} == {"model-b"}
    assert notes_in(home.global_root) == notes  # rewritten in place
    assert {frontmatter.load(p)["distiller"] for p in notes.values()} == {"openai:model-b"}
    assert "stale" not in memoryd("status").output
    assert "0 distilled" in distill("--redistill-stale").output and len(model.requests) == 12


def test_a_new_prompt_version_marks_notes_stale(home, fixture_db, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1")
    assert distill().exit_code == 0 and len(model.requests) == 6
    # An upgrade ships a new prompt.
    monkeypatch.setattr("daemon.capture.distill.factory.PROMPT_VERSION", "v-next")
    monkeypatch.setattr("daemon.capture.distill.http.PROMPT_VERSION", "v-next")
    assert "6 stale" in memoryd("status").output
    assert "0 distilled" in distill().output and len(model.requests) == 6
    assert "6 distilled" in distill("--redistill-stale").output and len(model.requests) == 12
    assert {frontmatter.load(p)["prompt_version"] for p in notes_in(home.global_root).values()} == {"v-next"}
    assert "stale" not in memoryd("status").output


def test_extractive_notes_count_as_stale_once_a_model_is_configured(home, fixture_db, model, monkeypatch):
    assert distill().exit_code == 0  # no model configured: extractive notes
    assert "stale" not in memoryd("status").output
    use_model(monkeypatch, model.url + "/v1")
    assert "6 stale" in memoryd("status").output
    assert "6 distilled" in distill("--redistill-stale").output and len(model.requests) == 6

    # Back to extractive: the model's notes are kept, not counted stale, not downgraded.
    monkeypatch.setenv("MEMORYD_LLM__PROVIDER", "extractive")
    assert "stale" not in memoryd("status").output
    assert "0 distilled" in distill("--redistill-stale").output


# -- 7: concurrency ------------------------------------------------------------------------------


def test_two_calls_run_at_once_and_every_note_is_written(home, fixture_db, fixture_sessions, model, monkeypatch):
    slow = openai_reply(MODEL_NOTE)
    slow.delay = 0.2
    model.default = slow
    use_model(monkeypatch, model.url + "/v1", concurrency=2)
    capture = capture_at(time.time)
    try:
        report = capture.run_pass()
    finally:
        capture.close()
    assert len(report.distilled) == 6 and len(report.junk) == 1 and not report.failed
    assert len(model.requests) == 6 and model.max_active == 2
    notes = notes_in(home.global_root)
    assert len(notes) == 6 and all(MARK in p.read_text() for p in notes.values())
    assert {r.status for r in records(home).values()} == {"distilled", "junk"}
    assert not [t for t in threading.enumerate() if t.name.startswith("distill")]


def test_dry_run_costs_no_call(home, fixture_db, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1")
    result = distill("--dry-run")
    assert "Would distill 7 session(s)" in result.output and not model.requests


def test_session_force_and_limit_decide_the_calls(home, fixture_db, fixture_sessions, model, monkeypatch):
    use_model(monkeypatch, model.url + "/v1")
    sid = fixture_sessions["deploy-pnpm"]["session"]
    assert "1 distilled" in distill("--session", sid).output and len(model.requests) == 1
    assert "1 distilled" in distill("--session", sid, "--force").output and len(model.requests) == 2
    capture = capture_at(time.time)
    try:
        report = capture.run_pass(PassOptions(limit=3))  # the oldest three: one done, one new, the greeting
    finally:
        capture.close()
    assert report.distilled == [fixture_sessions["cjk-deploy"]["session"]]
    assert report.junk == [fixture_sessions["junk-hello"]["session"]] and len(model.requests) == 3
