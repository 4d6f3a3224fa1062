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


def _table(index, sql: str) -> list[tuple]:
    return [tuple(row) for row in index._db.execute(sql)]


def test_a_batch_put_stores_the_rows_one_at_a_time_puts_would(global_root, index, tmp_path):
    """The batch's text rows go in as one statement: the same rows, counts and matches as
    one put per memory, a rewritten memory's old tokens gone, a NUL in a body kept."""
    from daemon.memory.index import SearchIndex

    bodies = ["pnpm deploy step", "pnpm lint step", "cargo build\x00 step", "pnpm deploy again"]
    paths = [write_memory(global_root.path, f"sessions/n{i}.md", f"title: Note {i}", body) for i, body in enumerate(bodies)]
    parsed = [(read_memory(p, global_root)[0], os.stat(p)) for p in paths]
    one_by_one = SearchIndex(tmp_path / "single.db")
    for memory, st in parsed:
        one_by_one.put(memory, st)
    index.put_many(global_root, parsed[:1])
    index.put_many(global_root, [parsed[0], parsed[1], parsed[3]])  # one statement, n0 rewritten by it
    index.put_many(global_root, parsed[2:])  # the NUL: bound row by row

    for sql in (
        "SELECT d.path, t.preview, t.t_title, t.t_description, t.t_tags, t.t_body FROM doc d JOIN doc_text t ON t.rowid = d.rowid ORDER BY d.path",
        "SELECT term, docs FROM term ORDER BY term",
        "SELECT * FROM cat_tag ORDER BY root, category, tag",
    ):
        assert _table(index, sql) == _table(one_by_one, sql)
    assert sorted(_titles(index, global_root, "pnpm")) == ["Note 0", "Note 1", "Note 3"]
    assert _titles(index, global_root, "cargo") == ["Note 2"]
    index._db.execute("INSERT INTO doc_fts (doc_fts, rank) VALUES ('integrity-check', 1)")
    one_by_one.close()


def test_a_sync_told_what_its_writer_indexed_reads_only_what_moved_since(global_root, index, monkeypatch):
    """Fresh files are indexed with no signature (too recent to trust their stat); a sync
    given the writer's signatures (`known`) reads none still so, stores the signature of
    those now old enough, and reads a file changed since."""
    from daemon.memory import index as index_module
    from daemon.memory.index_rows import signature_text

    paths = [write_memory(global_root.path, f"sessions/n{i}.md", f"title: Note {i}", f"pnpm step {i}") for i in range(3)]
    written = [(read_memory(p, global_root)[0], os.stat(p)) for p in paths]
    index.put_many(global_root, written)
    known = {str(m.path): signature_text(st) for m, st in written}
    os.utime(paths[0], ns=(written[0][1].st_atime_ns, written[0][1].st_mtime_ns))  # ctime moves: no longer as written
    read: list[str] = []
    real = index_module.read_head
    monkeypatch.setattr(index_module, "read_head", lambda path, cap: read.append(str(path)) or real(path, cap))

    monkeypatch.setattr(index_module.time, "time_ns", lambda: written[-1][1].st_mtime_ns + 10**12)  # all old by now
    assert index.sync_root_report(global_root, known=known).changed == 0
    assert read == [str(paths[0])]
    read.clear()
    assert index.sync_root_report(global_root).changed == 0  # their signatures are stored: nothing to read
    assert read == []


def test_the_refresh_after_a_pass_does_not_read_back_the_notes_its_writer_indexed(global_root, index, monkeypatch):
    """`memoryd distill`'s refresh hands the writer's signatures on (`refresh_tree(known=)`):
    the notes still as written are compiled without being read again."""
    from daemon.memory import index as index_module
    from daemon.memory.index_rows import signature_text
    from daemon.memory.refresh import refresh_tree

    paths = [write_memory(global_root.path, f"sessions/n{i}.md", f"title: Note {i}", f"pnpm step {i}") for i in range(3)]
    written = [(read_memory(p, global_root)[0], os.stat(p)) for p in paths]
    synced = index.put_many(global_root, written)
    read: list[str] = []
    real = index_module.read_head
    monkeypatch.setattr(index_module, "read_head", lambda path, cap: read.append(str(path)) or real(path, cap))

    done = refresh_tree(index, global_root, synced=synced, known={str(m.path): signature_text(st) for m, st in written})

    assert read == []
    assert global_root.path / "sessions" / "index.md" in done.written
    assert "Note 1" in (global_root.path / "sessions" / "index.md").read_text()
