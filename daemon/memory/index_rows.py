"""The rows the index stores for a memory, and writing them: pure row building, one upsert."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from daemon.memory import tokenize
from daemon.memory.index_schema import DOC_COLUMNS, TEXT_COLUMNS
from daemon.memory.terms import CountsDelta, root_facts
from daemon.memory.tree import RACY_NS, Memory, title_key
from daemon.timefmt import format_time

PREVIEW_CHARS = 500


def signature_text(st: os.stat_result) -> str:
    """Return what says "this file may have changed" (mtime, ctime, size, inode) as stored text."""
    return f"{st.st_mtime_ns},{st.st_ctime_ns},{st.st_size},{st.st_ino}"


def trusted(signature: str, mtime_ns: int, now_ns: int) -> str:
    """Return the signature to store: empty while the file is too fresh to trust its stat.

    A file rewritten with the same size within the clock's granularity keeps its
    mtime; storing no signature for recent files makes the next sync hash them again.
    """
    return signature if mtime_ns < now_ns - RACY_NS else ""


def preview_of(body: str) -> str:
    """Return the first PREVIEW_CHARS characters of a body, marked when cut.

    A session note's provenance line (`> Source: OpenCode session …`) repeats what the
    result line already says, so the preview starts after it, with the content.
    """
    body = body.strip()
    if body.startswith("> Source: "):
        body = body.split("\n", 1)[1].strip() if "\n" in body else ""
    return body if len(body) <= PREVIEW_CHARS else body[:PREVIEW_CHARS].rstrip() + "…"


def text_row(title: str, description: str, tags: Sequence[str], kind: str, body: str) -> tuple:
    """The doc_text row of a memory's (scrubbed) fields: its preview and token streams."""
    return (
        preview_of(body),
        tokenize.token_stream(title),
        tokenize.token_stream(description),
        tokenize.token_stream(" ".join((*tags, kind))),
        tokenize.token_stream(body),
    )


@dataclass(frozen=True)
class PreparedText:
    """A doc_text row made ahead (in a capture worker) from the fields it names: used for
    a memory whose fields are exactly these, made again for any other."""

    fields: tuple[str, str, tuple[str, ...], str, str]  # title, description, tags, kind, body
    row: tuple

    @classmethod
    def of(cls, title: str, description: str, tags: Sequence[str], kind: str, body: str) -> PreparedText:
        fields = (title, description, tuple(tags), kind, body)
        return cls(fields, text_row(*fields))


def index_rows(
    memory: Memory, signature: str, scrubbed: bool = False, prepared: PreparedText | None = None
) -> tuple[tuple, tuple]:
    """Return the doc row and the doc_text row of a memory, secrets redacted: a key
    pasted into a hand-written memory must not be copied into the index too.

    `scrubbed`: its writer built every field from scrubbed text (a capture note): no second pass.
    `prepared`: its doc_text row made ahead, taken when made from the same fields.
    """
    expires = memory.expires
    if scrubbed:
        title, description, body, tags = memory.title, memory.description, memory.body, tuple(memory.tags)
    else:
        from daemon.scrub import redact  # its rules take ~50 ms to compile: paid by writers only

        title, description, body = redact(memory.title), redact(memory.description), redact(memory.body)
        tags = tuple(redact(tag) for tag in memory.tags)
    doc = (
        str(memory.path),
        memory.root.key,
        memory.root.scope,
        memory.category,
        memory.id,
        title,
        title_key(title),
        description,
        memory.kind,
        json.dumps(list(tags), ensure_ascii=False),
        json.dumps(list(memory.scenarios), ensure_ascii=False),
        int(memory.hard_rule),
        format_time(memory.created) if memory.created else None,
        format_time(memory.updated) if memory.updated else None,
        format_time(expires) if expires else None,
        expires.timestamp() if expires else None,
        memory.newest.timestamp(),
        memory.mtime,
        memory.content_hash,
        signature,
        memory.project,
    )
    fields = (title, description, tags, memory.kind, body)
    text = prepared.row if prepared is not None and prepared.fields == fields else text_row(*fields)
    return doc, text


_DOC_UPDATES = ", ".join(f"{c} = excluded.{c}" for c in (c.strip() for c in DOC_COLUMNS.split(",")[1:]))
_TEXT_UPDATES = ", ".join(f"{c} = excluded.{c}" for c in (c.strip() for c in TEXT_COLUMNS.split(",")))
# Rows are upserted a batch per statement: SQLite opens a statement savepoint for each
# statement that writes through a trigger inside a transaction (both tables have them),
# and FTS5 flushes its pending terms into a new segment at every savepoint -- per row,
# half the indexing time of a backfill. Values are bound as parameters: floats and NULs
# round-trip exactly, and nothing is encoded to be parsed again.
_DOC_HEAD = f"INSERT INTO doc ({DOC_COLUMNS}) VALUES "
_DOC_TAIL = f" ON CONFLICT(path) DO UPDATE SET {_DOC_UPDATES} RETURNING path, rowid"
# An upsert, never INSERT OR REPLACE: REPLACE's implicit delete fires no trigger
# and would leave the old tokens in the full-text index.
_TEXT_HEAD = f"INSERT INTO doc_text (rowid, {TEXT_COLUMNS}) VALUES "
_TEXT_TAIL = f" ON CONFLICT(rowid) DO UPDATE SET {_TEXT_UPDATES}"


def _upsert(db: sqlite3.Connection, head: str, tail: str, rows: Sequence[tuple]) -> list[tuple]:
    """`head` VALUES (…), (…) `tail` over `rows` (all of one width), as many a statement as the
    build's parameter limit allows (32,766 by default, 999 in old builds); what they return."""
    width = len(rows[0]) if rows else 1
    one = f"({', '.join('?' * width)})"
    most = max(1, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width)
    returned: list[tuple] = []
    for start in range(0, len(rows), most):
        some = rows[start : start + most]
        sql = f"{head}{', '.join([one] * len(some))}{tail}"
        returned += db.execute(sql, [value for row in some for value in row]).fetchall()
    return returned


def upsert_rows(db: sqlite3.Connection, rows: Sequence[tuple[tuple, tuple]]) -> bool:
    """Write (insert or replace) memories' rows; True when ROOT.md's tables may change with them."""
    terms = CountsDelta()
    paths = [doc[0] for doc, _ in rows]
    terms.remove_rows(db, f"d.path IN ({', '.join('?' * len(paths))})", paths)
    rowids = dict(_upsert(db, _DOC_HEAD, _DOC_TAIL, [doc for doc, _ in rows]))
    texts = []
    for doc, text in rows:
        texts.append((rowids[doc[0]], *text))
        terms.add(doc[1], doc[3], doc[9], text[1:])
    _upsert(db, _TEXT_HEAD, _TEXT_TAIL, texts)
    root_tables = any(
        terms.before.get(doc[0]) != root_facts(doc[3], doc[9], doc[10], doc[11], doc[5], doc[7]) for doc, _ in rows
    )
    terms.apply(db)
    # A folder the index has not listed yet is listed by the next quick sync.
    db.executemany("INSERT OR IGNORE INTO folder VALUES (?, ?, '')", sorted({(doc[1], doc[3]) for doc, _ in rows}))
    return root_tables
