"""The plugin's hooks under real Bun (the runtime inside OpenCode), against the real socket.

One driver plays either host: OpenCode 1.x (the `server` hooks, by name) or 2.x (`setup`
with a ctx whose `session.hook` and `event.subscribe` record and feed the plugin).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.config import Config, load_settings
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from daemon.opencode.install import render_plugin
from daemon.service.context_server import ContextServer
from tests.e2e.opencode import opencode_binary

# Drives the hooks as OpenCode does, and prints what each call left in the system prompt.
DRIVER = r"""
const [plugin, dir, signal, host] = process.argv.slice(2)
const definition = (await import(plugin)).default
const wait = async (state) => { while (await Bun.file(signal).text().catch(() => "") !== state) await Bun.sleep(20) }
const out = { id: definition.id }
let v1, hooks = {}, events = []
if (host === "1") {
  v1 = await definition.server({ directory: dir, worktree: dir, client: {} })
  await definition.setup({ options: {}, agent: {} })  // 1.x's reduced ctx: must be a no-op
} else {
  const feed = { push: null }
  const ctx = {
    location: { directory: dir, project: { directory: dir } },
    session: { hook: async (name, fn) => { hooks[name] = fn } },
    event: { subscribe: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise((r) => (feed.push = r)) }) }) },
  }
  await definition.setup(ctx)
  out.hooks = Object.keys(hooks).sort()
  events = feed
}
const prompt = async (id, text) => {
  if (v1) await v1["chat.message"]({ sessionID: id }, { parts: [{ type: "text", text }] })
  else await hooks.prompt({ sessionID: id, prompt: { text, files: [] } })
}
const step = async (id) => {
  if (v1) {
    const o = { system: ["You are opencode.", "Environment: linux"] }
    await v1["experimental.chat.system.transform"]({ sessionID: id }, o)
    return o.system
  }
  const e = { sessionID: id, system: [{ type: "text", text: "You are opencode." }, { type: "text", text: "Environment: linux" }] }
  await hooks.context(e)
  return e.system.map((p) => p.text)
}
const compaction = async (id) => {
  if (v1) { const o = { context: [] }; await v1["experimental.session.compacting"]({ sessionID: id }, o); return o.context }
  const e = { sessionID: id, system: [{ type: "text", text: "Summarise." }] }
  await hooks.compaction(e)
  return e.system.map((p) => p.text)
}
const later = async (id) => { await Bun.sleep(120); await step(id); await Bun.sleep(300); return step(id) }  // past RECHECK_MS
await prompt("s1", "why does the WAL matter")
out.first = await step("s1")
out.second = await step("s1")
if (v1) {
  const title = { system: ["You are a title generator. You output ONLY a thread title.", "x"] }
  await v1["experimental.chat.system.transform"]({ sessionID: "s1" }, title)
  out.title = title.system
}
await Bun.write(signal, "go1"); await wait("changed1")   // the test adds a gotcha now
out.afterGotcha = await later("s1")
out.compaction = await compaction("s1")
await Bun.write(signal, "go2"); await wait("changed2")   // … and a hard rule now
out.afterRule = await later("s1")
if (v1) await v1.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } })
else { events.push({ value: { type: "session.execution.succeeded", data: { sessionID: "s1" } }, done: false }); await Bun.sleep(300) }
console.log(JSON.stringify(out))
"""


@pytest.fixture
def bun() -> Path:
    binary = opencode_binary()
    if binary is None:
        pytest.skip("OpenCode is not installed (.ci/install-opencode): no Bun to run the plugin")
    return binary


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _await_state(path: Path, state: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while not (path.exists() and path.read_text() == state):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.02)


@pytest.mark.parametrize("host", ["1", "2"])
def test_plugin_hooks_under_bun(home, bun: Path, short_dir: Path, host: str) -> None:
    settings, paths = load_settings()
    config = Config(settings, paths)
    _write(paths.global_root / "lesson" / "wal.md", "---\ntitle: WAL matters\nkind: lesson\nid: l1\n---\n\nReaders never wait on writers.\n")
    idle: list[str] = []
    server = ContextServer(lambda: config, idle.append)
    sock = short_dir / "memoryd.sock"
    assert server.start(sock)
    plugin = short_dir / "memoryd.js"
    plugin.write_text(render_plugin([sys.executable, "-m", "daemon"], sock))
    driver = short_dir / "driver.mjs"
    driver.write_text(DRIVER)
    signal_file = short_dir / "signal"
    env = {**os.environ, "BUN_BE_BUN": "1", "MEMORYD_PLUGIN_RECHECK_MS": "100"}
    proc = subprocess.Popen([str(bun), str(driver), str(plugin), str(home.root), str(signal_file), host],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip

    def change(memory: Path, text: str) -> None:
        _write(memory, text)
        with SearchIndex(paths.index_db) as index:  # what the daemon's worker does on the event
            index.sync_root(MemoryRoot(paths.global_root, "global"))

    try:
        _await_state(signal_file, "go1", proc)
        change(paths.global_root / "gotcha" / "tabs.md", "---\ntitle: Tabs in Makefiles\nkind: gotcha\nid: g1\n---\n\nRecipes need tabs.\n")
        signal_file.write_text("changed1")
        _await_state(signal_file, "go2", proc)
        change(paths.global_root / "rule" / "pr.md", "---\ntitle: Always open a PR\nkind: rule\nhard_rule: true\nid: r1\n---\n\nNo pushes to main.\n")
        signal_file.write_text("changed2")
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()
    assert proc.returncode == 0, stderr
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["id"] == "memoryd"
    if host == "2":
        assert out["hooks"] == ["compaction", "context", "prompt"]
    first, second = out["first"], out["second"]
    assert len(first) == 2 and first[0] == "You are opencode."  # appended, never a new element
    assert first[1].startswith("Environment: linux\n\n<memoryd-context>") and "WAL matters" in first[1]
    assert "Relevant to the first prompt" in first[1] and "Readers never wait" in first[1]
    assert second == first  # byte-identical from step to step
    if host == "1":
        assert out["title"] == ["You are a title generator. You output ONLY a thread title.", "x"]
    # A new memory does not change a running session's block: the first block wins …
    assert out["afterGotcha"] == first
    # … but compaction is given the inventory as it is now, with the save instruction.
    compaction = "\n".join(out["compaction"])
    assert "Tabs in Makefiles" in compaction and "memoryd_remember" in compaction
    assert "Summarise." in compaction if host == "2" else len(out["compaction"]) == 1
    # A change of the hard rules replaces the block.
    assert "Always open a PR" in out["afterRule"][1] and len(out["afterRule"]) == 2
    assert idle == ["s1"]
