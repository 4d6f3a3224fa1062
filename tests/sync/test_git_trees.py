"""Memory trees kept in git across machines (real git, two homes in temp dirs)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from daemon.capture.notefind import session_id_of
from daemon.cli.main import cli
from daemon.memory.gitignore import merge, render_block

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "memoryd test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "memoryd test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


class Machine:
    """One home: its own XDG folders and state, the shared OpenCode database."""

    def __init__(self, root: Path, opencode_db: Path) -> None:
        self.root = root
        self.env = {
            "HOME": str(root), "XDG_CONFIG_HOME": str(root / ".config"), "XDG_DATA_HOME": str(root / ".local/share"),
            "XDG_STATE_HOME": str(root / ".local/state"), "OPENCODE_DB": str(opencode_db),
        }
        self.tree = root / ".config" / "opencode" / "memory"

    def run(self, *args: str) -> str:
        result = CliRunner().invoke(cli, list(args), env=self.env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    def notes(self) -> dict[str, list[str]]:
        """Session id → the note files that carry it."""
        found: dict[str, list[str]] = {}
        for path in sorted((self.tree / "sessions").glob("*.md")):
            sid = session_id_of(path)
            if sid:
                found.setdefault(sid, []).append(path.name)
        return found

    def compiled(self) -> dict[str, bytes]:
        return {p.relative_to(self.tree).as_posix(): p.read_bytes()
                for p in [self.tree / "ROOT.md", *self.tree.glob("*/index.md"), self.tree / ".gitignore"]}

    def clean(self) -> bool:
        return git(self.tree, "status", "--porcelain") == ""


def test_two_homes_share_a_global_tree_through_git(tmp_path, fixture_db):
    remote = tmp_path / "memory.git"
    one = Machine(tmp_path / "one", fixture_db)
    one.run("distill")
    one.run("compile")
    git(one.tree, "init", "-q", "-b", "main")
    git(one.tree, "add", "-A")
    git(one.tree, "commit", "-qm", "first machine")
    # A note renamed by hand keeps its session: the other machine must find it by id.
    renamed_sid, names = next(iter(one.notes().items()))
    git(one.tree, "mv", f"sessions/{names[0]}", "sessions/renamed-by-hand.md")
    one.run("compile")
    git(one.tree, "add", "-A")
    git(one.tree, "commit", "-qm", "rename a note")
    git(tmp_path, "clone", "-q", "--bare", str(one.tree), str(remote))
    git(one.tree, "remote", "add", "origin", str(remote))
    git(one.tree, "fetch", "-q", "origin")
    git(one.tree, "branch", "-q", "--set-upstream-to=origin/main")

    two = Machine(tmp_path / "two", fixture_db)
    git(tmp_path, "clone", "-q", str(remote), str(two.tree))
    two.run("distill")  # the same sessions, from the same database
    two.run("compile")
    two.run("recall", "deploy")  # recall counters live in the state folder: nothing in the tree
    assert not (two.tree / ".state.json").exists()
    git(two.tree, "add", "-A")
    if not two.clean():
        git(two.tree, "commit", "-qm", "second machine")
    git(two.tree, "push", "-q", "origin", "main")
    git(one.tree, "pull", "-q", "--ff-only")
    git(two.tree, "pull", "-q", "--ff-only")

    for machine in (one, two):
        notes = machine.notes()
        assert all(len(files) == 1 for files in notes.values()), notes
        assert notes[renamed_sid] == ["renamed-by-hand.md"]
        machine.run("compile")
        assert machine.clean(), git(machine.tree, "status", "--porcelain")
    assert one.notes() == two.notes()
    assert one.compiled() == two.compiled()
    assert git(one.tree, "check-ignore", ".state.json", ".expired/x.md").split() == [".state.json", ".expired/x.md"]


def test_the_gitignore_block_keeps_the_users_lines():
    mine = "node_modules/\n*.swp\n"
    merged = merge(mine)
    assert merged.startswith(mine) and render_block() in merged
    assert merge(merged) == merged  # written once, then left alone
    changed = merged.replace("/.expired/", "/.old/")
    assert merge(changed) == merged  # memoryd's own block is brought back to what it writes


def test_a_pull_under_the_running_daemon_is_reconciled_without_writes(tmp_path, fixture_db, daemon, notify):
    from tests.service.conftest import wait_for

    remote = tmp_path / "memory.git"
    one = Machine(tmp_path / "one", fixture_db)
    one.run("distill")
    one.run("compile")
    git(one.tree, "init", "-q", "-b", "main")
    git(one.tree, "add", "-A")
    git(one.tree, "commit", "-qm", "first machine")
    git(tmp_path, "clone", "-q", "--bare", str(one.tree), str(remote))
    git(one.tree, "remote", "add", "origin", str(remote))
    git(one.tree, "fetch", "-q", "origin")
    git(one.tree, "branch", "-q", "--set-upstream-to=origin/main")

    daemon.env.update(one.env)
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), 30, "READY=1")
    wait_for(one.clean, 10, "the daemon to settle on the committed tree")

    two = Machine(tmp_path / "two", fixture_db)
    git(tmp_path, "clone", "-q", str(remote), str(two.tree))
    two.run("remember", "--global", "-k", "gotcha", "-t", "Staging needs the VPN", "Connect first, then deploy.")
    two.run("compile")
    sid, names = next(iter(two.notes().items()))
    git(two.tree, "mv", f"sessions/{names[0]}", "sessions/kept-by-its-session.md")
    two.run("compile")
    git(two.tree, "add", "-A")
    git(two.tree, "commit", "-qm", "a memory and a renamed note")
    git(two.tree, "push", "-q", "origin", "main")

    git(one.tree, "pull", "-q", "--ff-only")
    wait_for(lambda: "Staging needs the VPN" in one.run("recall", "VPN"), 20, "the pulled memory in one's index")
    one.run("distill")  # a pass after the pull: the renamed note is the session's note
    assert one.clean(), git(one.tree, "status", "--porcelain")
    assert one.notes()[sid] == ["kept-by-its-session.md"]
    assert all(len(files) == 1 for files in one.notes().values())
    assert one.compiled() == two.compiled()
    assert daemon.stop() == 0
