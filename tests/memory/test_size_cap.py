"""A memory file over memory.max_file_bytes: indexed by its head, reported, never read whole."""

from __future__ import annotations

from daemon.memory.index import SearchIndex
from daemon.memory.workspace import Workspace

from .conftest import NOW, write_memory

CAP = 8192


def big_memory(root, name="fact/huge.md"):
    # The head holds a word; the tail, far past the cap, another. A CJK run puts a
    # multi-byte character across the cut.
    body = "zebrahead starts here.\n" + "部署" * 3000 + "\n" + "filler line\n" * 20_000 + "tailword ends here.\n"
    return write_memory(root.path, name, "title: Huge log dump", body)


def test_a_file_over_the_cap_is_indexed_by_its_head_and_reported(tmp_path, global_root):
    path = big_memory(global_root)
    assert path.stat().st_size > 20 * CAP
    with SearchIndex(tmp_path / "index.db", max_file_bytes=CAP) as index:
        index.sync_root(global_root)
        assert [m.title for m in index.memories(global_root)] == ["Huge log dump"]
        assert [h.memory.path for h in index.search("zebrahead", [global_root], now=NOW).hits] == [path]
        assert index.search("tailword", [global_root], now=NOW).hits == []
        (problem,) = index.problems(global_root)
        assert problem.path == path and not problem.skipped
        assert "over memory.max_file_bytes (8192)" in problem.reason and str(path.stat().st_size) in problem.reason

        # Appending to the tail changes the file, not its head: nothing to re-index.
        with path.open("a") as handle:
            handle.write("more tail\n")
        assert index.sync_root(global_root) == 0


def test_inspect_shows_the_head_and_says_it_was_cut(tmp_path, global_root, project_root, clock):
    from daemon.memory.commands import inspect

    path = big_memory(global_root)
    with SearchIndex(tmp_path / "index.db", max_file_bytes=CAP) as index:
        ws = Workspace(index, global_root, project_root, True, clock)
        ws.refresh()
        (memory,) = index.memories(global_root)
        detail = inspect(ws, memory.id)
    assert detail.text.startswith("---\ntitle: Huge log dump")
    assert len(detail.text.encode()) < CAP + 200
    assert f"the file has {path.stat().st_size} bytes" in detail.text
