"""The memory commands as a person (or an agent's shell) runs them: output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from tests.secrets_catalogue import CATALOGUE


@pytest.fixture
def run(home, worktree, monkeypatch):
    """Run `memoryd ...` inside the worktree (opted in: it has .memory/) with an isolated home."""
    (worktree / ".memory").mkdir(exist_ok=True)
    monkeypatch.chdir(worktree)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, list(args), input=input, catch_exceptions=False)

    return invoke


def test_remember_then_recall(run, worktree):
    saved = run("remember", "-k", "gotcha", "-t", "部署脚本", "--tags", "deploy,ci", "部署脚本用 pnpm 而不是 npm")
    assert saved.exit_code == 0, saved.output
    assert saved.output.startswith("Saved gotcha '部署脚本' (id ")
    assert (worktree / ".memory" / "gotcha" / "部署脚本.md").exists()

    found = run("recall", "部署")
    assert found.exit_code == 0
    assert found.output.startswith("1. 部署脚本  (gotcha, project, ")
    assert "部署脚本用 pnpm 而不是 npm" in found.output

    data = json.loads(run("recall", "部署", "--json").output)
    assert data["match"] == "strict"
    assert data["results"][0]["tags"] == ["deploy", "ci"]


def test_body_from_stdin_and_update_in_place(run):
    run("remember", "-k", "fact", "-t", "Runner", "-", input="first version\n")
    updated = run("remember", "-k", "fact", "-t", "runner", "-", input="second version\n")
    assert updated.output.startswith("Updated fact 'runner'")
    listing = run("list").output.strip().splitlines()
    assert len(listing) == 1 and "runner" in listing[0]


def test_a_credential_is_refused_with_its_own_exit_code(run, worktree):
    result = run("remember", "-k", "fact", "-t", "Key", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234")
    assert result.exit_code == 3
    assert "refusing to save" in result.output and "sk-proj" not in result.output
    assert not any((worktree / ".memory").iterdir())


@pytest.mark.parametrize("case", CATALOGUE, ids=[f"{c.kind}-{i}" for i, c in enumerate(CATALOGUE)])
def test_remember_refuses_every_format_the_scrubber_knows(run, worktree, case):
    result = run("remember", "-k", "fact", "-t", "Credentials", "-", input=case.text)
    assert result.exit_code == 3, result.output
    assert not any(value in result.output for value in case.values)
    assert not any((worktree / ".memory").iterdir())  # nothing written


def test_usage_errors_exit_2_and_missing_ids_exit_1(run):
    assert run("remember", "-k", "../x", "-t", "T", "body").exit_code == 2
    assert run("remember", "-k", "fact", "-t", "T", "--global", "--project", ".", "body").exit_code == 2
    missing = run("forget", "nope00000000")
    assert missing.exit_code == 1 and "no memory has the id" in missing.output
    assert run("forget").exit_code == 2


def test_nothing_to_act_on_exits_1_for_inspect_and_forget_alike(run):
    assert run("inspect", "nope00000000").exit_code == 1
    missing = run("forget", "--query", "no such words anywhere", "--yes")
    assert missing.exit_code == 1 and "matches every word" in missing.output
    assert run("recall", "no such words anywhere").exit_code == 0  # an empty answer is an answer


def test_a_body_starting_with_a_dash_after_double_dash_or_from_stdin(run, worktree):
    refused = run("remember", "-k", "fact", "-t", "PEM", "-----BEGIN CERTIFICATE----- starts a PEM")
    assert refused.exit_code == 2
    assert "after `--`" in refused.output and "stdin" in refused.output
    saved = run("remember", "-k", "fact", "-t", "PEM", "--", "-----BEGIN CERTIFICATE----- starts a PEM")
    assert saved.exit_code == 0, saved.output
    assert "-----BEGIN CERTIFICATE----- starts a PEM" in (worktree / ".memory" / "fact" / "pem.md").read_text()
    piped = run("remember", "-k", "fact", "-t", "Flag", "-", input="-x is the flag that excludes\n")
    assert piped.exit_code == 0, piped.output


def test_global_flag_writes_to_the_global_tree(run, home):
    assert run("remember", "--global", "-k", "fact", "-t", "GPU", "Ollama on 11434").exit_code == 0
    assert (home.global_root / "fact" / "gpu.md").exists()
    assert "global" in run("recall", "ollama", "--scope", "global").output


def test_forget_by_query_asks_first_and_deletes_with_yes(run, worktree):
    run("remember", "-k", "fact", "-t", "Old staging host", "staging was at 10.0.0.5")
    path = worktree / ".memory" / "fact" / "old-staging-host.md"
    refused = run("forget", "--query", "staging host")
    assert refused.exit_code == 2 and "--yes" in refused.output
    assert "Old staging host" in refused.output and path.exists()
    done = run("forget", "--query", "staging host", "--yes")
    assert done.exit_code == 0 and "Forgot 'Old staging host'" in done.output
    assert not path.exists()


def test_forget_by_id(run, worktree):
    saved = json.loads(run("remember", "-k", "fact", "-t", "Temp", "--json", "x").output)
    result = run("forget", saved["id"])
    assert result.exit_code == 0 and not Path(saved["path"]).exists()


def test_inspect_shows_one_memory_or_the_inventory(run):
    saved = json.loads(run("remember", "-k", "lesson", "-t", "Pin pnpm", "--json", "Pin it in CI.").output)
    one = run("inspect", saved["id"])
    assert one.exit_code == 0 and "title: Pin pnpm" in one.output and "Pin it in CI." in one.output
    inventory = run("inspect")
    assert "- [lesson] Pin pnpm" in inventory.output and "Pin it in CI." not in inventory.output


def test_compile_sweep_and_reindex(run, worktree, home):
    run("remember", "-k", "fact", "-t", "Outage", "--expires", "1d", "runner down")
    run("remember", "-k", "fact", "-t", "Stable", "stays")
    first = run("compile")  # remember compiled already: only the tree's .gitignore is new
    assert first.exit_code == 0 and "wrote 1 file(s)" in first.output and ".gitignore" in first.output
    assert run("compile").output.count("up to date") == 1

    memory = worktree / ".memory" / "fact" / "outage.md"
    memory.write_text(memory.read_text().replace("expires: ", "expires: 2020-01-01\nold_expires: "))
    swept = run("sweep")
    assert swept.exit_code == 0, swept.output
    assert f"moved {memory} -> {worktree / '.memory' / '.expired' / 'fact' / 'outage.md'}" in swept.output

    rebuilt = run("reindex")
    assert rebuilt.exit_code == 0 and rebuilt.output.startswith("Indexed 1 memories from 1 tree(s)")


def test_sweep_dry_run_changes_nothing(run, worktree):
    run("remember", "-k", "fact", "-t", "Outage", "--expires", "1d", "runner down")
    memory = worktree / ".memory" / "fact" / "outage.md"
    memory.write_text(memory.read_text().replace("expires: ", "expires: 2020-01-01\nold_expires: "))
    result = run("sweep", "--dry-run")
    assert f"would move {memory}" in result.output and memory.exists()


def test_compile_reports_a_damaged_root_md(run, worktree):
    run("remember", "-k", "fact", "-t", "A", "a")
    root_md = worktree / ".memory" / "ROOT.md"
    root_md.write_text(root_md.read_text().replace("<!-- memoryd:end routing -->", ""))
    result = run("compile")
    assert result.exit_code == 1 and "ROOT.md: left alone" in result.output


@pytest.mark.parametrize("command", ["recall", "remember", "forget", "inspect", "list", "compile", "sweep", "reindex"])
def test_help_teaches_with_examples(run, command):
    result = run(command, "--help")
    assert result.exit_code == 0 and "Examples:" in result.output and f"memoryd {command}" in result.output


def test_recall_path_imports_no_heavy_modules(run, home):
    run("remember", "-k", "fact", "-t", "Light", "light body")
    script = (
        "import sys, json\n"
        "from daemon.cli.main import cli\n"
        "try:\n"
        "    cli(['recall', 'light'], standalone_mode=False)\n"
        "finally:\n"
        "    heavy = ('structlog', 'httpx', 'rich', 'watchdog', 'mcp', 'tenacity')\n"
        "    print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert "1. Light" in done.stdout
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_expiry_shown_in_json(run):
    data = json.loads(run("remember", "-k", "fact", "-t", "Soon", "--expires", "2099-01-01", "--json", "x").output)
    assert data["expires"] == "2099-01-02T00:00:00Z"
    assert datetime.fromisoformat(data["created"].replace("Z", "+00:00")) > datetime.now(UTC) - timedelta(minutes=5)


def test_with_the_daemon_running_recall_trusts_its_index(run, worktree, home):
    from daemon.service.lock import InstanceLock

    run("remember", "-k", "fact", "-t", "Seen", "quokka")
    by_hand = worktree / ".memory" / "fact" / "by-hand.md"
    by_hand.write_text("---\ntitle: By hand\n---\nquokka too\n")
    with InstanceLock(home.state_dir / "memoryd.lock"):
        # The daemon would have indexed the new file on its watcher event; recall does not stat the tree.
        assert "By hand" not in run("recall", "quokka").output
    assert "By hand" in run("recall", "quokka").output


def test_memory_modules_import_no_pydantic_or_network_code():
    script = (
        "import sys\n"
        "import daemon.memory.commands, daemon.memory.compile, daemon.memory.sweep\n"
        "print(sorted(m for m in ('pydantic', 'structlog', 'httpx', 'rich', 'watchdog', 'mcp') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_recall_takes_the_query_as_several_words(run):
    run("remember", "--kind", "fact", "--title", "Rate limit lives in src/limits.py", "RATE_LIMIT_PER_MINUTE = 120")
    result = run("recall", "rate", "limit")  # no quotes needed
    assert result.exit_code == 0, result.output
    assert "Rate limit lives in src/limits.py" in result.output
    assert run("recall").exit_code == 2  # a query is required


def test_remember_in_a_worktree_without_a_tree_saves_globally_and_says_so(home, tmp_path, monkeypatch):
    project = tmp_path / "plain-repo"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["remember", "-k", "fact", "-t", "Port", "8080"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "global tree" in result.output and "create that folder" in result.output
    assert not (project / ".memory").exists()
    assert (home.global_root / "fact" / "port.md").exists()


def test_distill_leaves_compiled_trees_behind(home, fixture_db):
    result = CliRunner().invoke(cli, ["distill", "--settle", "0"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    notes = [p for p in (home.global_root / "sessions").glob("*.md") if p.name != "index.md"]
    assert notes
    index_md = (home.global_root / "sessions" / "index.md").read_text()
    assert all(f"({note.name})" in index_md for note in notes)
    assert "(sessions/index.md)" in (home.global_root / "ROOT.md").read_text()


def test_papercut_errors_name_what_the_user_typed(home, tmp_path) -> None:
    """`context --dir` errors name --dir; an over-long tag is described by its length, never echoed."""
    import subprocess
    import sys

    def memoryd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "daemon", *args], capture_output=True, text=True, timeout=60)

    missing = tmp_path / "nonexistent"
    done = memoryd("context", "--dir", str(missing))
    assert done.returncode != 0
    assert f"--dir {missing}: no such directory" in done.stderr and "--project" not in done.stderr
    pasted = "x" * 60 + "Zq8vR2mN4kT7wY1p"
    done = memoryd("remember", "--kind", "lesson", "--title", "Tags", "--tags", f"ok,{pasted}", "body")
    assert done.returncode != 0
    assert "tag 2 is 76 characters long" in done.stderr
    assert "xxxx" not in done.stderr and "Zq8vR2mN4kT7wY1p" not in done.stderr
