"""Compiled index.md and ROOT.md: exact output, hand-written parts kept, no needless writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from daemon.memory.compile import compile_root, sync_and_compile

from .conftest import write_memory

GOLDEN = Path(__file__).parent / "golden"


def compile_tree(index, root):
    """What `memoryd compile` does for one root: sync the index, compile from it; the files written."""
    return sync_and_compile(index, root).compiled.written


def assert_golden(actual: str, name: str) -> None:
    """Compare with tests/memory/golden/<name>; UPDATE_GOLDEN=1 rewrites the file."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8")


def build_tree(root: Path) -> None:
    """A small tree with every feature compile renders: kinds, scenarios, rules, odd names."""
    write_memory(
        root,
        "decision/use-wal-mode.md",
        """
        title: Use WAL mode
        description: SQLite in WAL so concurrent sessions do not queue.
        scenarios: [opening the database, tuning sqlite]
        hard_rule: true
        """,
    )
    write_memory(root, "decision/adr-2.md", "title: Adopt pnpm\ndescription: One lockfile | one truth.")
    write_memory(
        root,
        "gotcha/deploy.md",
        """
        title: 部署脚本用 pnpm
        description: 部署脚本用 pnpm 而不是 npm
        scenarios: deploying
        """,
    )
    write_memory(root, "gotcha/brackets [x].md", "title: Title with [brackets]")
    write_memory(root, "runbooks/restart.md", "title: Restart the API\ntags: [ops, api]\nhard_rule: true")
    write_memory(
        root,
        "sessions/2025-06-01-fix-ci.md",
        """
        title: Fix flaky CI
        description: Pinned pnpm and retried the cache step.
        kind: session
        session_id: ses_123
        project: /home/me/app
        started: 2025-06-01T09:00:00Z
        updated: 2025-06-01T10:00:00Z
        tags: [ci]
        """,
    )
    (root / "assets").mkdir()  # a folder without memories gets no index


def test_compile_output_matches_the_golden_files(index, global_root):
    build_tree(global_root.path)
    written = compile_tree(index, global_root)
    root = global_root.path
    assert set(written) == {
        root / "ROOT.md",
        root / "decision/index.md",
        root / "gotcha/index.md",
        root / "runbooks/index.md",
        root / "sessions/index.md",
    }
    assert_golden((root / "ROOT.md").read_text(), "ROOT.md")
    assert_golden((root / "decision/index.md").read_text(), "decision-index.md")
    assert_golden((root / "gotcha/index.md").read_text(), "gotcha-index.md")
    assert not (root / "assets" / "index.md").exists()


def test_compiling_from_the_index_gives_the_same_bytes(global_root, index):
    build_tree(global_root.path)
    index.sync_root(global_root)
    compile_root(global_root, index)
    root = global_root.path
    assert_golden((root / "ROOT.md").read_text(), "ROOT.md")
    assert_golden((root / "decision/index.md").read_text(), "decision-index.md")
    assert compile_tree(index, global_root) == []  # and a full sync agrees: nothing to rewrite


def test_limiting_categories_rewrites_only_those_and_root_md(global_root, index):
    build_tree(global_root.path)
    index.sync_root(global_root)
    compile_root(global_root, index)
    write_memory(global_root.path, "decision/new.md", "title: New decision")
    write_memory(global_root.path, "gotcha/new.md", "title: New gotcha")
    index.sync_root(global_root)
    written = compile_root(global_root, index, categories={"decision"})
    assert written == [global_root.path / "decision/index.md", global_root.path / "ROOT.md"]
    assert "New gotcha" not in (global_root.path / "gotcha/index.md").read_text()
    assert "| [gotcha](gotcha/index.md) | 3 |" in (global_root.path / "ROOT.md").read_text()


def test_second_compile_writes_nothing(index, global_root):
    build_tree(global_root.path)
    compile_tree(index, global_root)
    stamps = {p: p.stat().st_mtime_ns for p in global_root.path.rglob("*.md")}
    assert compile_tree(index, global_root) == []
    assert {p: p.stat().st_mtime_ns for p in global_root.path.rglob("*.md")} == stamps


def test_hand_written_parts_of_root_md_survive_exactly(index, global_root):
    build_tree(global_root.path)
    compile_tree(index, global_root)
    root_md = global_root.path / "ROOT.md"
    text = root_md.read_text()
    mine_top = "# My memory\n\n## Goals\n\n- Ship v2 without downtime.\n\n## Rules I wrote\n\n1. Never push on Fridays.\n\n"
    start = text.index("<!-- memoryd:begin registry")
    mine_bottom = "\n## Notes\n\nTrailing words, no final newline"
    root_md.write_text(mine_top + text[start:].rstrip("\n") + "\n" + mine_bottom)
    # Someone edits inside a generated block; a new memory arrives.
    root_md.write_text(root_md.read_text().replace("| Category |", "| Hacked |"))
    write_memory(global_root.path, "lesson/retry.md", "title: Retry with backoff")

    assert compile_tree(index, global_root) == [global_root.path / "lesson/index.md", root_md]

    result = root_md.read_text()
    assert result.startswith(mine_top)
    assert result.endswith(mine_bottom)
    assert "| Hacked |" not in result
    assert "[lesson](lesson/index.md) | 1 |" in result


def test_missing_root_md_is_created_with_blocks_and_empty_goals(index, project_root):
    write_memory(project_root.path, "fact/a.md", "title: A")
    compile_tree(index, project_root)
    text = (project_root.path / "ROOT.md").read_text()
    assert text.startswith("# Memory: app\n")
    assert "## Goals\n\n<!-- memoryd:begin registry" in text
    for name in ("registry", "routing", "hard-rules"):
        assert f"<!-- memoryd:begin {name} " in text and f"<!-- memoryd:end {name} -->" in text


def test_a_block_deleted_by_hand_comes_back_at_the_end(index, global_root):
    write_memory(global_root.path, "fact/a.md", "title: A\nscenarios: [x]")
    (global_root.path / "ROOT.md").write_text("# Mine\n\nOnly my text.\n")
    compile_tree(index, global_root)
    text = (global_root.path / "ROOT.md").read_text()
    assert text.startswith("# Mine\n\nOnly my text.\n\n<!-- memoryd:begin registry")
    assert "| x | [A](fact/a.md) |" in text


def swap_lines(text: str, first: str, second: str) -> str:
    lines = text.split("\n")
    a = next(i for i, line in enumerate(lines) if line.startswith(first))
    b = next(i for i, line in enumerate(lines) if line.startswith(second))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t.replace("<!-- memoryd:end routing -->\n", ""),
        lambda t: t + "\n<!-- memoryd:begin registry -->\n",
        lambda t: swap_lines(t, "<!-- memoryd:begin routing", "<!-- memoryd:end routing"),
    ],
    ids=["unpaired", "duplicated", "end-before-begin"],
)
def test_damaged_markers_leave_root_md_alone_and_say_so(index, global_root, damage):
    write_memory(global_root.path, "fact/a.md", "title: A")
    compile_tree(index, global_root)
    root_md = global_root.path / "ROOT.md"
    broken = damage(root_md.read_text())
    root_md.write_text(broken)
    write_memory(global_root.path, "fact/b.md", "title: B")

    report = sync_and_compile(index, global_root).compiled

    assert root_md.read_text() == broken
    assert root_md not in report.written
    assert [p.path for p in report.problems] == [root_md]
    assert "marker" in report.problems[0].reason


def test_hand_written_index_md_is_not_overwritten(index, global_root):
    write_memory(global_root.path, "fact/a.md", "title: A")
    mine = global_root.path / "fact" / "index.md"
    mine.write_text("# My own index\n")
    report = sync_and_compile(index, global_root).compiled
    assert mine.read_text() == "# My own index\n"
    assert report.problems and "hand-written index.md" in report.problems[0].reason


def test_index_of_an_emptied_category_says_so(index, global_root):
    memory = write_memory(global_root.path, "fact/a.md", "title: A")
    compile_tree(index, global_root)
    memory.unlink()
    compile_tree(index, global_root)
    assert "_No memories in this folder._" in (global_root.path / "fact/index.md").read_text()
    assert "_No memories yet" in (global_root.path / "ROOT.md").read_text()


def test_compiled_files_keep_the_mode_a_person_gave_them(index, global_root):
    write_memory(global_root.path, "fact/a.md", "title: A")
    compile_tree(index, global_root)
    root_md = global_root.path / "ROOT.md"
    root_md.chmod(0o644)
    write_memory(global_root.path, "fact/b.md", "title: B")
    compile_tree(index, global_root)
    assert root_md.stat().st_mode & 0o777 == 0o644


def test_a_crlf_root_md_keeps_its_line_endings(index, global_root):
    write_memory(global_root.path, "fact/a.md", "title: A")
    (global_root.path / "ROOT.md").write_bytes(b"# Mine\r\n\r\nWindows text.\r\n")
    compile_tree(index, global_root)
    data = (global_root.path / "ROOT.md").read_bytes()
    assert data.startswith(b"# Mine\r\n\r\nWindows text.\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert compile_tree(index, global_root) == []


def test_compiling_one_category_also_compiles_those_never_compiled(index, global_root):
    # Notes written before any compile (distill without the daemon), then a memory elsewhere.
    write_memory(global_root.path, "sessions/2025-06-01-deploy.md", "title: Deploy fix\nkind: session")
    write_memory(global_root.path, "fact/port.md", "title: Port")
    index.sync_root(global_root)
    written = compile_root(global_root, index, categories={"fact"})
    root_md = (global_root.path / "ROOT.md").read_text()
    assert "(sessions/index.md)" in root_md
    assert global_root.path / "sessions/index.md" in written  # no link to a file that does not exist
    assert "Deploy fix" in (global_root.path / "sessions/index.md").read_text()
