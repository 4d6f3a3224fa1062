"""The search index's SQLite schema: one row per memory, its token streams, FTS5 over them."""

from __future__ import annotations

from daemon.memory import tokenize

# The inventory's groups: this project's lessons and gotchas (0), its other curated
# memories (1), the machine-wide ones alike (2, 3), then this project's sessions (4),
# then other sessions (5); within a group, newest first.
KIND_RANK = "CASE WHEN lower(kind) = 'session' THEN 2 WHEN lower(kind) IN ('lesson', 'gotcha') THEN 0 ELSE 1 END"

_TALLY_KEY = "root = {r}.root AND scope = {r}.scope AND project = {r}.project AND hard_rule = {r}.hard_rule"
_COUNT_IN = (
    "INSERT INTO tally VALUES (new.root, new.scope, new.project, new.hard_rule, 1) "
    "ON CONFLICT (root, scope, project, hard_rule) DO UPDATE SET docs = docs + 1;"
)
_COUNT_OUT = (
    f"UPDATE tally SET docs = docs - 1 WHERE {_TALLY_KEY.format(r='old')};"
    f" DELETE FROM tally WHERE {_TALLY_KEY.format(r='old')} AND docs <= 0;"
)
# The roots (other than the row's own) that hold a row's category and title: tally knows
# every root with rows (once per project and hard-rule flag: hence DISTINCT), so this is
# one index probe per root. (Not INSERT OR IGNORE: an outer statement's conflict clause
# overrides a trigger's.)
_ROOTS = "(SELECT DISTINCT root FROM tally)"
_TWIN_IN = (
    "INSERT INTO twin SELECT new.category, new.title_key WHERE NOT EXISTS (SELECT 1 FROM twin "
    f"WHERE category = new.category AND title_key = new.title_key) AND EXISTS (SELECT 1 FROM {_ROOTS} t "
    "WHERE t.root != new.root AND EXISTS (SELECT 1 FROM doc o WHERE o.root = t.root "
    "AND o.category = new.category AND o.title_key = new.title_key));"
)
_TWIN_OUT = (
    "DELETE FROM twin WHERE category = old.category AND title_key = old.title_key AND (SELECT count(*) FROM "
    f"{_ROOTS} t WHERE EXISTS (SELECT 1 FROM doc o WHERE o.root = t.root AND o.category = old.category "
    "AND o.title_key = old.title_key)) < 2;"
)

TALLY_SCHEMA = f"""
CREATE TABLE tally (
    root TEXT NOT NULL, scope TEXT NOT NULL, project TEXT NOT NULL, hard_rule INTEGER NOT NULL, docs INTEGER NOT NULL,
    PRIMARY KEY (root, scope, project, hard_rule)
) WITHOUT ROWID;
CREATE TABLE twin (category TEXT NOT NULL, title_key TEXT NOT NULL, PRIMARY KEY (category, title_key)) WITHOUT ROWID;
-- Newest first within (root, project, kind rank); ties (the same sort_ts) are sorted as
-- met, so an index without title_key and path (a third of the size) still stops early.
CREATE INDEX doc_inventory ON doc (root, project, kind_rank, sort_ts DESC);
CREATE TRIGGER doc_tally_ai AFTER INSERT ON doc BEGIN
    {_COUNT_IN}
    {_TWIN_IN}
END;
CREATE TRIGGER doc_tally_ad AFTER DELETE ON doc BEGIN
    {_COUNT_OUT}
    {_TWIN_OUT}
END;
CREATE TRIGGER doc_tally_au AFTER UPDATE OF root, scope, project, hard_rule, category, title_key ON doc BEGIN
    {_COUNT_OUT}
    {_COUNT_IN}
    {_TWIN_OUT}
    {_TWIN_IN}
END;
"""
# A row's change that can change a block: any column but the stat signature (`sig`,
# rewritten when a file is touched but not changed, or once it is old enough to trust).
_MOVED = " OR ".join(
    f"old.{c} IS NOT new.{c}"
    for c in (
        "path root scope category id title title_key description kind tags scenarios hard_rule "
        "created updated expires expires_ts sort_ts mtime hash project"
    ).split()
)

SCHEMA_VERSION = 11  # 3: previews skip a session note's provenance line; 4: term table; 5: project column; 6: folder table; 7: cat_tag table; 8: stable table; 9: tally, twin, doc_inventory (tally.py); 10: doc_inventory narrower; 11: twin probes once per root

SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE root (path TEXT PRIMARY KEY, scope TEXT NOT NULL, synced_at REAL NOT NULL DEFAULT 0);
-- One row per memory: the metadata recall filters and sorts on. Kept narrow so that
-- joining thousands of full-text matches to it stays cheap.
CREATE TABLE doc (
    rowid       INTEGER PRIMARY KEY,
    path        TEXT NOT NULL UNIQUE,
    root        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    category    TEXT NOT NULL,
    id          TEXT NOT NULL,
    title       TEXT NOT NULL,
    title_key   TEXT NOT NULL,
    description TEXT NOT NULL,
    kind        TEXT NOT NULL,
    tags        TEXT NOT NULL,      -- JSON list
    scenarios   TEXT NOT NULL,      -- JSON list
    hard_rule   INTEGER NOT NULL,
    created     TEXT,               -- ISO, UTC
    updated     TEXT,
    expires     TEXT,
    expires_ts  REAL,               -- epoch seconds, for filtering
    sort_ts     REAL NOT NULL,      -- updated, else created, else mtime: "newest first"
    mtime       REAL NOT NULL,
    hash        TEXT NOT NULL,
    sig         TEXT NOT NULL,      -- stat signature when last read; '' while too fresh to trust
    project     TEXT NOT NULL DEFAULT '',  -- canonical worktree the memory belongs to; '' machine-wide
    kind_rank   INTEGER GENERATED ALWAYS AS ({KIND_RANK}) VIRTUAL  -- the inventory's order (tally.py)
);
CREATE INDEX doc_root_title ON doc (root, category, title_key);
CREATE INDEX doc_id ON doc (id);
-- The few memories ROOT.md lists, found without reading the whole tree's rows.
CREATE INDEX doc_listed ON doc (root) WHERE scenarios != '[]' OR hard_rule = 1;
-- The preview and the token streams, same rowid as doc: the FTS table's external content.
CREATE TABLE doc_text (
    rowid INTEGER PRIMARY KEY,
    preview TEXT NOT NULL,
    t_title TEXT NOT NULL, t_description TEXT NOT NULL, t_tags TEXT NOT NULL, t_body TEXT NOT NULL
);
CREATE VIRTUAL TABLE doc_fts USING fts5(
    t_title, t_description, t_tags, t_body,
    content='doc_text', content_rowid='rowid',
    tokenize="unicode61 remove_diacritics 2 tokenchars '_-./'"
);
CREATE TRIGGER doc_ad AFTER DELETE ON doc BEGIN
    DELETE FROM doc_text WHERE rowid = old.rowid;
END;
CREATE TRIGGER doc_text_ai AFTER INSERT ON doc_text BEGIN
    INSERT INTO doc_fts (rowid, t_title, t_description, t_tags, t_body)
    VALUES (new.rowid, new.t_title, new.t_description, new.t_tags, new.t_body);
END;
CREATE TRIGGER doc_text_ad AFTER DELETE ON doc_text BEGIN
    INSERT INTO doc_fts (doc_fts, rowid, t_title, t_description, t_tags, t_body)
    VALUES ('delete', old.rowid, old.t_title, old.t_description, old.t_tags, old.t_body);
END;
CREATE TRIGGER doc_text_au AFTER UPDATE ON doc_text BEGIN
    INSERT INTO doc_fts (doc_fts, rowid, t_title, t_description, t_tags, t_body)
    VALUES ('delete', old.rowid, old.t_title, old.t_description, old.t_tags, old.t_body);
    INSERT INTO doc_fts (rowid, t_title, t_description, t_tags, t_body)
    VALUES (new.rowid, new.t_title, new.t_description, new.t_tags, new.t_body);
END;
-- How many memories hold each token (FTS5 keeps no document frequency): see terms.py.
CREATE TABLE term (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
-- Per root and category: memories (tag '') and memories carrying each tag (ROOT.md's registry).
CREATE TABLE cat_tag (
    root TEXT NOT NULL, category TEXT NOT NULL, tag TEXT NOT NULL, docs INTEGER NOT NULL,
    PRIMARY KEY (root, category, tag)
) WITHOUT ROWID;
-- Each category folder's stat when last listed ('' : list it next time): a quick sync
-- lists only the folders whose stat moved.
CREATE TABLE folder (root TEXT NOT NULL, name TEXT NOT NULL, sig TEXT NOT NULL, PRIMARY KEY (root, name)) WITHOUT ROWID;
-- The prompt-free parts of context blocks (stable_store.py), for the command that builds
-- one without a daemon: emptied by every write that changes a memory's row (not by the
-- bookkeeping of stat signatures, folders and problems); `until`: the first expiry that
-- would change it.
CREATE TABLE stable (key TEXT PRIMARY KEY, until REAL, data TEXT NOT NULL) WITHOUT ROWID;
CREATE TRIGGER doc_stable_ai AFTER INSERT ON doc BEGIN DELETE FROM stable; END;
CREATE TRIGGER doc_stable_ad AFTER DELETE ON doc BEGIN DELETE FROM stable; END;
CREATE TRIGGER doc_stable_au AFTER UPDATE ON doc WHEN {_MOVED} BEGIN DELETE FROM stable; END;
{TALLY_SCHEMA}CREATE INDEX doc_expires ON doc (expires_ts) WHERE expires_ts IS NOT NULL;
-- Files skipped or partly read; kind 'file' (from parsing) or 'tree' (symlinks, folders).
CREATE TABLE problem (
    path    TEXT NOT NULL,
    root    TEXT NOT NULL,
    kind    TEXT NOT NULL,
    reason  TEXT NOT NULL,
    skipped INTEGER NOT NULL,
    sig     TEXT NOT NULL DEFAULT '',
    seen_at REAL NOT NULL
);
CREATE INDEX problem_root ON problem (root, path);
INSERT INTO meta VALUES ('schema', '{SCHEMA_VERSION}'), ('tokenizer', '{tokenize.TOKENIZER_VERSION}');
"""

DOC_COLUMNS = (
    "path, root, scope, category, id, title, title_key, description, kind, tags, scenarios, "
    "hard_rule, created, updated, expires, expires_ts, sort_ts, mtime, hash, sig, project"
)
TEXT_COLUMNS = "preview, t_title, t_description, t_tags, t_body"
SELECT = (
    "d.path, d.root, d.scope, d.category, d.id, d.title, d.description, d.kind, d.tags, "
    "d.scenarios, d.hard_rule, d.created, d.updated, d.expires, d.mtime, d.hash, d.sort_ts, d.project"
)
