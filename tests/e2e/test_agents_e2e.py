"""Real Claude Code (`claude -p`) and Codex (`codex exec`) turns against a scripted model, in a
fake home with `memoryd install` run once and the daemon running.

A session of each becomes one note in the project's tree; a lesson learned in a Claude Code
session is in the block of the next Codex session, and the reverse; a resumed session
rewrites its one note; the block is byte-identical across a session's turns and under
10,000 characters; nothing memoryd injected is in a note, a lesson or the index.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.memory.frontmatter import split_document
from tests.agents.agents_bin import CLAUDE_BIN, CODEX_BIN, need
from tests.service.conftest import daemon, daemon_env, notify, wait_for  # noqa: F401 - fixtures

SCRIPTED = Path(__file__).with_name("scripted_agents.py")
CLAUDE_LESSON = "always install with pnpm install --frozen-lockfile"
CODEX_LESSON = "cache the pnpm store keyed on pnpm-lock.yaml"
SCRIPT = [
    {"match": "The CI build fails after npm install", "steps": [
        {"text": "Let me check the lockfile.", "tool": {"name": "Bash", "input": {"command": "git status --short", "description": "status"}}},
        {"text": f"Found it: npm install rewrote pnpm-lock.yaml. Lesson: in this repo {CLAUDE_LESSON}; npm install rewrites "
                 "the pnpm lockfile and CI then fails. I restored it with git checkout pnpm-lock.yaml."}]},
    {"match": "Make CI faster", "steps": [
        {"text": "Looking at the workflow.", "tool": {"name": "exec_command", "input": {"cmd": "ls"}}},
        {"text": f"Done: CI now restores the pnpm store. Lesson: {CODEX_LESSON}; caching node_modules breaks "
                 "with pnpm's symlinks."}]},
    {"match": "Does the lockfile rule still hold", "steps": [{"text": "Yes: the workflow runs pnpm install --frozen-lockfile."}]},
    {"match": "Which cache key do we use", "steps": [{"text": "The pnpm store is keyed on the hash of pnpm-lock.yaml."}]},
    {"match": "Recall the lockfile lesson", "steps": [
        {"tool": {"name": "ToolSearch", "input": {"query": "select:mcp__memoryd__recall", "max_results": 1}}},
        {"tool": {"name": "mcp__memoryd__recall", "input": {"query": "frozen lockfile"}}},
        {"text": "Recalled it."}]},
    {"match": "Recall the cache lesson", "steps": [
        {"tool": {"name": "recall", "namespace": "mcp__memoryd", "input": {"query": "pnpm store cache"}}},
        {"text": "Recalled it."}]},
]  # fmt: skip
INJECTED = ("<memoryd-context>", "memoryd in Claude Code", "memoryd in Codex", "Reference data from memoryd")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def model(tmp_path: Path):  # noqa: ANN201
    port = _port()
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, str(SCRIPTED), str(port), str(script)], env={**os.environ, "SCRIPTED_LOG": str(log)})
    wait_for(lambda: _listening(port), what="the scripted model server")
    yield port, log
    proc.terminate()
    proc.wait(10)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _base_env(home) -> dict[str, str]:  # noqa: ANN001
    return {"PATH": "/usr/bin:/bin", "HOME": str(home.root), "TERM": "dumb", "XDG_STATE_HOME": str(home.state),
            "XDG_CONFIG_HOME": str(home.config), "XDG_DATA_HOME": str(home.data)}  # fmt: skip


def claude(home, project: Path, port: int, prompt: str, *extra: str) -> dict:  # noqa: ANN001
    env = {**_base_env(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-ant-fake",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1"}  # fmt: skip
    done = subprocess.run([CLAUDE_BIN, "-p", prompt, "--allowedTools", "Bash mcp__memoryd__recall", "--output-format", "json", *extra],
                          cwd=project, env=env, capture_output=True, text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def codex(home, project: Path, prompt: str, *resume: str) -> str:  # noqa: ANN001
    env = {**_base_env(home), "CODEX_HOME": str(home.root / ".codex"), "FAKE_API_KEY": "none"}
    args = [CODEX_BIN, "exec", "--skip-git-repo-check", "--json", *(["resume", *resume] if resume else []), prompt]
    done = subprocess.run(args, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    started = [json.loads(line) for line in done.stdout.splitlines() if '"thread.started"' in line]
    return started[0]["thread_id"] if started else resume[0]


def _codex_config(home, port: int) -> None:  # noqa: ANN001
    folder = home.root / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(
        'model = "fake-model"\nmodel_provider = "fake"\napproval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
        'check_for_update_on_startup = false\n\n[model_providers.fake]\nname = "Fake"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n'
    )


def notes(project: Path) -> dict[str, tuple[Path, dict]]:
    folder = project / ".memory" / "sessions"
    out = {}
    for path in folder.glob("*.md") if folder.is_dir() else ():
        if path.name != "index.md":
            fields = split_document(path.read_text(encoding="utf-8")).fields
            out[fields["session_id"]] = (path, fields)
    return out


def _block_now(project: Path, prompt: str) -> str:
    """The block a new session in `project` opened with `prompt` would get now (`memoryd context`)."""
    shown = subprocess.run([sys.executable, "-m", "daemon", "context", "--dir", str(project), "--prompt", prompt], env=os.environ,
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    return shown.stdout


def _lesson_id(project: Path, text: str) -> str:
    """The id of the lesson memory the session's note gave `text` to ("" while there is none)."""
    for path in (project / ".memory").rglob("lesson/*.md"):
        if path.name != "index.md" and text in (body := path.read_text()):
            return str(split_document(body).fields.get("id", ""))
    return ""


def _sent(log: Path, needle: str) -> bool:
    """Some request to the model carried `needle` (in a system, developer or user turn)."""
    return log.exists() and any(needle in line for line in log.read_text().splitlines())


def _tool_result_with(log: Path, needle: str) -> bool:
    """A request carried `needle` in a tool's result (Anthropic tool_result, Responses function_call_output)."""
    for line in log.read_text().splitlines():
        body = json.loads(line).get("body") or {}
        turns = [*(body.get("messages") or []), *(body.get("input") or [])]
        for turn in turns:
            blocks = turn.get("content") if isinstance(turn.get("content"), list) else []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if turn.get("type") == "function_call_output":
                results.append(turn)
            if any(needle in json.dumps(r) for r in results):
                return True
    return False


def _hook_blocks(transcript: Path) -> list[str]:
    """What memoryd's SessionStart hook added, as Claude Code recorded it."""
    found = []
    for line in transcript.read_text().splitlines():
        record = json.loads(line)
        attachment = record.get("attachment") or {}
        if attachment.get("type") == "hook_additional_context" and "SessionStart" in json.dumps(attachment):
            content = attachment.get("content")
            found += content if isinstance(content, list) else [content]
    return found


def test_one_memory_across_claude_code_and_codex(home, daemon, notify, model, tmp_path):  # noqa: ANN001
    need(CLAUDE_BIN)
    need(CODEX_BIN)
    port, log = model
    project = home.root / "code" / "shop"
    (project / ".memory").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    elsewhere = home.root / "code" / "billing"  # another project: nothing of it may reach shop's blocks
    (elsewhere / ".memory" / "lesson").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    (elsewhere / ".memory" / "lesson" / "stripe.md").write_text(
        "---\ntitle: Billing retries Stripe webhooks twice\nkind: lesson\n---\nIdempotency keys per invoice.\n")
    subprocess.run([sys.executable, "-m", "daemon", "reindex"], cwd=elsewhere, env=os.environ, check=True, capture_output=True)
    _codex_config(home, port)
    (home.root / ".claude").mkdir()
    env = {**os.environ, "MEMORYD_CODEX_BIN": CODEX_BIN}
    installed = subprocess.run([sys.executable, "-m", "daemon", "install", "--agent", "claude", "--agent", "codex"],
                               env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")

    first = claude(home, project, port, "The CI build fails after npm install, what happened?")
    claude_id = first["session_id"]
    wait_for(lambda: claude_id in notes(project), timeout=30, what="the Claude Code session's note")
    wait_for(lambda: _lesson_id(project, CLAUDE_LESSON), what="its lesson")
    claude_lesson = f"id {_lesson_id(project, CLAUDE_LESSON)})"  # as the block's inventory names it
    assert notes(project)[claude_id][1]["agent"] == "claude"
    # The daemon indexes the lesson a debounce after it is written: the next session starts after that.
    wait_for(lambda: claude_lesson in _block_now(project, "Make CI faster"), timeout=30, what="the lesson in the block")

    codex_id = codex(home, project, "Make CI faster")
    assert _sent(log, claude_lesson) and _sent(log, "mcp__memoryd")  # Claude's lesson in Codex's block
    wait_for(lambda: codex_id in notes(project), timeout=30, what="the Codex session's note")
    wait_for(lambda: _lesson_id(project, CODEX_LESSON), what="its lesson")
    codex_lesson = f"id {_lesson_id(project, CODEX_LESSON)})"
    wait_for(lambda: codex_lesson in _block_now(project, "Which cache key do we use?"), timeout=30, what="the lesson in the block")
    assert notes(project)[codex_id][1]["agent"] == "codex"

    assert not _sent(log, "Stripe webhooks")
    log.write_text("")
    claude(home, project, port, "Which cache key do we use?")
    assert _sent(log, codex_lesson)  # Codex's lesson in the next Claude Code session's block

    # Resumed sessions rewrite their one note.
    note, _ = notes(project)[claude_id]
    before = note.read_text()
    log.write_text("")
    claude(home, project, port, "Does the lockfile rule still hold?", "--resume", claude_id)
    resumed = log.read_text()
    wait_for(lambda: note.read_text() != before, timeout=30, what="the resumed Claude Code note rewritten")
    cx_note, _ = notes(project)[codex_id]
    cx_before = cx_note.read_text()
    codex(home, project, "Which cache key do we use?", codex_id)
    wait_for(lambda: cx_note.read_text() != cx_before, timeout=30, what="the resumed Codex note rewritten")
    assert notes(project)[claude_id][0] == note and notes(project)[codex_id][0] == cx_note

    # One block per session: the resumed turn's requests carry the very bytes the first turn got.
    transcript = next((home.root / ".claude" / "projects").rglob(f"{claude_id}.jsonl"))
    (block,) = set(_hook_blocks(transcript))
    assert len(block) < 10_000 and CLAUDE_LESSON not in block  # built before its own lesson existed
    escaped = json.dumps(block)[1:-1]
    assert escaped in resumed and resumed.count("memoryd in Claude Code") == resumed.count(escaped)

    # MCP recall from Claude Code: memoryd's answer reaches the model as the tool's result
    # (Codex's, whose exec does not wait for a slow server: test_codex_exec_has_memoryds_tools_on_its_first_turn).
    log.write_text("")
    claude(home, project, port, "Recall the lockfile lesson")
    assert _tool_result_with(log, CLAUDE_LESSON)

    assert not _sent(log, "Stripe webhooks")  # nothing from another project in any block
    assert daemon.stop() == 0, daemon.output()
    for path in [*(project / ".memory").rglob("*.md"), *home.state.rglob("index.db*")]:
        data = path.read_bytes()
        assert not any(mark.encode() in data for mark in INJECTED), path


def test_codex_exec_has_memoryds_tools_on_its_first_turn(home, model):  # noqa: ANN001
    need(CODEX_BIN)
    port, log = model
    project = home.root / "code" / "shop"
    (project / ".memory" / "lesson").mkdir(parents=True)
    (project / ".memory" / "lesson" / "cache.md").write_text(f"---\ntitle: CI cache\nkind: lesson\n---\n{CODEX_LESSON}.\n")
    _codex_config(home, port)
    env = {**os.environ, "MEMORYD_CODEX_BIN": CODEX_BIN}
    subprocess.run([sys.executable, "-m", "daemon", "install", "--agent", "codex"], env=env, check=True, capture_output=True)
    # The first session after install, in a folder never served: the front answers the
    # handshake install had kept (with this folder's instructions), so the tools are there.
    codex(home, project, "Recall the cache lesson")
    assert _tool_result_with(log, CODEX_LESSON)
