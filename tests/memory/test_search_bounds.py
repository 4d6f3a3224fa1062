"""Bounded search: the term table stays exact through every write, and the caps on what
BM25 weighs and ranks give the full ranking's answer whenever the matches fit in them."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from daemon.memory import search
from daemon.memory.search import rarest_within_budget

from .conftest import NOW, write_memory


def term_table(index) -> dict[str, int]:
    return dict(index._db.execute("SELECT term, docs FROM term"))


def counted_from_streams(index) -> dict[str, int]:
    """What the term table must hold: each token counted once per memory that has it."""
    counts: Counter[str] = Counter()
    for row in index._db.execute("SELECT t_title, t_description, t_tags, t_body FROM doc_text"):
        counts.update({token for stream in row for token in stream.split()})
    return dict(counts)


def test_the_term_table_follows_adds_edits_and_deletes(global_root, index):
    root = global_root.path
    first = write_memory(root, "fact/a.md", "title: Alpha deploy", "deploy the alpha build, deploy again")
    write_memory(root, "fact/b.md", "title: Beta", "deploy beta 部署")
    index.sync_root(global_root)
    assert term_table(index) == counted_from_streams(index)
    assert term_table(index)["deploy"] == 2  # memories, not occurrences

    first.write_text("---\ntitle: Alpha\n---\n\nrollback only\n", encoding="utf-8")
    index.update_file_report(first, global_root)
    assert term_table(index) == counted_from_streams(index)
    assert term_table(index)["deploy"] == 1

    (root / "fact" / "b.md").unlink()
    index.sync_root(global_root)
    assert term_table(index) == counted_from_streams(index)
    assert "部署" not in term_table(index)

    index.remove_file(first)
    assert term_table(index) == {}


def test_forgetting_a_root_takes_its_terms(global_root, project_root, index):
    write_memory(global_root.path, "fact/g.md", "title: Global words", "shared globalonly")
    write_memory(project_root.path, "fact/p.md", "title: Project words", "shared projectonly")
    index.sync_root(global_root)
    index.sync_root(project_root)
    index.forget_root(project_root)
    assert term_table(index) == counted_from_streams(index)
    assert "projectonly" not in term_table(index)
    assert term_table(index)["shared"] == 1


def test_rarest_terms_within_budget_always_keep_the_rarest():
    counts = {"common": 5000, "rare": 3, "mid": 1500}
    assert rarest_within_budget(["common", "rare", "mid"], counts, 2000) == ["rare", "mid"]
    assert rarest_within_budget(["common"], counts, 2000) == ["common"]
    assert rarest_within_budget(["common", "absent"], counts, 2000) == ["absent"]


@pytest.fixture
def crowd(global_root, index):
    """Forty memories that all hold 'deploy'; a few hold 'canary' too; one says it in its title."""
    for n in range(40):
        extra = " canary" if n % 10 == 0 else ""
        write_memory(global_root.path, f"fact/m{n:02d}.md", f"title: Note {n}\nupdated: 2025-01-{1 + n % 28:02d}", f"deploy step {n}{extra}")
    write_memory(global_root.path, "fact/title.md", "title: Deploy canary\nupdated: 2024-01-01", "how it goes")
    index.sync_root(global_root)
    return global_root


def ids(result) -> list[str]:
    return [hit.memory.id for hit in result.hits]


def test_a_strict_query_keeps_every_word_whatever_its_count(crowd, index, monkeypatch):
    monkeypatch.setattr(search, "POSTINGS_BUDGET", 10)  # budgets bound free text, never strictness
    result = index.search("deploy canary", [crowd], limit=10, now=NOW)
    assert result.mode == "strict"
    assert len(result.hits) == 5  # four notes and the title: each holds both words
    assert result.hits[0].memory.title == "Deploy canary"  # the title hit leads


def test_ranking_is_exact_while_the_matches_fit_under_the_cap(crowd, index, monkeypatch):
    full = index.search("deploy", [crowd], limit=10, now=NOW)
    monkeypatch.setattr(search, "RANK_CAP", 41)
    assert ids(index.search("deploy", [crowd], limit=10, now=NOW)) == ids(full)


def test_beyond_the_cap_the_most_recently_indexed_matches_are_ranked(crowd, index, monkeypatch):
    monkeypatch.setattr(search, "RANK_CAP", 5)
    result = index.search("deploy", [crowd], limit=50, now=NOW)
    newest = [r[0] for r in index._db.execute("SELECT id FROM doc ORDER BY rowid DESC LIMIT 5")]
    assert sorted(ids(result)) == sorted(newest)


def test_a_prefix_retry_expands_through_the_term_table(global_root, index):
    write_memory(global_root.path, "fact/m.md", "title: Migration strategy", "expand then contract")
    write_memory(global_root.path, "fact/n.md", "title: Migrations list", "one per release")
    index.sync_root(global_root)
    result = index.search("migrat", [global_root], now=NOW)
    assert result.mode == "prefix"
    assert sorted(h.memory.title for h in result.hits) == ["Migration strategy", "Migrations list"]


def test_a_word_the_table_does_not_know_still_finds_what_fts5_folds(global_root, index):
    write_memory(global_root.path, "fact/c.md", "title: Café opening hours", "mornings")
    index.sync_root(global_root)
    # FTS5 folds diacritics: 'cafe' is no key of the table, yet the memory is found.
    assert [h.memory.title for h in index.search("cafe", [global_root], now=NOW).hits] == ["Café opening hours"]


def test_the_old_index_format_is_rebuilt_with_a_term_table(global_root, index, tmp_path):
    write_memory(global_root.path, "fact/a.md", "title: Alpha", "words here")
    index.sync_root(global_root)
    path = index.db_path
    index.close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE term")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema'")
    from daemon.memory.index import SearchIndex

    with SearchIndex(path) as again:
        again.sync_root(global_root)
        assert term_table(again) == counted_from_streams(again) != {}


def test_category_and_tag_counts_follow_every_write(global_root, index):
    root = global_root.path
    a = write_memory(root, "runbook/a.md", "title: A\ntags: [deploy, ci]", "x")
    write_memory(root, "runbook/b.md", "title: B\ntags: [deploy]", "y")
    write_memory(root, "fact/c.md", "title: C", "z")
    index.sync_root(global_root)
    assert index.category_counts(global_root) == {"runbook": 2, "fact": 1}
    assert index.tag_counts(global_root, ["runbook"]) == {"runbook": {"deploy": 2, "ci": 1}}
    a.write_text("---\ntitle: A\ntags: [ops]\n---\n\nx\n", encoding="utf-8")
    index.update_file_report(a, global_root)
    assert index.tag_counts(global_root, ["runbook", "fact"]) == {"runbook": {"deploy": 1, "ops": 1}, "fact": {}}
    a.unlink()
    index.sync_root(global_root)
    assert index.category_counts(global_root) == {"runbook": 1, "fact": 1}
    assert index.tag_counts(global_root, ["runbook"]) == {"runbook": {"deploy": 1}}
    index.forget_root(global_root)
    assert index._db.execute("SELECT count(*) FROM cat_tag").fetchone()[0] == 0


def test_kept_term_counts_follow_writes_by_this_connection_and_another(global_root, index):
    from daemon.memory.index import SearchIndex

    root = global_root.path
    write_memory(root, "fact/a.md", "title: Zebra crossing", "zebra stripes")
    index.sync_root(global_root)
    asked = ["zebra", "stripes", "absent", "zebra"]
    assert index.doc_counts(asked) == {"stripes": 1, "zebra": 1}
    assert index.doc_counts(asked) == term_table_of(index, asked)  # kept: the same answer

    write_memory(root, "fact/b.md", "title: Absent zebra", "absent")
    index.sync_root(global_root)  # this connection writes
    assert index.doc_counts(asked) == {"absent": 1, "stripes": 1, "zebra": 2} == term_table_of(index, asked)

    with SearchIndex(index.db_path) as other:  # another process's connection writes
        (root / "fact" / "a.md").unlink()
        other.sync_root(global_root)
    assert index.doc_counts(asked) == {"absent": 1, "zebra": 1} == term_table_of(index, asked)
    assert list(index.doc_counts(["zebra", "absent"])) == ["absent", "zebra"]  # as SQLite orders them


def term_table_of(index, terms) -> dict[str, int]:
    marks = ", ".join("?" * len(terms))
    return {t: d for t, d in index._db.execute(f"SELECT term, docs FROM term WHERE term IN ({marks})", terms)}


def kept_ids(index, root, now, streams=None) -> list[str]:
    roots = root if isinstance(root, list) else [root]
    return [h.memory.id for h in index.search_any("zebra", roots, 8, now, streams=streams)]


def test_a_kept_ranking_follows_writes_by_this_connection_and_another(global_root, index):
    from daemon.memory.index import SearchIndex

    root = global_root.path
    write_memory(root, "fact/a.md", "title: Zebra crossing\nid: a", "zebra stripes")
    index.sync_root(global_root)
    streams: dict = {}
    assert kept_ids(index, global_root, NOW, streams) == ["a"]
    again: dict = {}
    assert kept_ids(index, global_root, NOW, again) == ["a"] and again == streams  # kept: streams too
    assert next(iter(streams.values()))[0] == " zebra crossing "

    write_memory(root, "fact/b.md", "title: Zebra herd\nid: b", "zebra zebra")
    index.sync_root(global_root)  # this connection writes
    assert sorted(kept_ids(index, global_root, NOW)) == ["a", "b"]

    with SearchIndex(index.db_path) as other:  # another process's connection writes
        (root / "fact" / "a.md").unlink()
        other.sync_root(global_root)
    assert kept_ids(index, global_root, NOW) == ["b"]


def test_a_kept_ranking_holds_only_until_a_memory_expires_or_stops_being_expired(global_root, index):
    from datetime import timedelta

    root = global_root.path
    write_memory(root, "fact/a.md", "title: Zebra crossing\nid: a\nexpires: 2025-06-01T13:00:00Z", "zebra")
    write_memory(root, "fact/b.md", "title: Zebra herd\nid: b", "zebra")
    index.sync_root(global_root)
    assert sorted(kept_ids(index, global_root, NOW)) == ["a", "b"]
    assert sorted(kept_ids(index, global_root, NOW + timedelta(minutes=59))) == ["a", "b"]
    assert kept_ids(index, global_root, NOW + timedelta(hours=1)) == ["b"]  # it expired meanwhile
    assert kept_ids(index, global_root, NOW + timedelta(days=3)) == ["b"]
    assert sorted(kept_ids(index, global_root, NOW)) == ["a", "b"]  # a clock set back: not expired then


def test_kept_rankings_are_apart_per_scope_project_and_excluded_memory(global_root, project_root, index):
    write_memory(global_root.path, "fact/g.md", "title: Zebra facts\nid: g", "zebra")
    write_memory(project_root.path, "fact/p.md", "title: Zebra project\nid: p", "zebra")
    index.sync_root(global_root)
    index.sync_root(project_root)
    both = [project_root, global_root]
    assert kept_ids(index, project_root, NOW) == ["p"]
    assert kept_ids(index, global_root, NOW) == ["g"]
    assert sorted(kept_ids(index, both, NOW)) == ["g", "p"]
    assert [h.memory.id for h in index.search_any("zebra", both, 8, NOW, exclude_id="g")] == ["p"]
    assert sorted(kept_ids(index, both, NOW)) == ["g", "p"]
