"""`memoryd opencode install|uninstall|status` on real config files in a fake home."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.opencode.install import installed_version, plugin_version


@pytest.fixture
def oc(home) -> Path:
    return home.config / "opencode"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def plugin(oc: Path) -> Path:
    return oc / "plugins" / "memoryd.js"


def test_install_into_a_home_without_config(oc: Path, home) -> None:
    dry = run("opencode", "install", "--dry-run")
    assert dry.exit_code == 0 and "would write" in dry.output
    assert not oc.exists()  # a dry run writes nothing
    done = run("opencode", "install")
    assert done.exit_code == 0, done.output
    text = plugin(oc).read_text()
    assert installed_version(text) == plugin_version()
    assert str(home.state / "memoryd" / "memoryd.sock") in text and "__MEMORYD" not in text
    config = json.loads((oc / "opencode.json").read_text())
    assert config["mcp"]["memoryd"]["command"][-1] == "mcp" and config["mcp"]["memoryd"]["enabled"] is True
    again = run("opencode", "install")
    assert again.exit_code == 0 and "write " not in again.output.replace("would write", "")
    assert run("opencode", "status").exit_code == 0


def test_install_merges_into_existing_json_and_keeps_everything_else(oc: Path) -> None:
    oc.mkdir(parents=True)
    existing = {"model": "anthropic/claude", "mcp": {"github": {"type": "remote", "url": "https://x"}}, "theme": "dark"}
    (oc / "opencode.json").write_text(json.dumps(existing))
    (oc / "opencode.json").chmod(0o640)
    assert run("opencode", "install").exit_code == 0
    config = json.loads((oc / "opencode.json").read_text())
    assert config["model"] == "anthropic/claude" and config["theme"] == "dark"
    assert set(config["mcp"]) == {"github", "memoryd"} and config["mcp"]["github"] == existing["mcp"]["github"]
    assert stat.S_IMODE((oc / "opencode.json").stat().st_mode) == 0o640
    assert run("opencode", "uninstall").exit_code == 0
    assert json.loads((oc / "opencode.json").read_text()) == existing
    assert not plugin(oc).exists()


def test_jsonc_keeps_its_comments_and_gets_the_entry(oc: Path) -> None:
    from daemon.jsonc import loads

    oc.mkdir(parents=True)
    original = '{\n  // my models\n  "model": "x/y", /* pinned */\n  "mcp": {\n    "gh": {"type": "remote", "url": "https://x"}, // mine\n  },\n}\n'
    (oc / "opencode.jsonc").write_text(original)
    assert run("opencode", "install").exit_code == 0
    text = (oc / "opencode.jsonc").read_text()
    for comment in ("// my models", "/* pinned */", "// mine"):
        assert comment in text
    data = loads(text)
    assert data["model"] == "x/y" and set(data["mcp"]) == {"gh", "memoryd"}
    assert data["mcp"]["memoryd"]["command"][-1] == "mcp"
    assert run("opencode", "install").exit_code == 0 and (oc / "opencode.jsonc").read_text() == text  # idempotent
    assert run("opencode", "status").exit_code == 0
    removed = run("opencode", "uninstall")  # a commented file is not re-dumped: by hand
    assert removed.exit_code == 1 and "by hand" in removed.output and (oc / "opencode.jsonc").read_text() == text


def test_a_broken_config_is_never_rewritten(oc: Path) -> None:
    oc.mkdir(parents=True)
    broken = '{\n  "model": "x/y"\n  "theme": \n'
    (oc / "opencode.json").write_text(broken)
    result = run("opencode", "install")
    assert result.exit_code == 1  # something is left to do by hand
    assert "not rewritten" in result.output and '"memoryd"' in result.output and '"mcp"' in result.output
    assert (oc / "opencode.json").read_text() == broken
    assert plugin(oc).exists()  # the plugin is installed all the same
    status = run("opencode", "status")
    assert "MCP server: not in" in status.output and status.exit_code == 1


def test_a_1x_only_config_json_is_left_and_opencode_json_made(oc: Path) -> None:
    oc.mkdir(parents=True)
    legacy = '{"theme": "dark"}\n'
    (oc / "config.json").write_text(legacy)
    assert run("opencode", "install").exit_code == 0
    assert (oc / "config.json").read_text() == legacy
    assert "memoryd" in json.loads((oc / "opencode.json").read_text())["mcp"]  # what OpenCode 2 reads


def test_a_foreign_plugin_of_the_same_name_is_left_alone(oc: Path) -> None:
    plugin(oc).parent.mkdir(parents=True)
    plugin(oc).write_text("export const Mine = async () => ({})\n")
    result = run("opencode", "install")
    assert result.exit_code == 1 and "not written by memoryd" in result.output
    assert plugin(oc).read_text() == "export const Mine = async () => ({})\n"
    assert run("opencode", "uninstall").exit_code == 1
    assert plugin(oc).exists()


def test_status_says_when_the_installed_plugin_is_older(oc: Path) -> None:
    assert run("opencode", "install").exit_code == 0
    old = plugin(oc).read_text().replace(plugin_version(), "0.0.1+deadbeef")
    plugin(oc).write_text(old)
    status = run("opencode", "status")
    assert status.exit_code == 1 and "0.0.1+deadbeef is older" in status.output
    assert "memoryd opencode install" in status.output
    assert run("opencode", "install").exit_code == 0
    assert installed_version(plugin(oc).read_text()) == plugin_version()


def test_broken_json_config_is_reported_not_replaced(oc: Path) -> None:
    oc.mkdir(parents=True)
    (oc / "opencode.json").write_text('{"model": ')
    result = run("opencode", "install")
    assert result.exit_code == 1 and "not valid JSON" in result.output
    assert (oc / "opencode.json").read_text() == '{"model": '


def test_the_plugin_is_valid_javascript(oc: Path, tmp_path: Path) -> None:
    """Node parses the installed file as an ES module (OpenCode runs it under Bun)."""
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    assert run("opencode", "install").exit_code == 0
    module = tmp_path / "memoryd.mjs"
    module.write_text(plugin(oc).read_text())
    check = subprocess.run([node, "--check", str(module)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_memoryd_status_says_whether_opencode_gets_memory(oc: Path) -> None:
    before = run("status")
    assert "OpenCode plugin: not installed" in before.output and "memoryd opencode install" in before.output
    assert run("opencode", "install").exit_code == 0
    after = run("status", "--json")
    data = json.loads(after.output)["opencode"]
    assert data["plugin_installed"] and data["mcp_registered"] and not data["plugin_outdated"]
    assert "OpenCode plugin: installed, current" in run("status").output


def test_install_registers_the_same_mcp_command_as_print_config(oc: Path, tmp_path: Path) -> None:
    """One MCP command everywhere: the absolute `memoryd` of this install, as `mcp --print-config` gives it."""
    import sys

    venv_memoryd = Path(sys.executable).parent / "memoryd"
    done = subprocess.run([sys.executable, "-m", "daemon", "opencode", "install"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    installed = json.loads((oc / "opencode.json").read_text())["mcp"]["memoryd"]["command"]
    printed = subprocess.run(
        [sys.executable, "-m", "daemon", "mcp", "--print-config", "opencode", "--project", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    shown = json.loads(printed.stdout)["mcp"]["memoryd"]["command"]
    assert installed[0] == shown[0] and Path(installed[0]).is_absolute()
    assert installed == shown[: len(installed)] and installed[-1] == "mcp"
    if venv_memoryd.exists():  # an installed memoryd: its script, not `python -m daemon`
        assert installed == [str(venv_memoryd), "mcp"]
