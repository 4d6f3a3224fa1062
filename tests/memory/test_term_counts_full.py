"""The kept term counts, once full: a lookup that fills them past TERMS_KEPT still answers
every term it asked for (found by the viewer's benchmark: a KeyError, then a 500 from the
daemon's socket, after ~50,000 distinct words of prompts)."""

from __future__ import annotations

from daemon.memory import search

from .conftest import write_memory


def test_a_lookup_that_overflows_the_kept_counts_answers_every_term(global_root, index, monkeypatch):
    write_memory(global_root.path, "fact/a.md", "title: Zebra crossing", "zebra stripes crossing")
    index.sync_root(global_root)
    monkeypatch.setattr(search, "TERMS_KEPT", 3)
    assert index.doc_counts(["zebra", "stripes"]) == {"stripes": 1, "zebra": 1}  # kept: 2 of 3
    # "zebra" is kept, "crossing" and "absent" are not: the kept counts overflow and are emptied.
    assert index.doc_counts(["zebra", "crossing", "absent"]) == {"crossing": 1, "zebra": 1}
    assert index.doc_counts(["stripes", "zebra"]) == {"stripes": 1, "zebra": 1}
