"""Extracted memories (lessons, decisions from sessions) in a global tree shared through git:
a second machine distilling the same sessions rewrites nothing (`updated` is no change)."""

from __future__ import annotations

import shutil
import time

import frontmatter
import pytest

from tests.sync.test_git_trees import Machine, git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

EXTRACTED = ("lesson", "decision", "gotcha")


def extracted(machine: Machine) -> dict[str, list[str]]:
    """(kind/title) → the files that hold it, for every extracted memory in the tree."""
    found: dict[str, list[str]] = {}
    for kind in EXTRACTED:
        for path in sorted((machine.tree / kind).glob("*.md")):
            if path.name == "index.md":
                continue
            title = str(frontmatter.load(path).get("title", "")).casefold()
            found.setdefault(f"{kind}/{title}", []).append(path.name)
    return found


def test_a_second_home_distilling_the_same_sessions_leaves_git_clean(tmp_path, fixture_db):
    remote = tmp_path / "memory.git"
    one = Machine(tmp_path / "one", fixture_db)
    one.run("distill")
    one.run("compile")
    assert extracted(one), "the fixture's sessions state lessons or decisions"
    git(one.tree, "init", "-q", "-b", "main")
    git(one.tree, "add", "-A")
    git(one.tree, "commit", "-qm", "first machine")
    git(tmp_path, "clone", "-q", "--bare", str(one.tree), str(remote))
    git(one.tree, "remote", "add", "origin", str(remote))
    git(one.tree, "fetch", "-q", "origin")
    git(one.tree, "branch", "-q", "--set-upstream-to=origin/main")

    two = Machine(tmp_path / "two", shutil.copy(fixture_db, tmp_path / "second.db"))
    git(tmp_path, "clone", "-q", str(remote), str(two.tree))
    time.sleep(1.1)  # a later second: an `updated` time that moved would show
    two.run("distill")  # the same sessions, later, on another machine
    two.run("compile")
    assert two.clean(), git(two.tree, "status", "--porcelain") + git(two.tree, "diff")

    one.run("distill", "--force")  # the first machine again: still nothing to commit
    one.run("compile")
    assert one.clean(), git(one.tree, "status", "--porcelain") + git(one.tree, "diff")
    for machine in (one, two):
        assert all(len(files) == 1 for files in extracted(machine).values()), extracted(machine)
    assert extracted(one) == extracted(two)
