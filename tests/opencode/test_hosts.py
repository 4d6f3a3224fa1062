"""Finding OpenCode on PATH, and reading from its log whether it loaded the plugin."""

from __future__ import annotations

import os
from pathlib import Path

from daemon.opencode.hosts import find_hosts, plugin_load

PLUGIN = Path("/home/u/.config/opencode/plugins/memoryd.js")
# Lines as OpenCode 2.0.15 and 1.18.33 write them (paths shortened).
V2_LOADING = ('timestamp=2026-12-01T10:30:41.239Z level=INFO run=e9 msg="loading plugin" '
              f"id={PLUGIN} entrypoint=file://{PLUGIN} role=server")  # fmt: skip
V2_FAILED = ('timestamp=2026-12-01T10:30:53.226Z level=WARN run=9c message="failed to load plugin" '
             f'target={PLUGIN} ref=err_b9 cause="Cause([Fail(PluginModule.LoadError: Plugin must export a '
             'default definition with an id and an effect or setup function.)])" role=server')  # fmt: skip
V1_FAILED = ('timestamp=2026-12-01T10:30:19.603Z level=ERROR run=4b message="failed to load plugin" '
             f'path=file://{PLUGIN} error="Plugin export is not a function"')  # fmt: skip


def _script(folder: Path, name: str, output: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(0o755)
    return path


def test_find_hosts_names_each_opencode_on_path_once(tmp_path: Path) -> None:
    v1 = _script(tmp_path / "a", "opencode", "1.18.33")
    v2 = _script(tmp_path / "b", "opencode2", "opencode v2.0.15")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "opencode").symlink_to(v1)  # the same binary twice
    path = os.pathsep.join(str(tmp_path / d) for d in ("a", "b", "c"))
    hosts = find_hosts({"PATH": path})
    assert [(h.path, h.version, h.major) for h in hosts] == [(v1, "1.18.33", 1), (v2, "2.0.15", 2)]
    assert find_hosts({"PATH": str(tmp_path / "none")}) == []


def test_plugin_load_reads_the_newest_line_naming_the_plugin(tmp_path: Path) -> None:
    log = tmp_path / "opencode.log"
    assert plugin_load(tmp_path, PLUGIN).state == "unknown"
    log.write_text(f"{V2_FAILED}\nother line\n{V2_LOADING}\n")
    loaded = plugin_load(tmp_path, PLUGIN)
    assert loaded.state == "loaded" and loaded.detail == "2026-12-01T10:30:41.239Z" and loaded.log == log
    log.write_text(f"{V2_LOADING}\n{V2_FAILED}\n")
    failed = plugin_load(tmp_path, PLUGIN)
    assert failed.state == "failed" and "PluginModule.LoadError" in failed.detail
    log.write_text(f"{V1_FAILED}\n")
    assert plugin_load(tmp_path, PLUGIN).detail.startswith("Plugin export is not a function")
    log.write_text(V2_LOADING.replace("memoryd.js", "other.js") + "\n")
    assert plugin_load(tmp_path, PLUGIN).state == "unknown"
