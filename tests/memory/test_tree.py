"""Memory files and trees: parsing, precise rewrites, roots, and files that must be skipped."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from daemon.memory.frontmatter import MemoryFileError, edit_memory, parse_time, render_memory, split_document
from daemon.memory.roots import MemoryRoot, classify_path, project_root_of
from daemon.memory.tree import read_memory

from .conftest import write_memory


def synced(index, root):
    """The memories and problems of a root as memoryd reads them: through the search index."""
    index.sync_root(root)
    return index.memories(root), index.problems(root)


def test_fields_are_read_with_sensible_fallbacks(global_root):
    path = write_memory(
        global_root.path,
        "decision/wal.md",
        """
        title: Use WAL mode
        description: Sessions must not queue.
        tags: db, sqlite
        scenarios: [opening the database]
        hard_rule: true
        created: 2025-01-02
        updated: 2025-01-03T10:00:00Z
        expires: 2025-12-31
        owner: me
        """,
    )
    memory, warnings = read_memory(path, global_root)
    assert warnings == []
    assert (memory.title, memory.kind, memory.category) == ("Use WAL mode", "decision", "decision")
    assert memory.tags == ("db", "sqlite")
    assert memory.scenarios == ("opening the database",)
    assert memory.hard_rule is True
    assert memory.created == datetime(2025, 1, 2, tzinfo=UTC)
    # A bare expiry date keeps the memory through that whole day.
    assert memory.expires == datetime(2026, 1, 1, tzinfo=UTC)
    assert memory.body == "Body."


def test_title_falls_back_to_heading_then_file_name(global_root):
    with_heading = write_memory(global_root.path, "fact/a.md", "kind: fact", "# The heading\n\ntext")
    bare = write_memory(global_root.path, "fact/port-map.md", "kind: fact", "text")
    assert read_memory(with_heading, global_root)[0].title == "The heading"
    assert read_memory(bare, global_root)[0].title == "port-map"


def test_a_file_without_an_id_gets_a_stable_derived_one(global_root):
    path = write_memory(global_root.path, "fact/x.md", "title: X")
    first = read_memory(path, global_root)[0].id
    assert first == read_memory(path, global_root)[0].id
    other = MemoryRoot(global_root.path.parent / "elsewhere", "project")
    assert first != read_memory(path, other)[0].id


def test_a_bad_date_is_a_warning_not_a_skip(global_root):
    path = write_memory(global_root.path, "fact/x.md", "title: X\nexpires: soon")
    memory, warnings = read_memory(path, global_root)
    assert memory.expires is None
    assert len(warnings) == 1 and "expires" in warnings[0].reason and not warnings[0].skipped


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("just text, no frontmatter\n", "no frontmatter"),
        ("---\ntitle: x\nno end\n", "not closed"),
        ("---\ntitle: [broken\n---\nbody\n", "broken YAML"),
        ("---\n- a list\n---\nbody\n", "not a set of"),
    ],
)
def test_unusable_files_are_reported_with_the_reason(text, reason):
    with pytest.raises(MemoryFileError, match=reason):
        split_document(text)


def test_sync_skips_and_reports_broken_files_without_touching_them(index, global_root):
    good = write_memory(global_root.path, "fact/good.md", "title: Good")
    broken = global_root.path / "fact" / "broken.md"
    broken.write_text("---\ntitle: [oops\n---\n")
    plain = global_root.path / "fact" / "notes.md"
    plain.write_text("no frontmatter here\n")
    before = {p: p.read_bytes() for p in (broken, plain)}

    memories, problems = synced(index, global_root)

    assert [m.path for m in memories] == [good]
    assert {p.path for p in problems} == {broken, plain}
    assert all(p.read_bytes() == data for p, data in before.items())


def test_sync_ignores_compiled_hidden_and_nested_files(index, global_root):
    write_memory(global_root.path, "fact/a.md", "title: A")
    (global_root.path / "fact" / "index.md").write_text("generated")
    (global_root.path / "ROOT.md").write_text("# root")
    write_memory(global_root.path, ".expired/fact/old.md", "title: Old")
    write_memory(global_root.path, ".git/x.md", "title: Git")
    write_memory(global_root.path, "fact/deeper/n.md", "title: Nested")
    memories, problems = synced(index, global_root)
    assert [m.title for m in memories] == ["A"]
    assert problems == []


def test_symlinks_leaving_the_root_and_loops_are_reported_not_followed(index, global_root, tmp_path):
    outside = write_memory(tmp_path / "outside", "secret.md", "title: Outside")
    folder = global_root.path / "fact"
    write_memory(global_root.path, "fact/real.md", "title: Real")
    (folder / "escape.md").symlink_to(outside)
    (folder / "loop.md").symlink_to(folder / "loop.md")
    (global_root.path / "linked").symlink_to(outside.parent, target_is_directory=True)
    (folder / "alias.md").symlink_to(folder / "real.md")

    memories, problems = synced(index, global_root)

    assert [m.title for m in memories] == ["Real"]  # the in-tree alias is the same file, listed once
    reasons = {p.path.name: p.reason for p in problems}
    assert "outside the memory tree" in reasons["escape.md"]
    assert "outside the memory tree" in reasons["linked"]
    assert "loop" in reasons["loop.md"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_reported(index, global_root):
    path = write_memory(global_root.path, "fact/locked.md", "title: Locked")
    path.chmod(0)
    try:
        _, problems = synced(index, global_root)
    finally:
        path.chmod(0o600)
    assert problems and "unreadable" in problems[0].reason


def test_the_index_rereads_a_file_rewritten_with_the_same_size(index, global_root):
    path = write_memory(global_root.path, "fact/a.md", "title: AAAA")
    assert synced(index, global_root)[0][0].title == "AAAA"
    path.write_text(path.read_text().replace("AAAA", "BBBB"))
    # Same size, possibly the same mtime tick: the racy-file rule still re-reads it.
    assert synced(index, global_root)[0][0].title == "BBBB"


def test_edit_keeps_unknown_fields_comments_and_order_byte_for_byte():
    original = (
        "---\n"
        "title: Old title\n"
        "# a comment the owner wrote\n"
        "custom:\n"
        "  nested: [1, 2]   # odd spacing kept\n"
        "tags:\n"
        "- a\n"
        "- b\n"
        "weird_key: 'single quoted'\n"
        "updated: 2025-01-01\n"
        "---\n"
        "\n"
        "Old body.\n"
    )
    edited = edit_memory(original, {"title": "New: title", "updated": datetime(2025, 6, 1, tzinfo=UTC), "tags": ["x"]}, "New body.")
    assert edited == (
        "---\n"
        'title: "New: title"\n'
        "# a comment the owner wrote\n"
        "custom:\n"
        "  nested: [1, 2]   # odd spacing kept\n"
        "tags: [x]\n"
        "weird_key: 'single quoted'\n"
        "updated: 2025-06-01T00:00:00Z\n"
        "---\n"
        "\n"
        "New body.\n"
    )


def test_edit_appends_missing_fields_and_keeps_the_body_when_not_given():
    original = "---\ntitle: T\n---\nbody stays\n"
    edited = edit_memory(original, {"id": "abc123"})
    assert edited == "---\ntitle: T\nid: abc123\n---\nbody stays\n"


def test_edit_refuses_yaml_it_cannot_change_safely():
    original = "---\nbase: &b {x: 1}\ntitle: T\nother: *b\n---\nbody\n"
    with pytest.raises(MemoryFileError):
        edit_memory(original, {"base": "changed"})


def test_render_quotes_what_yaml_needs_and_reads_back():
    text = render_memory(
        {"id": "1", "title": "a: b # c", "tags": ["x, y", "z"], "created": datetime(2025, 1, 1, tzinfo=UTC), "expires": date(2025, 2, 1)},
        "body",
    )
    fields = split_document(text).fields
    assert fields["title"] == "a: b # c"
    assert fields["tags"] == ["x, y", "z"]
    assert parse_time(fields["expires"]) == datetime(2025, 2, 1, tzinfo=UTC)


def test_project_root_is_the_worktree_top_with_symlinks_resolved(worktree, tmp_path):
    deep = worktree / "src" / "pkg"
    deep.mkdir(parents=True)
    link = tmp_path / "link-to-app"
    link.symlink_to(worktree, target_is_directory=True)
    assert project_root_of(deep) == worktree.resolve()
    assert project_root_of(link / "src") == worktree.resolve()
    loose = tmp_path / "not-a-repo"
    loose.mkdir()
    assert project_root_of(loose) == loose.resolve()


def test_linked_git_worktree_is_its_own_project(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    try:
        subprocess.run([*git, "init", "-q", str(main)], check=True)
        subprocess.run([*git, "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
        subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt"], check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    (tmp_path / "wt" / "sub").mkdir()
    top = subprocess.run(["git", "-C", str(tmp_path / "wt" / "sub"), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
    assert project_root_of(tmp_path / "wt" / "sub") == Path(top.stdout.strip()).resolve() == (tmp_path / "wt").resolve()


def test_classify_path_tells_the_watcher_what_matters(global_root):
    r = global_root.path
    assert classify_path(global_root, r / "fact" / "a.md") == "memory"
    assert classify_path(global_root, r / "fact" / "index.md") == "compiled"
    assert classify_path(global_root, r / "ROOT.md") == "compiled"
    for ignored in (r / ".state.json", r / ".expired" / "fact" / "a.md", r / "fact" / ".memoryd-tmp-x", r / "fact" / "a.txt", r.parent / "x.md"):
        assert classify_path(global_root, ignored) == "ignored"


def test_a_file_that_is_not_utf8_is_reported(index, global_root):
    path = global_root.path / "fact" / "latin1.md"
    path.parent.mkdir(parents=True)
    path.write_bytes("---\ntitle: café\n---\n".encode("latin-1"))
    _, problems = synced(index, global_root)
    assert [(p.path, p.reason) for p in problems] == [(path, "not UTF-8 text")]


def test_dates_yaml_cannot_build_are_broken_yaml_not_a_crash(index, global_root):
    path = write_memory(global_root.path, "fact/x.md", "title: X\ncreated: 2025-13-45")
    _, problems = synced(index, global_root)
    assert problems and problems[0].path == path


def test_discovery_lists_only_trees_that_exist_global_first(home, worktree):
    from daemon.config import Config, load_settings
    from daemon.memory.roots import MemoryRoot, discover_roots

    settings, paths = load_settings()
    (worktree / "src").mkdir()
    config = Config(settings, paths)
    assert discover_roots(config, [worktree]) == []
    (worktree / ".memory").mkdir()
    project = MemoryRoot(worktree / ".memory", "project")
    assert discover_roots(config, [worktree / "src"]) == [project]
    home.global_root.mkdir(parents=True)
    assert discover_roots(config, [worktree / "src"]) == [MemoryRoot(home.global_root, "global"), project]


def test_a_broken_file_is_logged_once_not_on_every_sync(index, global_root, caplog):
    broken = global_root.path / "fact" / "broken.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\ntitle: [oops\n---\n")
    with caplog.at_level("WARNING", logger="memoryd.memory.tree"):
        index.sync_root(global_root)
        index.sync_root(global_root)
    warnings = [r for r in caplog.records if r.getMessage() == "memory.file_problem" and "broken.md" in r.path]
    assert len(warnings) == 1 and "broken YAML" in warnings[0].reason
