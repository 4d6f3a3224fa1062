"""The daemon's folder → trees cache: each answer is what `open_workspace` says now, on
real folders changed under it (a `git init` below, a `.git` removed, a worktree moved, a
symlink repointed, a `.memory` made)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from daemon.config import Config, load_settings
from daemon.memory.index import open_index
from daemon.memory.workspace import WorkspaceCache, open_workspace


@pytest.fixture
def setup(home, tmp_path: Path):
    settings, paths = load_settings()
    config = Config(settings, paths)
    index = open_index(config)
    yield config, index, WorkspaceCache(), tmp_path / "w"
    index.close()


def same(cache: WorkspaceCache, config: Config, index, folder: Path | None) -> tuple:
    """What the cache answers, asserted equal to what a fresh resolution answers."""
    kept = cache.open(config, folder, index)
    fresh = open_workspace(config, folder, index=index)
    got = (kept.global_root, kept.project, kept.project_is_real)
    assert got == (fresh.global_root, fresh.project, fresh.project_is_real)
    assert kept.index is index and not kept.trust_index
    return got


def test_an_unchanged_folder_is_kept_and_gives_the_same_trees(setup) -> None:
    config, index, cache, w = setup
    app = w / "repo" / "src" / "app"
    app.mkdir(parents=True)
    (w / "repo" / ".git").mkdir()
    first = same(cache, config, index, app)
    assert first[1].path == (w / "repo" / ".memory").resolve() and first[2]
    assert len(cache._kept) == 1
    entry = next(iter(cache._kept.values()))
    for _ in range(3):
        assert same(cache, config, index, app) == first
    assert next(iter(cache._kept.values())) is entry, "checked, not resolved again"
    assert same(cache, config, index, None)[1] is None


def test_git_init_below_and_a_removed_git_are_noticed(setup) -> None:
    config, index, cache, w = setup
    app = w / "repo" / "src" / "app"
    app.mkdir(parents=True)
    (w / "repo" / ".git").mkdir()
    assert same(cache, config, index, app)[1].path == (w / "repo" / ".memory").resolve()
    (w / "repo" / "src" / ".git").mkdir()  # a nested repository: its tree now
    assert same(cache, config, index, app)[1].path == (w / "repo" / "src" / ".memory").resolve()
    (w / "repo" / "src" / ".git").rmdir()
    assert same(cache, config, index, app)[1].path == (w / "repo" / ".memory").resolve()
    (w / "repo" / ".git").rmdir()  # in no worktree at all
    assert same(cache, config, index, app)[2] is False
    (w / "repo" / ".git").write_text("gitdir: /elsewhere\n")  # a linked worktree's .git file
    assert same(cache, config, index, app)[2] is True


def test_a_moved_worktree_and_a_repointed_symlink_are_noticed(setup) -> None:
    config, index, cache, w = setup
    for name in ("a", "b"):
        (w / name / "src").mkdir(parents=True)
        (w / name / ".git").mkdir()
    link = w / "current"
    link.symlink_to(w / "a")
    assert same(cache, config, index, link / "src")[1].path == (w / "a" / ".memory").resolve()
    link.unlink()
    link.symlink_to(w / "b")
    assert same(cache, config, index, link / "src")[1].path == (w / "b" / ".memory").resolve()
    os.rename(w / "b", w / "b-moved")  # the worktree moved away: its folder is gone
    assert same(cache, config, index, link / "src")[2] is False
    shutil.copytree(w / "a", w / "b")  # another worktree moved in at that path
    (w / "elsewhere").mkdir()
    (w / "b" / ".memory").symlink_to(w / "elsewhere")
    # Its `.memory`, a link out of the project, is seen, and refused (memory.follow_outside_links).
    assert same(cache, config, index, link / "src")[1].outside == (w / "elsewhere").resolve()


def test_a_new_memory_folder_and_global_tree_are_seen(setup) -> None:
    config, index, cache, w = setup
    (w / "repo" / ".git").mkdir(parents=True)
    before = cache.open(config, w / "repo", index)
    assert not before.project.exists() and not before.global_root.exists()
    (w / "repo" / ".memory").mkdir()
    config.paths.global_root.mkdir(parents=True)
    after = same(cache, config, index, w / "repo")
    assert after[1].exists() and after[0].exists()
    cache.clear()
    assert cache._kept == {}
    assert same(cache, config, index, w / "repo") == after
