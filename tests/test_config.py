"""Settings: file + env precedence, errors that name file and key, and the example file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from daemon.config import ConfigError, Settings, load_settings

EXAMPLE = Path(__file__).parent.parent / "daemon" / "config.example.toml"  # shipped in the package


def _sections(model: type, example: dict, prefix: str = ""):
    """Yield (dotted name, fields, example table) for every section, nested ones too."""
    for section, field in model.model_fields.items():
        name = f"{prefix}{section}"
        assert section in example, f"[{name}] missing from config.example.toml"
        sub = field.annotation.model_fields  # type: ignore[union-attr]
        nested = {k for k, f in sub.items() if hasattr(f.annotation, "model_fields")}
        if nested:
            yield from _sections(field.annotation, example[section], f"{name}.")
        else:
            yield name, sub, example[section]


def test_every_setting_is_documented_in_the_example():
    example = tomllib.loads(EXAMPLE.read_text())
    text = EXAMPLE.read_text()
    for section, sub, table in _sections(Settings, example):
        for key in sub:
            assert key in table, f"{section}.{key} missing from config.example.toml"
            # Each key has a comment line right above it.
            assert re.search(rf"# .+\n{re.escape(key)} = ", text), f"{section}.{key} has no comment"
        for key in table:
            assert key in sub, f"config.example.toml has {section}.{key}, which Settings lacks"


def test_example_file_loads_and_equals_defaults(home):
    settings, _ = load_settings(EXAMPLE)
    assert settings.model_dump() == Settings().model_dump()


def test_defaults_follow_xdg(home):
    settings, paths = load_settings()
    assert settings.llm.provider == "extractive"
    assert paths.opencode_db == home.data / "opencode" / "opencode.db"
    assert paths.state_dir == home.state / "memoryd"
    assert paths.global_root == home.config / "opencode" / "memory"


def test_opencode_db_env_and_setting(home, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "x.db"))
    assert load_settings()[1].opencode_db == tmp_path / "x.db"
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[source]\ndb = "{tmp_path / "y.db"}"\n')
    assert load_settings(cfg)[1].opencode_db == tmp_path / "y.db"


def test_env_overrides_file_with_nested_keys(home, monkeypatch):
    cfg = home.config / "memoryd" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[llm]\nmodel = "from-file"\ntemperature = 0.5\n')
    monkeypatch.setenv("MEMORYD_LLM__MODEL", "from-env")
    settings, paths = load_settings()
    assert settings.llm.model == "from-env"
    assert settings.llm.temperature == 0.5
    assert paths.config_file == cfg


def test_unknown_key_names_file_and_key(home, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\nmodle = 'x'\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert str(cfg) in str(err.value) and "llm.modle" in str(err.value)


def test_bad_value_names_file_and_key(home, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[capture]\nsettle_seconds = -1\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert str(cfg) in str(err.value) and "capture.settle_seconds" in str(err.value)


@pytest.mark.parametrize(
    "name,value,says",
    [
        ("MEMORYD_LLM__PROVIDER", "gpt", "Input should be 'extractive', 'openai' or 'anthropic'"),
        ("MEMORYD_LLM__TIMEOUT_S", "soon", "valid number"),
        ("MEMORYD_LLM__BOGUS", "1", "no such setting"),
        ("MEMORYD_LLM__EXTRA_HEADERS", "not json", "cannot be read"),
    ],
)
def test_a_bad_variable_is_named_and_no_file_is_blamed(home, monkeypatch, name, value, says):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert f"environment variable {name}" in message and says in message
    assert "config.toml" not in message  # there is none
    assert "memoryd config example" in message


def test_a_bad_file_is_named_even_when_the_environment_is_fine(home, monkeypatch):
    path = home.config / "memoryd" / "config.toml"
    path.parent.mkdir()
    path.write_text("[llm]\ntimeout_s = \"soon\"\n")
    monkeypatch.setenv("MEMORYD_LLM__MODEL", "qwen3:8b")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: key 'llm.timeout_s'")):
        load_settings()


def test_the_example_is_in_the_package_and_printed_by_a_command(home):
    from click.testing import CliRunner

    from daemon.cli.main import cli

    result = CliRunner().invoke(cli, ["config", "example"])
    assert result.exit_code == 0
    assert result.output == EXAMPLE.read_text()
    pyproject = tomllib.loads((EXAMPLE.parent.parent / "pyproject.toml").read_text())
    assert "config.example.toml" in pyproject["tool"]["setuptools"]["package-data"]["daemon"]  # in the wheel
    assert tomllib.loads(result.output)["llm"]["provider"] == "extractive"


@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["logs"], ["service", "status"], ["config", "check"]])
def test_the_commands_that_diagnose_still_run_with_a_bad_config(home, monkeypatch, command):
    from click.testing import CliRunner

    from daemon.cli.main import cli

    monkeypatch.setenv("MEMORYD_LLM__TIMEOUT_S", "soon")
    result = CliRunner().invoke(cli, command)
    assert "configuration error" in result.stderr
    assert "MEMORYD_LLM__TIMEOUT_S" in result.stderr
    assert "Traceback" not in result.output
    if command == ["status"]:
        assert result.exit_code == 0 and "memoryd is not running" in result.stdout
    if command == ["status", "--json"]:
        import json

        assert result.exit_code == 0
        assert "MEMORYD_LLM__TIMEOUT_S" in json.loads(result.stdout)["config_error"]
    if command[0] == "service":
        assert "daemon:" in result.stdout and "unit file:" in result.stdout
    if command[0] == "logs":
        assert "no log at" in result.stderr  # it got as far as looking for the log
    if command[0] == "config":
        assert result.exit_code == 2


def test_broken_toml_and_missing_explicit_file(home, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(cfg)
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "absent.toml")


# -- the settings cache that keeps quick commands free of pydantic --------------------------

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from daemon.paths import QuickSettings, read_cached_settings, write_cached_settings  # noqa: E402


def cache(settings, paths):
    write_cached_settings(settings.model_dump(mode="json"), paths.config_file, os.environ)


def test_validated_settings_are_cached_for_quick_commands(home):
    settings, paths = load_settings()
    assert read_cached_settings(paths.config_file, os.environ) is None  # loading alone writes nothing
    cache(settings, paths)
    cached = read_cached_settings(paths.config_file, os.environ)
    assert cached is not None
    quick, quick_paths = cached.settings, cached.paths
    assert isinstance(quick, QuickSettings) and quick.inject.recall_k == settings.inject.recall_k
    assert quick_paths == paths
    # Only what quick commands read is kept: no model settings (extra headers may hold a key).
    assert "llm" not in json.loads((paths.state_dir / "settings.json").read_text())["settings"]


def test_quick_settings_are_the_settings_quick_commands_read_with_their_validated_values(home, monkeypatch):
    """Every field of QuickSettings is a Settings field of the same name, and a cached value is
    the validated one (lists frozen to tuples)."""
    from daemon.config import Settings

    monkeypatch.setenv("MEMORYD_INJECT__SKIP_PROJECTS", '["~/secret"]')
    monkeypatch.setenv("MEMORYD_INJECT__RECALL_K", "5")
    monkeypatch.setenv("MEMORYD_MEMORY__MAX_FILE_BYTES", "8192")
    monkeypatch.setenv("MEMORYD_SOURCE__DB", "/elsewhere/opencode.db")
    settings, paths = load_settings()
    cache(settings, paths)
    quick = read_cached_settings(paths.config_file, os.environ).settings
    for section in QuickSettings._fields:
        model = type(getattr(settings, section))
        assert section in Settings.model_fields
        for field in type(getattr(quick, section))._fields:
            assert field in model.model_fields, f"{section}.{field} is no Settings field"
            validated = getattr(getattr(settings, section), field)
            kept = getattr(getattr(quick, section), field)
            assert kept == (tuple(validated) if isinstance(validated, list) else validated), field
    assert quick.inject.skip_projects == ("~/secret",) and quick.memory.max_file_bytes == 8192


def test_any_change_the_settings_depend_on_invalidates_the_cache(home, monkeypatch):
    settings, paths = load_settings()
    cache(settings, paths)
    monkeypatch.setenv("MEMORYD_LLM__MODEL", "other")
    assert read_cached_settings(paths.config_file, os.environ) is None
    monkeypatch.delenv("MEMORYD_LLM__MODEL")
    assert read_cached_settings(paths.config_file, os.environ) is not None
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("[capture]\nsettle_seconds = 5\n")
    assert read_cached_settings(paths.config_file, os.environ) is None


def test_recall_uses_the_cache_without_pydantic_and_still_sees_config_errors(home):
    probe = "import sys, daemon.cli.main as m; sys.argv=['memoryd','recall','x']\ntry: m.main()\nexcept SystemExit: pass\nprint('PYDANTIC' if 'pydantic' in sys.modules else 'LIGHT')"
    run = lambda: subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ, timeout=60)  # noqa: E731
    assert run().stdout.strip().endswith("PYDANTIC")  # first time: validated, then cached
    assert run().stdout.strip().endswith("LIGHT")
    config = home.config / "memoryd" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[memory]\nglobal_rot = 'typo'\n")
    broken = run()
    assert "unknown key 'memory.global_rot'" in broken.stderr


def test_every_quick_command_answers_the_same_from_the_cached_settings(home, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from daemon.cli.main import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMORYD_INJECT__RECALL_K", "2")
    runner = CliRunner()
    saved = runner.invoke(cli, ["remember", "--global", "-k", "gotcha", "-t", "Deploy with pnpm", "npm ci drops the lockfile"])
    assert saved.exit_code == 0, saved.output
    settings_file = home.state / "memoryd" / "settings.json"
    for command in (["recall", "pnpm", "--json"], ["list", "--json"], ["inspect", "--json"], ["context", "--json", "--prompt", "deploy pnpm"]):
        settings_file.unlink(missing_ok=True)
        validated = runner.invoke(cli, command, catch_exceptions=False)
        assert settings_file.exists(), command  # a quick command: it cached what it read
        cached = runner.invoke(cli, command, catch_exceptions=False)
        assert validated.exit_code == cached.exit_code == 0, (command, validated.output, cached.output)
        assert _timeless(cached.output) == _timeless(validated.output), command


def _timeless(output: str) -> object:
    """A command's JSON without its scores (they decay with the time of the run)."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "score"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(output))
