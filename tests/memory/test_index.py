"""The search index: CJK recall, identifiers, ranking, incremental sync, precedence, problems."""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import UTC, datetime

import pytest

from daemon.memory import tokenize
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot

from .conftest import NOW, write_memory


def titles(result) -> list[str]:
    return [hit.memory.title for hit in result.hits]


@pytest.fixture
def corpus(global_root, index):
    """A mixed-language tree, indexed."""
    root = global_root.path
    write_memory(root, "gotcha/deploy.md", "title: 部署脚本\nupdated: 2025-01-01", "部署脚本用 pnpm 而不是 npm")
    write_memory(root, "fact/deploy-en.md", "title: Deploy notes\nupdated: 2025-01-02", "Deploying uses the blue-green script.")
    write_memory(root, "lesson/ja.md", "title: テストの実行\nupdated: 2025-01-03", "テストは pytest -q で実行する。")
    write_memory(root, "lesson/ko.md", "title: 마이그레이션\nupdated: 2025-01-04", "데이터베이스를 마이그레이션하기 전에 백업한다.")
    write_memory(
        root,
        "decision/ids.md",
        "title: Where the tree code lives\nupdated: 2025-01-05",
        "See daemon.memory.tree and src/app/main.py; the setting is busy_timeout_ms and the flag --dry-run.",
    )
    write_memory(root, "decision/migration.md", "title: Migration strategy\nupdated: 2025-01-06", "Expand, migrate, contract.")
    index.sync_root(global_root)
    return global_root


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("部署", "部署脚本"),
        ("pnpm 部署", "部署脚本"),
        ("テスト", "テストの実行"),
        ("実行", "テストの実行"),
        ("마이그레이션", "마이그레이션"),
        ("데이터베이스", "마이그레이션"),
    ],
)
def test_cjk_queries_find_their_notes(corpus, index, query, expected):
    result = index.search(query, [corpus], now=NOW)
    assert result.mode == "strict"
    assert titles(result) == [expected]


@pytest.mark.parametrize(
    "query",
    ["daemon.memory.tree", "memory", "src/app/main.py", "main.py", "busy_timeout_ms", "busy", "timeout", "dry-run", "--dry-run"],
)
def test_identifiers_are_found_whole_and_by_part(corpus, index, query):
    assert titles(index.search(query, [corpus], now=NOW)) == ["Where the tree code lives"]


def test_strict_miss_is_retried_as_prefix_or(corpus, index):
    result = index.search("migrat", [corpus], now=NOW)
    assert result.mode == "prefix"
    assert titles(result)[0] == "Migration strategy"
    # Every word must match in strict mode; "deploy zebra" has no such note, so prefixes answer.
    loose = index.search("deploy zebra", [corpus], now=NOW)
    assert loose.mode == "prefix" and titles(loose) == ["Deploy notes"]
    assert index.search("zebra", [corpus], now=NOW).mode == "none"


def test_equal_scores_go_newest_first(global_root, index):
    for day in (3, 1, 2):
        write_memory(global_root.path, f"fact/n{day}.md", f"title: Note {day}\nupdated: 2025-01-0{day}", "identical body about caching")
    index.sync_root(global_root)
    result = index.search("caching", [global_root], now=NOW)
    scores = {hit.score for hit in result.hits}
    assert len(scores) == 1
    assert titles(result) == ["Note 3", "Note 2", "Note 1"]


def test_title_match_outranks_body_mention(global_root, index):
    write_memory(global_root.path, "fact/a.md", "title: Something else\nupdated: 2025-02-01", "a passing mention of redis here")
    write_memory(global_root.path, "fact/b.md", "title: Redis eviction\nupdated: 2025-01-01", "allkeys-lru for the cache")
    index.sync_root(global_root)
    assert titles(index.search("redis", [global_root], now=NOW))[0] == "Redis eviction"


def test_hit_counters_nudge_but_do_not_override_relevance(global_root, index):
    write_memory(global_root.path, "fact/a.md", "title: A\nid: aaa\nupdated: 2025-01-02", "same words here")
    write_memory(global_root.path, "fact/b.md", "title: B\nid: bbb\nupdated: 2025-01-01", "same words here")
    write_memory(global_root.path, "fact/c.md", "title: words words words\nid: ccc", "words")
    index.sync_root(global_root)
    plain = titles(index.search("same words", [global_root], now=NOW))
    boosted = titles(index.search("same words", [global_root], now=NOW, hits={"bbb": 20}))
    assert plain == ["A", "B"] and boosted == ["B", "A"]
    assert titles(index.search("words", [global_root], now=NOW, hits={"aaa": 3}))[0] == "words words words"


def test_sync_is_incremental_by_hash(global_root, index):
    a = write_memory(global_root.path, "fact/a.md", "title: A", "alpha")
    write_memory(global_root.path, "fact/b.md", "title: B", "beta")
    assert index.sync_root(global_root) == 2
    assert index.sync_root(global_root) == 0
    # Touching a file (new mtime, same bytes) re-hashes it but changes nothing.
    later = time.time() + 10
    os.utime(a, (later, later))
    assert index.sync_root(global_root) == 0
    a.write_text(a.read_text().replace("alpha", "gamma"))
    assert index.sync_root(global_root) == 1
    assert titles(index.search("gamma", [global_root], now=NOW)) == ["A"]
    assert index.search("alpha", [global_root], now=NOW, prefix_retry=False).hits == []
    a.unlink()
    assert index.sync_root(global_root) == 1
    assert index.count() == 1


def test_update_and_remove_single_files(global_root, index):
    index.sync_root(global_root)
    path = write_memory(global_root.path, "fact/new.md", "title: Fresh", "kiwi")
    assert index.update_file_report(path, global_root).changed > 0
    assert titles(index.search("kiwi", [global_root], now=NOW)) == ["Fresh"]
    assert index.update_file_report(path, global_root).changed == 0  # same bytes: nothing to do
    path.unlink()
    assert index.update_file_report(path, global_root).changed > 0  # gone: removed
    assert index.count() == 0
    assert index.update_file_report(global_root.path / "fact" / "index.md", global_root).changed == 0


def test_rebuild_starts_from_scratch(global_root, project_root, index):
    write_memory(global_root.path, "fact/a.md", "title: A")
    write_memory(project_root.path, "fact/b.md", "title: B")
    index.sync_root(global_root)
    index.sync_root(project_root)
    assert index.rebuild([project_root]) == 1
    assert [r.path for r in index.known_roots()] == [project_root.path]


def test_broken_files_are_recorded_once_and_cleared_when_fixed(global_root, index):
    broken = global_root.path / "fact" / "broken.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\ntitle: [oops\n---\n")
    write_memory(global_root.path, "fact/bad-date.md", "title: Bad date\nexpires: someday")
    index.sync_root(global_root)
    problems = {p.path.name: p for p in index.problems(global_root)}
    assert problems["broken.md"].skipped and "broken YAML" in problems["broken.md"].reason
    assert not problems["bad-date.md"].skipped
    assert titles(index.search("bad date", [global_root], now=NOW)) == ["Bad date"]
    assert index.sync_root(global_root) == 0  # unchanged broken file: not re-read
    write_memory(global_root.path, "fact/broken.md", "title: Fixed now")
    index.sync_root(global_root)
    assert [p.path.name for p in index.problems(global_root)] == ["bad-date.md"]
    assert titles(index.search("fixed", [global_root], now=NOW)) == ["Fixed now"]


def test_expired_memories_are_not_recalled(global_root, index):
    write_memory(global_root.path, "fact/old.md", "title: Old outage\nexpires: 2025-05-01", "outage")
    write_memory(global_root.path, "fact/new.md", "title: New outage\nexpires: 2025-07-01", "outage")
    index.sync_root(global_root)
    assert titles(index.search("outage", [global_root], now=NOW)) == ["New outage"]
    assert [m.title for m in index.expired(global_root, NOW)] == ["Old outage"]


def test_project_memory_shadows_global_one_with_same_category_and_title(global_root, project_root, index):
    write_memory(global_root.path, "decision/pm.md", "title: Package manager", "global says npm")
    write_memory(project_root.path, "decision/pm.md", "title: package  MANAGER", "project says pnpm")
    write_memory(global_root.path, "fact/pm.md", "title: Package manager", "a fact of the same title in another category")
    write_memory(global_root.path, "decision/rule.md", "title: Never force-push\nhard_rule: true", "global rule")
    write_memory(project_root.path, "decision/rule.md", "title: Never force-push", "project version")
    index.sync_root(global_root)
    index.sync_root(project_root)
    both = [project_root, global_root]

    hits = index.search("package manager", both, now=NOW).hits
    assert [(h.memory.scope, h.memory.category) for h in hits] == [("project", "decision"), ("global", "fact")]
    # Alone, the global tree still shows its own entry.
    assert len(index.search("says npm", [global_root], now=NOW).hits) == 1
    # Listing keeps global hard rules even when shadowed; recall does not.
    listed = [(m.title, m.scope) for m in index.visible(both, NOW)]
    assert ("Never force-push", "global") in listed and ("Never force-push", "project") in listed
    assert ("Package manager", "global") in listed  # the fact, not the shadowed decision
    assert sum(1 for t, s in listed if t == "Package manager" and s == "global") == 1
    assert [h.memory.scope for h in index.search("force-push", both, now=NOW).hits] == ["project"]


def test_other_roots_are_invisible(global_root, project_root, index, tmp_path):
    other = MemoryRoot(tmp_path / "other" / ".memory", "project")
    write_memory(other.path, "fact/x.md", "title: Other project secret plan", "zanzibar")
    index.sync_root(other)
    assert index.search("zanzibar", [project_root, global_root], now=NOW).hits == []


def test_two_connections_share_the_index(global_root, index, tmp_path):
    write_memory(global_root.path, "fact/a.md", "title: A", "shared words")
    with SearchIndex(index.db_path) as other:
        other.sync_root(global_root)
        assert titles(index.search("shared", [global_root], now=NOW)) == ["A"]
    mode = sqlite3.connect(index.db_path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_a_new_index_has_8_kb_pages_and_an_old_one_keeps_its_own(tmp_path):
    with SearchIndex(tmp_path / "new.db") as index:
        assert index._db.execute("PRAGMA page_size").fetchone()[0] == 8192
    old = sqlite3.connect(tmp_path / "old.db")
    old.execute("PRAGMA page_size = 4096")
    old.execute("CREATE TABLE t (x)")
    old.close()
    with SearchIndex(tmp_path / "old.db") as index:  # rebuilt in place: same pages, still usable
        assert index._db.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert index.count() == 0


def test_a_tokenizer_change_rebuilds_the_index(global_root, index, monkeypatch):
    write_memory(global_root.path, "fact/a.md", "title: A", "words")
    index.sync_root(global_root)
    index.close()
    monkeypatch.setattr(tokenize, "TOKENIZER_VERSION", tokenize.TOKENIZER_VERSION + 1)
    with SearchIndex(index.db_path) as fresh:
        assert fresh.count() == 0
        assert fresh.sync_root(global_root) == 1


def test_search_is_bounded_by_limit(global_root, index):
    for i in range(30):
        write_memory(global_root.path, f"fact/m{i}.md", f"title: Memo {i}\nupdated: 2025-01-01T00:00:{i:02d}Z", "common")
    index.sync_root(global_root)
    result = index.search("common", [global_root], limit=7, now=datetime(2025, 6, 1, tzinfo=UTC))
    assert titles(result) == [f"Memo {i}" for i in range(29, 22, -1)]


def test_readers_are_not_blocked_by_a_writer_and_writers_wait_their_turn(global_root, index):
    import threading

    write_memory(global_root.path, "fact/a.md", "title: A", "wombat")
    index.sync_root(global_root)
    holder = sqlite3.connect(index.db_path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    try:
        # The writer holds its lock until after this read: a read that waited for it
        # would end in "database is locked", not in the hit (WAL: readers never wait).
        assert titles(index.search("wombat", [global_root], now=NOW)) == ["A"]
        write_memory(global_root.path, "fact/b.md", "title: B", "wombat")
        release.start()
        assert index.sync_root(global_root) == 1  # waited for the lock, then wrote
    finally:
        release.cancel()
        release.join()
        holder.close()


def test_a_symlink_leaving_the_tree_is_never_indexed(global_root, index, tmp_path):
    outside = write_memory(tmp_path / "elsewhere", "secret.md", "title: Outside", "platypus")
    link = global_root.path / "fact" / "link.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    index.sync_root(global_root)
    assert index.update_file_report(link, global_root).changed == 0
    assert index.search("platypus", [global_root], now=NOW).hits == []
    assert "outside the memory tree" in index.problems(global_root)[0].reason


def test_sync_report_names_the_categories_to_recompile(global_root, index):
    write_memory(global_root.path, "fact/a.md", "title: A")
    gone = write_memory(global_root.path, "lesson/b.md", "title: B")
    write_memory(global_root.path, "gotcha/c.md", "title: C")
    index.sync_root(global_root)
    later = time.time() - 60
    for path in global_root.path.rglob("*.md"):
        os.utime(path, (later, later))
    index.sync_root(global_root)
    write_memory(global_root.path, "fact/a.md", "title: A changed")
    gone.unlink()
    report = index.sync_root_report(global_root)
    assert (report.changed, report.categories) == (2, {"fact", "lesson"})
    assert index.sync_root_report(global_root).categories == set()


def test_a_session_notes_preview_starts_with_its_content():
    from daemon.memory.index import preview_of

    body = "> Source: OpenCode session `ses_1` · started 2026-11-30T09:24:51Z · project `/w`\n\n## What Was Worked On\n\n- Fix deploy"
    assert preview_of(body).startswith("## What Was Worked On")
    assert preview_of("Plain memory body.") == "Plain memory body."


def test_a_credential_in_a_hand_written_memory_is_not_copied_into_the_index(global_root, index, tmp_path):
    key = "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4nM6QwErTy"
    write_memory(
        global_root.path,
        "fact/deploy.md",
        f'title: "Deploy with {key}"\ndescription: "uses {key}"\ntags: [deploy]',
        f"The deploy job reads OPENAI_API_KEY={key} from the vault.",
    )
    index.sync_root(global_root)
    (hit,) = index.search("deploy vault", [global_root], now=NOW).hits
    assert "[REDACTED:openai_key]" in hit.memory.title
    index.close()
    raw = b"".join(p.read_bytes() for p in (tmp_path / "state").iterdir()).lower()
    assert key[8:20].lower().encode() not in raw


def _contents(index: SearchIndex) -> tuple[list, list, list, list]:
    db = index._db
    return (
        [tuple(r) for r in db.execute("SELECT path, title, category, tags, description, hash, mtime, sort_ts, sig FROM doc ORDER BY path")],
        [tuple(r) for r in db.execute("SELECT d.path, t.t_title, t.t_body FROM doc d JOIN doc_text t ON t.rowid = d.rowid ORDER BY d.path")],
        [tuple(r) for r in db.execute("SELECT term, docs FROM term ORDER BY term")],
        [tuple(r) for r in db.execute("SELECT root, category, tag, docs FROM cat_tag ORDER BY 1, 2, 3")],
    )


def test_a_batch_beyond_the_builds_parameter_limit_is_indexed_whole(global_root, tmp_path):
    """A sync writes its memories' rows a batch per statement; a SQLite built with a low
    parameter limit (999 in old builds) gets several statements, and the same index."""
    for i in range(40):
        write_memory(global_root.path, f"c{i % 3}/m{i}.md", f"title: note {i}\ntags: [t{i % 4}]", f"Body {i} about deploy {i % 5}.")
    with SearchIndex(tmp_path / "whole.db") as whole, SearchIndex(tmp_path / "chunked.db") as chunked:
        chunked._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100)  # four rows a statement
        for idx in (whole, chunked):
            idx.sync_root(global_root)
        assert len(_contents(whole)[0]) == 40
        assert _contents(chunked) == _contents(whole)
        # Changed and removed memories are upserted the same way.
        for i in range(0, 40, 3):
            write_memory(global_root.path, f"c{i % 3}/m{i}.md", f"title: renamed {i}\ntags: [x]", f"Now about lockfiles {i}.")
        os.unlink(global_root.path / "c1" / "m1.md")
        for idx in (whole, chunked):
            idx.sync_root(global_root)
        assert _contents(chunked) == _contents(whole)
        assert ("x",) in {(tag,) for _, _, tag, _ in _contents(whole)[3]}
        assert titles(chunked.search("lockfiles", [global_root], limit=50)) == titles(whole.search("lockfiles", [global_root], limit=50)) != []
