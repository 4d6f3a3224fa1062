"""Incremental compile: a known change edits its index.md line in place and leaves ROOT.md
alone when its tables cannot move; the bytes are always those of a full compile."""

from __future__ import annotations

import random

import pytest

from daemon.memory.category_index import render_category_index, splice_category_index
from daemon.memory.compile import compile_root
from daemon.memory.queries import IndexEntry

from .conftest import write_memory

TITLES = ["Alpha", "alpha", "Beta [draft]", "back\\slash", "部署脚本", "Zeta", "zeta two", "a]b", "Émile", "Same"]


def entry(title: str, filename: str, description: str = "") -> IndexEntry:
    from daemon.memory.tree import title_key

    return IndexEntry("fact", filename, title, title_key(title), description, (), (), False)


def test_a_spliced_file_is_the_rendered_file():
    rng = random.Random(3)
    entries = {f"m{n}.md": entry(rng.choice(TITLES), f"m{n}.md", rng.choice(["", "why"])) for n in range(30)}
    entries["odd name (1).md"] = entry("Odd", "odd name (1).md")
    text = render_category_index("fact", list(entries.values()))
    for step in range(200):
        name = rng.choice([*entries, f"new{step}.md"])
        if name in entries and rng.random() < 0.3:
            del entries[name]
            new = None
        else:
            new = entries[name] = entry(rng.choice(TITLES) + rng.choice(["", " x"]), name, rng.choice(["", "d"]))
        text = splice_category_index(text, "fact", name, new)
        assert text == render_category_index("fact", list(entries.values()))


def test_a_file_that_is_not_as_rendered_is_not_spliced():
    text = render_category_index("fact", [entry("B", "b.md"), entry("A", "a.md")])
    assert splice_category_index(text.replace("# fact", "# other"), "fact", "c.md", None) is None
    assert splice_category_index(text.replace("- [A](a.md)", "- A, by hand"), "fact", "0.md", entry("0", "0.md")) is None
    assert splice_category_index(text.rstrip("\n"), "fact", "c.md", None) is None


@pytest.fixture
def tree(global_root, index):
    rng = random.Random(5)
    for n in range(40):
        extra = "\nscenarios: [deploy work]" if n % 9 == 0 else ""
        write_memory(global_root.path, f"{rng.choice(['fact', 'runbook'])}/m{n}.md", f"title: {rng.choice(TITLES)} {n}\ntags: [t{n % 3}]{extra}", "body")
    index.sync_root(global_root)
    compile_root(global_root, index)
    return global_root


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_known_changes_compile_to_the_bytes_of_a_full_compile(tree, index, seed):
    rng = random.Random(seed)
    for step in range(25):
        category = rng.choice(["fact", "runbook"])
        path = tree.path / category / f"m{rng.randrange(50)}.md"
        roll = rng.random()
        if roll < 0.2 and path.exists():
            path.unlink()
        else:
            fields = f"title: {rng.choice(TITLES)} {step}\ntags: [t{rng.randrange(4)}]"
            if roll > 0.8:
                fields += "\nhard_rule: true" if roll > 0.9 else "\nscenarios: [review]"
            write_memory(tree.path, f"{category}/{path.name}", fields, "body")
        compile_root(tree, index, changes=index.update_file_report(path, tree))
        assert compile_root(tree, index) == []  # a full compile finds nothing left to write


def test_a_change_outside_rooted_tables_does_not_touch_root_md(tree, index):
    path = tree.path / "fact" / "quiet.md"
    write_memory(tree.path, "fact/quiet.md", "title: Quiet\ntags: [t1]", "first")
    compile_root(tree, index, changes=index.update_file_report(path, tree))
    write_memory(tree.path, "fact/quiet.md", "title: Quiet renamed\ntags: [t1]", "second")
    changes = index.update_file_report(path, tree)
    assert not changes.root_tables
    assert compile_root(tree, index, changes=changes) == [tree.path / "fact" / "index.md"]
    write_memory(tree.path, "fact/quiet.md", "title: Quiet renamed\ntags: [t2]", "second")
    assert index.update_file_report(path, tree).root_tables  # a tag: the registry may move


def test_refresh_paths_reads_only_the_named_files_and_writes_nothing_when_they_did_not_change(tmp_path):
    import os
    import time

    from daemon.memory.index import SearchIndex
    from daemon.memory.refresh import refresh_paths, refresh_tree
    from daemon.memory.roots import MemoryRoot
    from tests.memory.conftest import write_memory

    root = MemoryRoot(tmp_path / "tree", "global")
    a = write_memory(root.path, "fact/a.md", "title: Port is 8080\nkind: fact\nid: a")
    b = write_memory(root.path, "fact/b.md", "title: Host is db1\nkind: fact\nid: b")
    old = time.time() - 3600
    for path in (a, b):
        os.utime(path, (old, old))
    with SearchIndex(tmp_path / "index.db") as index:
        refresh_tree(index, root)
        index_md = root.path / "fact" / "index.md"
        a.write_text("---\ntitle: Port is 9090\nkind: fact\nid: a\n---\n\nBody.\n")
        b.write_text("---\ntitle: Host is db2\nkind: fact\nid: b\n---\n\nBody.\n")
        done = refresh_paths(index, root, {a})  # the watcher named a only
        assert done.changed == 1 and index_md in done.written
        text = index_md.read_text()
        assert "Port is 9090" in text and "Host is db1" in text  # b waits for its own event (or a sync)
        again = refresh_paths(index, root, {a})
        assert again.changed == 0 and again.written == []
        gone = refresh_paths(index, root, {b.parent / "never-was.md"})
        assert gone.changed == 0 and gone.written == []
        b.unlink()
        assert refresh_paths(index, root, {b}).changed == 1
        assert "Host is" not in index_md.read_text()


def test_an_edit_another_sync_indexed_first_is_still_compiled_when_its_event_arrives(tmp_path):
    # The sweep (or a sink fill, or `memoryd status`) may sync the index between a
    # person's edit and the watcher's event: the event finds the index current, and the
    # edit must still reach index.md (it once stayed stale until the next edit).
    from daemon.memory.index import SearchIndex
    from daemon.memory.refresh import refresh_paths, refresh_tree
    from daemon.memory.roots import MemoryRoot

    root = MemoryRoot(tmp_path / "tree", "global")
    a = write_memory(root.path, "fact/a.md", "title: API port 8082\nkind: fact\nid: a")
    with SearchIndex(tmp_path / "index.db") as index:
        refresh_tree(index, root)
        index_md = root.path / "fact" / "index.md"
        a.write_text("---\ntitle: API port 8083\nkind: fact\nid: a\n---\n\nBody.\n")
        assert index.sync_root(root) == 1  # the sweep got there first, and compiles nothing of it
        done = refresh_paths(index, root, {a})
        assert done.changed == 0 and index_md in done.written
        assert "API port 8083" in index_md.read_text() and "8082" not in index_md.read_text()
        assert refresh_paths(index, root, {a}).written == []  # already said: nothing rewritten
