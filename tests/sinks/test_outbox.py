"""The outbox and its filler on a real state database and a real tree (no server needed)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from daemon.memory.roots import MemoryRoot
from daemon.sinks.fill import Filler
from daemon.sinks.outbox import DELETE, PUT, Outbox
from daemon.state import StateDB


@pytest.fixture
def outbox(tmp_path: Path):
    state = StateDB(tmp_path / "state" / "state.db")
    yield Outbox(state)
    state.close()


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    (tmp_path / "tree" / "sessions").mkdir(parents=True)
    (tmp_path / "tree" / "fact").mkdir()
    return MemoryRoot(tmp_path / "tree", "global")


def note(root: MemoryRoot, name: str, sid: str, body: str = "Worked on it.") -> Path:
    path = root.path / "sessions" / name
    path.write_text(f'---\ntitle: "{sid}"\nkind: "session"\nid: "{sid}"\nsession_id: "{sid}"\n---\n\n{body}\n')
    return path


def fact(root: MemoryRoot) -> Path:
    path = root.path / "fact" / "db.md"
    path.write_text('---\ntitle: "The db is SQLite"\nkind: "fact"\nid: "abc123def456"\n---\n\nWAL mode.\n')
    return path


def deliver_all(outbox: Outbox) -> None:
    """Stand in for a server that took everything queued."""
    entries = outbox.due(1000)
    puts = [e for e in entries if e.op == PUT]
    outbox.confirm_puts(puts, "dataset", [f"data-{e.doc_key}" for e in puts])
    for e in entries:
        if e.op == DELETE:
            outbox.confirm_delete(e)


def test_a_note_is_queued_once_until_its_content_changes(outbox, root):
    path = note(root, "a.md", "ses_a")
    filler = Filler(outbox, include_memories=False)
    assert filler.fill([root]).queued_puts == 1
    assert filler.fill([root]).queued_puts == 0  # already queued with this hash
    deliver_all(outbox)
    assert filler.fill([root]).queued_puts == 0  # delivered with this hash
    path.write_text(path.read_text().replace("Worked on it.", "Worked on it, then fixed CI."))
    assert filler.fill([root]).queued_puts == 1
    (entry,) = outbox.due(10)
    assert "fixed CI" in entry.content and entry.metadata["session_id"] == "ses_a"


def test_a_renamed_note_is_the_same_document(outbox, root):
    path = note(root, "a.md", "ses_a")
    filler = Filler(outbox, include_memories=False)
    filler.fill([root])
    deliver_all(outbox)
    path.rename(root.path / "sessions" / "renamed.md")
    report = filler.fill([root])
    assert (report.queued_puts, report.queued_deletes) == (0, 0)


def test_a_newer_version_replaces_the_queued_one(outbox, root):
    path = note(root, "a.md", "ses_a", "first")
    filler = Filler(outbox, include_memories=False)
    filler.fill([root])
    path.write_text(path.read_text().replace("first", "second"))
    filler.fill([root])
    (entry,) = outbox.due(10)
    assert "second" in entry.content


def test_deletions_only_for_delivered_documents_of_trees_that_were_read(outbox, root, tmp_path):
    gone_before_sending = note(root, "b.md", "ses_b")
    delivered = note(root, "a.md", "ses_a")
    filler = Filler(outbox, include_memories=False)
    filler.fill([root])
    outbox.confirm_puts([e for e in outbox.due(10) if e.doc_key == "ses_a"], "dataset", ["data-a"])
    gone_before_sending.unlink()
    delivered.unlink()
    report = filler.fill([MemoryRoot(tmp_path / "elsewhere", "global")])  # the tree is not there: no verdict
    assert report.queued_deletes == 0
    report = filler.fill([root])
    assert report.queued_deletes == 1
    assert {e.doc_key: e.op for e in outbox.due(10)} == {"ses_a": DELETE}


def test_memories_go_out_only_with_include_memories(outbox, root):
    note(root, "a.md", "ses_a")
    fact(root)
    assert Filler(outbox, include_memories=False).fill([root]).queued_puts == 1
    assert Filler(outbox, include_memories=True).fill([root]).queued_puts == 1  # the fact, now too
    kinds = sorted(e.metadata["kind"] for e in outbox.due(10))
    assert kinds == ["fact", "session"]


def test_a_failure_backs_off_and_a_push_retries_now(outbox, root):
    note(root, "a.md", "ses_a")
    Filler(outbox, include_memories=False).fill([root])
    entries = outbox.due(10)
    outbox.failed(entries, "Cognee unreachable", cap_s=600)
    assert outbox.due(10) == []
    assert outbox.next_due_ms() > time.time() * 1000
    assert outbox.stats()["last_error"] == "Cognee unreachable"
    outbox.failed([replace(e, attempts=1) for e in entries], "again", cap_s=600)
    outbox.retry_now()
    (entry,) = outbox.due(10)
    assert entry.attempts == 2


@pytest.mark.parametrize("discover", [True, False])
def test_a_sink_round_reads_the_trees_memoryd_knows_project_trees_only_with_discovery(home, tmp_path, monkeypatch, discover):
    from daemon.config import Config, load_settings
    from daemon.memory.roots import global_tree
    from daemon.sinks.run import Sink
    from daemon.state import SessionRecord

    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    project_tree = MemoryRoot(project / ".memory", "project")
    (project_tree.path / "sessions").mkdir(parents=True)
    note(project_tree, "p.md", "ses_project")
    monkeypatch.setenv("MEMORYD_SINKS__COGNEE__URL", "http://127.0.0.1:9")  # never asked: fill only
    monkeypatch.setenv("MEMORYD_MEMORY__DISCOVER_PROJECTS", str(discover).lower())
    settings, paths = load_settings()
    (global_tree(paths).path / "sessions").mkdir(parents=True)
    note(global_tree(paths), "g.md", "ses_global")
    state = StateDB(paths.state_db)
    try:
        state.put(SessionRecord(session_id="ses_project", project_dir=str(project / "src")))
        sink = Sink(Config(settings, paths), state)
        try:
            sink.fill()
            queued = {e.path for e in sink.outbox.due(100)}
        finally:
            sink.close()
    finally:
        state.close()
    expected = {"sessions/g.md", "sessions/p.md"} if discover else {"sessions/g.md"}
    assert {Path(p).relative_to(Path(p).parents[1]).as_posix() for p in queued} == expected
