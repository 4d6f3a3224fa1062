"""The plugin's hooks under real Bun (the runtime inside OpenCode), against the real socket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.config import Config, load_settings
from daemon.opencode.install import render_plugin
from daemon.service.context_server import ContextServer
from tests.e2e.opencode import opencode_binary

# Drives the hooks as OpenCode does, and prints what each call left in `output`.
DRIVER = r"""
const { MemorydPlugin } = await import(process.argv[2])
const hooks = await MemorydPlugin({ directory: process.argv[3], worktree: process.argv[3], client: {} })
const out = {}
const step = async (id) => {
  const o = { system: ["You are opencode.", "Environment: linux"] }
  await hooks["experimental.chat.system.transform"]({ sessionID: id }, o)
  return o.system
}
await hooks["chat.message"]({ sessionID: "s1" }, { parts: [{ type: "text", text: "why does the WAL matter" }] })
out.first = await step("s1")
out.second = await step("s1")
const title = { system: ["You are a title generator. You output ONLY a thread title.", "x"] }
await hooks["experimental.chat.system.transform"]({ sessionID: "s1" }, title)
out.title = title.system
const compacting = { context: [] }
await hooks["experimental.session.compacting"]({ sessionID: "s1" }, compacting)
out.compaction = compacting.context
await Bun.write(process.argv[4], "go")  // the test changes a tree now
while (await Bun.file(process.argv[4]).text() !== "changed") await Bun.sleep(20)
await Bun.sleep(120)  // past MEMORYD_PLUGIN_RECHECK_MS
await step("s1")  // starts the recheck in the background …
await Bun.sleep(300)
out.after = await step("s1")  // … whose new block this step carries
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } })
console.log(JSON.stringify(out))
"""


@pytest.fixture
def bun() -> Path:
    binary = opencode_binary()
    if binary is None:
        pytest.skip("OpenCode is not installed (.ci/install-opencode): no Bun to run the plugin")
    return binary



def test_plugin_hooks_under_bun(home, bun: Path, short_dir: Path) -> None:
    settings, paths = load_settings()
    config = Config(settings, paths)
    lesson = paths.global_root / "lesson" / "wal.md"
    lesson.parent.mkdir(parents=True)
    lesson.write_text("---\ntitle: WAL matters\nkind: lesson\nid: l1\n---\n\nReaders never wait on writers.\n")
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
    proc = subprocess.Popen([str(bun), str(driver), str(plugin), str(home.root), str(signal_file)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (signal_file.exists() and signal_file.read_text() == "go"):
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.02)
        gotcha = paths.global_root / "gotcha" / "tabs.md"
        gotcha.parent.mkdir(parents=True)
        gotcha.write_text("---\ntitle: Tabs in Makefiles\nkind: gotcha\nid: g1\n---\n\nRecipes need tabs.\n")
        from daemon.memory.index import SearchIndex
        from daemon.memory.roots import MemoryRoot

        with SearchIndex(paths.index_db) as index:  # what the daemon's worker does on the event
            index.sync_root(MemoryRoot(paths.global_root, "global"))
        signal_file.write_text("changed")
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()
    assert proc.returncode == 0, stderr
    out = json.loads(stdout.strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    assert len(first) == 2 and first[0] == "You are opencode."  # appended, never a new element
    assert first[1].startswith("Environment: linux\n\n<memoryd-context>") and "WAL matters" in first[1]
    assert "Relevant to the first prompt" in first[1] and "Readers never wait" in first[1]
    assert second == first  # byte-identical from step to step
    assert out["title"] == ["You are a title generator. You output ONLY a thread title.", "x"]
    assert len(out["compaction"]) == 1 and "memoryd_remember" in out["compaction"][0]
    assert "Tabs in Makefiles" in out["after"][1] and out["after"] != first  # a new generation
    assert idle == ["s1"]
