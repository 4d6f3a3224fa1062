"""Indexing what a writer has just written and parsed: `put_many`, no second read of the files."""

from __future__ import annotations

import os

from daemon.memory.tree import read_memory

from .conftest import NOW, write_memory


def _titles(index, root, query: str) -> list[str]:
    return [hit.memory.title for hit in index.search(query, [root], now=NOW).hits]


def test_put_many_indexes_what_was_parsed_and_a_sync_then_finds_nothing_to_do(global_root, index):
    paths = [write_memory(global_root.path, f"sessions/n{i}.md", f"title: Deploy note {i}", f"pnpm step {i}") for i in range(3)]
    written = []
    for path in paths:
        memory, warnings = read_memory(path, global_root)
        assert warnings == []
        written.append((memory, os.stat(path)))

    report = index.put_many(global_root, written)

    assert report.paths == {str(p) for p in paths} and report.categories == {"sessions"}
    assert sorted(_titles(index, global_root, "pnpm")) == ["Deploy note 0", "Deploy note 1", "Deploy note 2"]
    assert index.sync_root_report(global_root).changed == 0  # the walk finds them current
