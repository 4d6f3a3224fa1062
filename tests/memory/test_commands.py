"""remember / recall / forget / inspect / list on real trees."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from daemon.memory.checks import parse_expiry
from daemon.memory.commands import (
    INVENTORY_CHARS,
    delete_memories,
    forget_by_id,
    forget_by_query,
    inspect,
    inventory,
    list_memories,
    recall,
    remember,
)
from daemon.memory.frontmatter import split_document
from daemon.memory.roots import MemoryRoot
from daemon.memory.tree import read_memory
from daemon.memory.workspace import InvalidInput, MemoryNotFound, SecretRefused, Workspace

from .conftest import NOW, write_memory


def tree_files(root: MemoryRoot) -> list[str]:
    return sorted(str(p.relative_to(root.path)) for p in root.path.rglob("*") if p.is_file())


# --- remember -------------------------------------------------------------------------


def test_remember_writes_a_memory_compiles_and_indexes_it(ws, project_root):
    result = remember(ws, kind="Decision", title="Use WAL mode", body="SQLite runs in WAL. Sessions never queue.", tags=["db,sqlite"])
    assert result.created
    path = project_root.path / "decision" / "use-wal-mode.md"
    assert result.memory.path == path
    fields = split_document(path.read_text()).fields
    assert fields["title"] == "Use WAL mode" and fields["kind"] == "decision"
    assert fields["tags"] == ["db", "sqlite"]
    assert fields["description"] == "SQLite runs in WAL."
    assert fields["created"] == fields["updated"] == NOW
    assert len(fields["id"]) == 12
    assert tree_files(project_root) == ["ROOT.md", "decision/index.md", "decision/use-wal-mode.md"]
    assert "[Use WAL mode](use-wal-mode.md)" in (project_root.path / "decision/index.md").read_text()
    assert [h.memory.id for h in recall(ws, "wal").hits] == [fields["id"]]


def test_same_scope_and_title_updates_the_same_file(ws, project_root, clock):
    first = remember(ws, kind="fact", title="CI runner", body="Runner A.")
    clock.now = NOW + timedelta(days=1)
    second = remember(ws, kind="fact", title="  ci   RUNNER ", body="Runner B.")
    assert not second.created
    assert second.memory.path == first.memory.path
    assert second.memory.id == first.memory.id
    assert second.memory.created == NOW and second.memory.updated == NOW + timedelta(days=1)
    assert second.memory.body == "Runner B."
    assert tree_files(project_root).count("fact/ci-runner.md") == 1
    assert len(list((project_root.path / "fact").glob("*.md"))) == 2  # the memory and index.md


def test_upsert_keeps_unknown_fields_of_the_file_byte_for_byte(ws, project_root):
    path = write_memory(
        project_root.path,
        "fact/port.md",
        "title: Ollama port\nowner:   team-infra   # who to ask\nlinks:\n  - https://example.org/a\ncreated: 2024-01-01",
        "old",
    )
    result = remember(ws, kind="fact", title="Ollama port", body="11434")
    text = path.read_text()
    assert "owner:   team-infra   # who to ask\nlinks:\n  - https://example.org/a\ncreated: 2024-01-01\n" in text
    assert result.memory.created == datetime(2024, 1, 1, tzinfo=UTC)
    # The derived id people may already use is written down, so it survives later moves.
    assert split_document(text).fields["id"] == result.memory.id


def test_a_new_kind_moves_the_memory_instead_of_duplicating_it(ws, project_root):
    first = remember(ws, kind="fact", title="Retry 429s", body="Back off.")
    second = remember(ws, kind="lesson", title="Retry 429s", body="Back off exponentially.")
    assert second.moved_from == first.memory.path and not first.memory.path.exists()
    assert second.memory.path == project_root.path / "lesson" / "retry-429s.md"
    assert second.memory.id == first.memory.id
    assert "_No memories in this folder._" in (project_root.path / "fact/index.md").read_text()


def test_different_titles_with_the_same_slug_get_distinct_files(ws, project_root):
    a = remember(ws, kind="fact", title="Use WAL!", body="a")
    b = remember(ws, kind="fact", title="Use WAL?", body="b")
    assert a.memory.path != b.memory.path
    assert b.memory.path.name == "use-wal-2.md"


def test_titles_cannot_escape_the_tree_or_take_compiled_names(ws, project_root, tmp_path):
    for title in ("../../../etc/passwd", "..", "/abs/path", "index", "ROOT"):
        result = remember(ws, kind="fact", title=title, body="x")
        assert result.memory.path.parent == project_root.path / "fact"
    assert not (tmp_path / "etc").exists()
    assert sorted(p.name for p in project_root.path.iterdir()) == ["ROOT.md", "fact"]
    names = sorted(p.name for p in (project_root.path / "fact").iterdir())
    assert names == ["abs-path.md", "etc-passwd.md", "index-memory.md", "index.md", "root-memory.md", "untitled.md"]


@pytest.mark.parametrize("kind", ["../x", ".expired", "a/b", "x" * 33, "", "dé cision"])
def test_unusable_kinds_are_refused(ws, project_root, kind):
    with pytest.raises(InvalidInput, match="kind"):
        remember(ws, kind=kind, title="T", body="b")
    assert not any(project_root.path.iterdir())  # nothing written


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("body", "the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123"),
        ("title", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("kind", "xoxb-1234567890-abcdefghij"),
        ("tags", "AKIAABCDEFGHIJKLMNOP"),
        ("description", "password=hunter2hunter2"),
    ],
)
def test_credentials_are_refused_and_nothing_is_written(ws, project_root, field, value):
    args = {"kind": "fact", "title": "A title", "body": "A body", "tags": [], "description": None}
    args[field] = [value] if field == "tags" else value
    with pytest.raises(SecretRefused) as caught:
        remember(ws, **args)
    assert field in str(caught.value) and "Nothing was written" in str(caught.value)
    assert value not in str(caught.value)
    assert not any(project_root.path.iterdir())  # nothing written


def test_an_env_reference_is_not_a_secret(ws):
    result = remember(ws, kind="fact", title="Where the key is", body="api_key=$OPENAI_API_KEY in .env")
    assert result.created


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"title": ""}, "title is empty"),
        ({"title": "x" * 121}, "keep it under"),
        ({"body": "  "}, "body is empty"),
        ({"tags": [",".join(f"t{i}" for i in range(13))]}, "at most 12 tags"),
        ({"expires": "yesterday"}, "--expires"),
        ({"expires": "2020-01-01"}, "already past"),
    ],
)
def test_bad_input_says_what_to_do(ws, args, message):
    base = {"kind": "fact", "title": "T", "body": "b"}
    with pytest.raises(InvalidInput, match=message):
        remember(ws, **{**base, **args})


def test_expiry_accepts_dates_datetimes_and_durations():
    assert parse_expiry("2025-12-31", NOW).isoformat() == "2025-12-31"
    assert parse_expiry("30d", NOW) == NOW + timedelta(days=30)
    assert parse_expiry("12h", NOW) == NOW + timedelta(hours=12)
    assert parse_expiry("2025-06-02T00:00:00Z", NOW) == datetime(2025, 6, 2, tzinfo=UTC)
    # Today still counts: a date keeps the memory through that day.
    assert parse_expiry(NOW.date().isoformat(), NOW) == NOW.date()


def test_global_flag_and_projectless_callers(ws, global_root, index):
    remember(ws, kind="fact", title="GPU", body="Ollama on 11434", scope="global")
    assert (global_root.path / "fact" / "gpu.md").exists()
    loose = Workspace(index, global_root, MemoryRoot(global_root.path.parent / "loose" / ".memory", "project"), False)
    with pytest.raises(InvalidInput, match="--global"):
        remember(loose, kind="fact", title="X", body="y")


# --- recall ---------------------------------------------------------------------------


def test_recall_previews_bodies_and_clamps_the_limit(ws, project_root):
    remember(ws, kind="fact", title="Long one", body="word " * 400)
    result = recall(ws, "word", limit=500)
    assert result.limit == 50
    preview = result.hits[0].preview
    assert len(preview) <= 501 and preview.endswith("…")
    assert recall(ws, "word", limit=0).limit == 1


def test_recall_sees_files_edited_by_hand_without_a_daemon(ws, project_root):
    remember(ws, kind="fact", title="Cache", body="redis")
    write_memory(project_root.path, "fact/hand.md", "title: Written by hand", "memcached")
    assert [h.memory.title for h in recall(ws, "memcached").hits] == ["Written by hand"]


def test_recall_counts_hits_in_the_state_folder_never_in_the_tree(ws, project_root):
    saved = remember(ws, kind="fact", title="Counted", body="abacus")
    tree_before = {p: p.read_bytes() for p in project_root.path.rglob("*") if p.is_file()}
    recall(ws, "abacus")
    recall(ws, "abacus")
    # Nothing in the tree changed (a git worktree's `git status` stays clean)...
    assert {p: p.read_bytes() for p in project_root.path.rglob("*") if p.is_file()} == tree_before
    # ...the counters live beside the search index.
    state = json.loads((ws.index.db_path.parent / "hits.json").read_text())
    assert state["hits"] == {saved.memory.id: 2}
    assert inspect(ws, saved.memory.id).hits == 2


def test_recall_scope_and_empty_queries(ws):
    remember(ws, kind="fact", title="Project thing", body="shared term")
    remember(ws, kind="fact", title="Global thing", body="shared term", scope="global")
    assert {h.memory.scope for h in recall(ws, "shared", scope="all").hits} == {"project", "global"}
    assert [h.memory.scope for h in recall(ws, "shared", scope="global").hits] == ["global"]
    with pytest.raises(InvalidInput):
        recall(ws, "   ")
    with pytest.raises(InvalidInput, match="no searchable words"):
        recall(ws, "!!! ???")


# --- forget ---------------------------------------------------------------------------


def test_forget_by_id_works_from_anywhere(ws, index, global_root, tmp_path):
    other_root = MemoryRoot(tmp_path / "other" / ".memory", "project")
    other_root.path.mkdir(parents=True)
    other_ws = Workspace(index, global_root, other_root, True, ws.clock)
    saved = remember(other_ws, kind="fact", title="In another project", body="x")
    result = forget_by_id(ws, saved.memory.id)
    assert [m.id for m in result.deleted] == [saved.memory.id]
    assert not saved.memory.path.exists()
    assert other_root.path / "fact/index.md" in result.compiled
    with pytest.raises(MemoryNotFound, match="memoryd list"):
        forget_by_id(ws, saved.memory.id)


def test_forget_by_query_never_leaves_the_callers_scope(ws, index, global_root, tmp_path):
    other_ws = Workspace(index, global_root, MemoryRoot(tmp_path / "other" / ".memory", "project"), True, ws.clock)
    other_ws.project.path.mkdir(parents=True)
    theirs = remember(other_ws, kind="fact", title="Staging host old", body="old staging host")
    mine = remember(ws, kind="fact", title="Staging host", body="old staging host")
    shared = remember(ws, kind="fact", title="Global staging", body="old staging host", scope="global")
    unrelated = remember(ws, kind="fact", title="Staging DNS", body="staging dns only")

    candidates = forget_by_query(ws, "old staging host")
    assert {m.id for m in candidates} == {mine.memory.id, shared.memory.id}
    assert mine.memory.path.exists()  # nothing deleted before confirmation

    delete_memories(ws, candidates)
    assert not mine.memory.path.exists() and not shared.memory.path.exists()
    assert theirs.memory.path.exists() and unrelated.memory.path.exists()
    with pytest.raises(InvalidInput, match="outside"):
        delete_memories(ws, [unrelated.memory, theirs.memory])
    assert theirs.memory.path.exists() and unrelated.memory.path.exists()  # all or nothing


def test_forget_by_query_needs_every_word(ws):
    remember(ws, kind="fact", title="Migration strategy", body="expand contract")
    assert forget_by_query(ws, "migrat") == []


# --- inspect / inventory / list -------------------------------------------------------


def test_inspect_reads_the_file_fresh(ws):
    saved = remember(ws, kind="fact", title="Inspect me", body="first")
    saved.memory.path.write_text(saved.memory.path.read_text().replace("first", "second"))
    detail = inspect(ws, saved.memory.id)
    assert detail.memory.body == "second" and "second" in detail.text
    with pytest.raises(MemoryNotFound):
        inspect(ws, "000000000000")


def test_list_is_newest_first_with_a_kind_filter(ws, clock):
    for day, (kind, title) in enumerate([("fact", "Oldest"), ("lesson", "Middle"), ("fact", "Newest")]):
        clock.now = NOW + timedelta(days=day)
        remember(ws, kind=kind, title=title, body="b")
    assert [m.title for m in list_memories(ws)] == ["Newest", "Middle", "Oldest"]
    assert [m.title for m in list_memories(ws, kind="FACT")] == ["Newest", "Oldest"]


def test_list_hides_expired_memories(ws, clock):
    remember(ws, kind="fact", title="Short lived", body="b", expires="1d")
    clock.now = NOW + timedelta(days=2)
    assert list_memories(ws) == []


def test_inventory_puts_lessons_first_and_stays_within_budget(ws, clock):
    for i in range(40):
        clock.now = NOW + timedelta(hours=i)
        remember(ws, kind="fact", title=f"Fact number {i} with a reasonably long title", body="b")
    clock.now = NOW - timedelta(days=30)
    remember(ws, kind="lesson", title="An old lesson", body="b")
    inv = inventory(ws)
    lines = inv.text.splitlines()
    assert len(inv.text) <= INVENTORY_CHARS
    assert lines[1].startswith("- [lesson] An old lesson")
    assert "Fact number 39" in lines[2]  # then newest
    assert inv.total == 41 and inv.shown < 41
    assert lines[-1].startswith(f"… {41 - inv.shown} more")
    assert "b\n" not in inv.text  # no bodies


def test_session_notes_are_ordinary_memories(ws, project_root):
    write_memory(
        project_root.path,
        "sessions/2025-06-01-fix-ci.md",
        """
        title: Fix flaky CI
        description: Pinned pnpm.
        kind: session
        session_id: ses_1
        project: /home/me/app
        started: 2025-06-01T09:00:00Z
        updated: 2025-06-01T10:00:00Z
        tags: [ci]
        """,
        "## What Was Worked On\n\nThe CI cache step flaked.",
    )
    hits = recall(ws, "flaked").hits
    assert [(h.memory.kind, h.memory.category) for h in hits] == [("session", "sessions")]
    assert [m.kind for m in list_memories(ws, kind="session")] == ["session"]


def test_delete_tolerates_files_already_gone(ws):
    saved = remember(ws, kind="fact", title="Gone", body="b")
    saved.memory.path.unlink()
    assert [m.id for m in delete_memories(ws, [saved.memory]).deleted] == [saved.memory.id]


def test_read_back_of_what_remember_wrote(ws):
    saved = remember(ws, kind="gotcha", title="部署脚本用 pnpm", body="部署脚本用 pnpm 而不是 npm", expires="2025-12-31")
    memory, warnings = read_memory(saved.memory.path, saved.memory.root)
    assert warnings == [] and memory.title == "部署脚本用 pnpm"
    assert memory.expires == datetime(2026, 1, 1, tzinfo=UTC)
    assert Path(saved.memory.path).name == "部署脚本用-pnpm.md"


def test_a_hand_made_folder_name_is_not_a_change_of_kind(ws, project_root):
    path = write_memory(project_root.path, "decisions/wal.md", "title: Use WAL\nkind: decision\nid: keepme", "old")
    result = remember(ws, kind="decision", title="Use WAL", body="new")
    assert result.memory.path == path and result.moved_from is None
    assert "new" in path.read_text() and not (project_root.path / "decision").exists()


def test_a_trusted_index_skips_the_tree_check_for_known_trees_only(ws, index, global_root, project_root):
    remember(ws, kind="fact", title="Known", body="alpha")
    write_memory(project_root.path, "fact/by-hand.md", "title: By hand", "alpha beta")
    trusting = Workspace(index, global_root, project_root, True, ws.clock, trust_index=True)
    # The project tree is known to the index: a trusting reader does not re-check it...
    assert [h.memory.title for h in recall(trusting, "beta").hits] == []
    # ...but a tree the index has never seen is still read.
    remember(ws, kind="fact", title="Global", body="gamma", scope="global")
    index.forget_root(global_root)
    assert [h.memory.title for h in recall(trusting, "gamma").hits] == ["Global"]
    assert [h.memory.title for h in recall(ws, "beta").hits] == ["By hand"]


def test_remember_never_overwrites_a_session_note_with_the_same_title(ws):
    """A note the capture pipeline owns stays intact; the memory is a new file beside it."""
    note = ws.global_root.path / "sessions" / "2026-11-30-fix-deploy-q0T2CLlw.md"
    note.parent.mkdir(parents=True)
    original = '---\ntitle: "Fix deploy script"\nkind: "session"\nid: "ses_1"\nsession_id: "ses_1"\n---\n\n## What Was Worked On\n\n- deploy\n'
    note.write_text(original)
    ws.refresh()
    saved = remember(ws, kind="gotcha", title="Fix deploy script", body="Use pnpm deploy.", scope="global")
    assert note.read_text() == original
    assert saved.created and saved.moved_from is None
    assert saved.memory.path != note and saved.memory.path.parent.name == "gotcha"


def test_remember_reads_and_parses_the_file_it_updates_at_most_twice(ws, monkeypatch):
    import daemon.memory.commands as commands_module
    import daemon.memory.frontmatter as frontmatter_module

    first = remember(ws, kind="fact", title="Ollama port", body="11434")
    parsed: list[str] = []
    real_split = frontmatter_module.split_document

    def counting_split(text: str):
        parsed.append(text)
        return real_split(text)

    monkeypatch.setattr(frontmatter_module, "split_document", counting_split)
    monkeypatch.setattr(commands_module, "split_document", counting_split)
    second = remember(ws, kind="fact", title="Ollama port", body="11434, also on the CI runner")
    # Once to read the current file, once to check the rewrite reads back; the index
    # takes the memory from that parse instead of reading the file again.
    assert len(parsed) == 2
    assert second.memory.id == first.memory.id and not second.created
    assert "CI runner" in second.memory.body
    assert [m.path for m in ws.index.find_by_title(first.memory.root, "Ollama port")] == [first.memory.path]
    assert recall(ws, "runner").hits[0].memory.id == first.memory.id


def test_a_project_without_a_tree_is_not_opted_in_so_remember_goes_global_and_says_so(index, global_root, worktree, clock):
    project = MemoryRoot(worktree / ".memory", "project")
    ws = Workspace(index, global_root, project, True, clock)
    result = remember(ws, kind="fact", title="Port", body="8080")
    assert not project.path.exists()  # memoryd never creates a project's .memory/
    assert result.memory.root == global_root and result.memory.path.parent.parent == global_root.path
    assert "no memory tree" in result.note and str(project.path) in result.note
    assert (global_root.path / "ROOT.md").exists() and (global_root.path / "fact" / "index.md").exists()

    project.path.mkdir()  # the project opts in
    mine = remember(ws, kind="fact", title="Port", body="8081")
    assert mine.memory.root == project and mine.note == ""
