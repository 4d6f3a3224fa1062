"""`memoryd status`: the truth, whether or not the daemon runs, as text and as JSON."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.config import load_settings
from daemon.service.lock import InstanceLock
from daemon.state import StateDB


def status(*args: str):
    return CliRunner().invoke(cli, ["status", *args])


def test_before_anything_it_says_what_to_do(home):
    result = status()
    assert result.exit_code == 0
    assert "memoryd is not running" in result.output and "memoryd service install" in result.output
    assert "OpenCode database not found" in result.output
    assert "run `memoryd distill`" in result.output


def test_after_a_pass_it_counts_and_lists_roots(home, fixture_db):
    assert CliRunner().invoke(cli, ["distill", "--settle", "0"]).exit_code == 0
    text = status().output
    assert "Sessions: 6 distilled, 1 junk, 0 settling, 0 held, 0 to retry, 0 failed" in text
    assert "up to date" in text
    # 6 session notes, and the 2 decisions they state ("Decision: …", "约定：…") as memories
    assert f"Memory (global): {home.global_root} — 8 memories" in text
    data = json.loads(status("--json").output)
    assert data["state"]["sessions"] == {"settling": 0, "held": 0, "retry": 0, "distilled": 6, "junk": 1, "failed": 0}
    assert data["daemon"]["running"] is False
    assert data["source"]["ok"] is True and data["model"]["provider"] == "extractive"


def test_failures_and_errors_are_shown_with_session_ids(home, fixture_db):
    CliRunner().invoke(cli, ["distill", "--settle", "0"])
    _, paths = load_settings()
    state = StateDB(paths.state_db)
    record = state.records("distilled")[0]
    record.status, record.last_error = "failed", "model server said no"
    state.put(record)
    state.log_error("model server said no", record.session_id)
    state.close()
    text = status().output
    assert f"failed  {record.session_id}" in text and "model server said no" in text
    assert "--force" in text  # what to do next
    assert "Recent errors:" in text


def test_a_running_daemon_is_reported_with_its_pid(home, fixture_db):
    _, paths = load_settings()
    with InstanceLock(paths.lock_file, pid=4242):
        data = json.loads(status("--json").output)
        text = status().output
    assert data["daemon"]["running"] is True and data["daemon"]["pid"] == 4242
    assert "memoryd is running (pid 4242" in text
    assert "memoryd is not running" in status().output  # the lock went with the holder


def test_sessions_still_being_written_are_counted_as_settling(home, fixture_db):
    CliRunner().invoke(cli, ["distill", "--settle", "0"])
    _, paths = load_settings()
    state = StateDB(paths.state_db)
    record = state.records("distilled")[0]
    record.status = "settling"  # what a pass records for a session updated within the settle time
    state.put(record)
    state.close()
    assert "5 distilled, 1 junk, 1 settling, 0 held" in status().output
    assert json.loads(status("--json").output)["state"]["sessions"]["settling"] == 1


def test_memory_problems_show_the_first_few_and_the_total(home, fixture_db):
    assert CliRunner().invoke(cli, ["distill", "--settle", "0"]).exit_code == 0
    broken = home.global_root / "fact"
    broken.mkdir()
    for number in range(7):
        (broken / f"broken-{number}.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    data = json.loads(status("--json").output)
    (root,) = data["memory"]
    assert len(root["problems"]) == 5 and root["problems_total"] == 7
    assert "… and 2 more (`memoryd reindex` lists them all)" in status().output


def run_memoryd(cwd, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command, as a user types it, in `cwd` (the home fixture's environment)."""
    return subprocess.run([sys.executable, "-m", "daemon", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_inside_a_project_without_a_tree_it_says_how_to_opt_in(home, tmp_path):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    result = run_memoryd(project / "src", "status")
    assert result.returncode == 0, result.stderr
    assert f"This project ({project}) has no .memory/ folder" in result.stdout
    assert f"mkdir {project / '.memory'}" in result.stdout
    data = json.loads(run_memoryd(project, "status", "--json").stdout)
    assert data["here"]["notes_go_to"] == "global" and data["here"]["exists"] is False


def test_a_project_tree_is_listed_before_any_session_there_was_captured(home, tmp_path, fixture_db):
    assert CliRunner().invoke(cli, ["distill", "--settle", "0"]).exit_code == 0
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".memory").mkdir()
    text = run_memoryd(project, "status").stdout
    assert f"Memory (project): {project / '.memory'} — 0 memories" in text
    assert f"This project ({project}): memory tree {project / '.memory'}" in text
    assert "has no .memory/ folder" not in text


def test_trees_and_their_problems_are_listed_before_the_first_pass(home):
    # No state.db yet: the global tree (with a broken memory in it) is still shown.
    (home.global_root / "facts").mkdir(parents=True)
    (home.global_root / "facts" / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    (home.global_root / "facts" / "fine.md").write_text("---\ntitle: Fine\n---\nbody\n")
    text = status().output
    assert "run `memoryd distill`" in text
    assert f"Memory (global): {home.global_root} — 1 memories" in text
    assert "skipped: " in text and "broken.md" in text


def test_a_source_error_another_process_recorded_is_cleared_by_a_good_pass(home, fixture_db):
    # A daemon that ran before recorded the database as missing; the daemon running now
    # (this lock) never saw that error itself, and a good pass by `memoryd distill` came after.
    assert CliRunner().invoke(cli, ["distill", "--settle", "0"]).exit_code == 0
    _, paths = load_settings()
    state = StateDB(paths.state_db)
    state.set_meta("source_error", "2026-01-01T00:00:00Z OpenCode database not found")
    state.close()
    with InstanceLock(paths.lock_file, pid=4242):
        assert "not found" in status().output  # still holds: nothing read the source since
        assert CliRunner().invoke(cli, ["distill", "--settle", "0"]).exit_code == 0
        text = status().output
    assert "OpenCode database not found" not in text and "OpenCode database: " in text
    assert json.loads(status("--json").output)["source"]["ok"] is True


def test_an_error_of_a_session_that_got_its_note_since_is_shown_as_over(home, fixture_db):
    CliRunner().invoke(cli, ["distill", "--settle", "0"])
    _, paths = load_settings()
    state = StateDB(paths.state_db)
    done = state.records("distilled")[0]
    failed = state.records("distilled")[1]
    failed.status, failed.last_error = "failed", "model server said no"
    state.put(failed)
    state.log_error("timed out once", done.session_id)  # then distilled: over
    state.log_error("model server said no", failed.session_id)  # still failed: holds
    state.close()
    errors = {e["session_id"]: e for e in json.loads(status("--json").output)["state"]["errors"]}
    assert errors[done.session_id]["holds"] is False and errors[failed.session_id]["holds"] is True
    lines = [line for line in status().output.splitlines() if "timed out once" in line or "said no" in line]
    assert any("timed out once" in line and "(over:" in line for line in lines)
    assert all("(over:" not in line for line in lines if "said no" in line)
