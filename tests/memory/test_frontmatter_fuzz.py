"""Fuzz the frontmatter editor and emitter: an edit changes the lines of its field and no other byte.

Random documents (fixed seeds, so a failure replays) mix memoryd's fields with unknown
ones, comments, odd quoting, block and flow collections, block scalars, CJK text and
CRLF line endings; each gets one field set to a random value.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime

import pytest
import yaml

from daemon.memory.frontmatter import edit_memory, field_line, parse_time, split_document, yaml_value

SEEDS = range(300)

WORDS = ["deploy", "pnpm", "部署脚本", "キャッシュ", "데이터", "WAL", "retry", "ünïcode", "x_y", "a-b"]
TRICKY = [
    "a: b", "# not a comment", "- dash", "yes", "No", "null", "~", "123", "1.5", "2025-01-01", "0x1F",
    "'single'", '"double"', "trailing ", " leading", "tab\there", "back\\slash", "colon:", "[flow]",
    "{map}", "a, b", "@at", "`tick`", "%pct", "!tag", "&anchor", "*alias", "?q", "|pipe", ">fold",
    "nel\x85x", "ls\u2028x", "ps\u2029x", "del\x7fx", "c1\x9bx", "bom\ufeffx", "emoji 🚀", "全角：コロン",
    "line\nbreak", "cr\rhere", "",
]


def _text(rng: random.Random) -> str:
    parts = [rng.choice(WORDS + TRICKY) for _ in range(rng.randint(1, 3))]
    return rng.choice([" ", "", ": ", " # ", "-"]).join(parts)


def _raw_entry(rng: random.Random, key: str) -> list[str]:
    """One `key: value` entry as a person might write it, possibly over several lines."""
    word = rng.choice(WORDS)
    shapes = [
        [f"{key}: {word}"],
        [f"{key}: 'it''s {word}'"],
        [f'{key}: "esc \\" \\u00e9 {word}"'],
        [f"{key}: 42"],
        [f"{key}: 2024-01-0{rng.randint(1, 9)}"],
        [f"{key}: true"],
        [f"{key}: {word}   # trailing comment"],
        [f"{key}:", f"  - {word}", "  - b"],
        [f"{key}:", f"- {word}", "- 'c d'"],
        [f"{key}:", "  nested: 1", f"  other: [x, {word}]"],
        [f"{key}: [a, \"b c\", {word}]"],
        [f"{key}: |", f"  block {word}", "  another line"],
        [f"{key}:   {word}"],
        [f"{key}: {{k: v, n: 2}}"],
    ]
    return rng.choice(shapes)


def random_document(rng: random.Random) -> tuple[list[tuple[str | None, list[str]]], str, str]:
    """Return (entries, body, newline): entries are (key or None for a comment/blank, raw lines)."""
    keys = rng.sample(["title", "tags", "updated", "id", "description", "kind", "owner", "links", "链接", "x_2"], k=rng.randint(1, 7))
    entries: list[tuple[str | None, list[str]]] = []
    for key in keys:
        if rng.random() < 0.25:
            entries.append((None, [rng.choice(["# a comment the owner wrote", "#", "# 注释: keep me"])]))
        if rng.random() < 0.1 and entries:
            entries.append((None, [""]))
        entries.append((key, _raw_entry(rng, key)))
    if rng.random() < 0.3:
        entries.append((None, ["# closing comment"]))
    body = rng.choice(["", "\nBody.", "\n# Heading\n\nText 部署.\n", "\n---\nnot frontmatter: x\n"])
    newline = rng.choice(["\n", "\r\n"])
    return entries, body, newline


def _join(entries: list[tuple[str | None, list[str]]], body: str, nl: str) -> str:
    lines = [line for _, raw in entries for line in raw]
    return nl.join(["---", *lines, "---"]) + nl + body.replace("\n", nl)


def _new_value(rng: random.Random) -> object:
    kind = rng.randrange(5)
    if kind == 0:
        return [_text(rng) for _ in range(rng.randint(0, 3))]
    if kind == 1:
        return datetime(2025, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), tzinfo=UTC)
    if kind == 2:
        return date(2026, rng.randint(1, 12), rng.randint(1, 28))
    return _text(rng)


def _same(parsed: object, value: object) -> bool:
    if isinstance(value, datetime | date):
        return parse_time(parsed) == parse_time(value)
    return parsed == value


@pytest.mark.parametrize("seed", SEEDS)
def test_an_edit_changes_only_the_lines_of_its_field(seed):
    rng = random.Random(seed)
    entries, body, nl = random_document(rng)
    original = _join(entries, body, nl)
    before = split_document(original).fields
    keys = [k for k, _ in entries if k is not None]
    key = rng.choice([*keys, "added_field", "expires"])
    value = _new_value(rng)

    edited = edit_memory(original, {key: value})

    new_line = field_line(key, value, plain=True)
    if key in keys:
        expected_entries = [(k, [new_line] if k == key else raw) for k, raw in entries]
    else:
        expected_entries = [*entries, (key, [new_line])]
    assert edited == _join(expected_entries, body, nl)
    after = split_document(edited).fields
    assert _same(after[key], value)
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}


@pytest.mark.parametrize("seed", range(50))
def test_the_emitter_writes_values_yaml_reads_back_unchanged(seed):
    rng = random.Random(seed)
    for _ in range(40):
        text = _text(rng)
        for plain in (False, True):
            line = yaml_value(text, plain=plain)
            assert "\n" not in line and "\r" not in line
            assert yaml.safe_load(f"k: {line}")["k"] == text, (text, line)
        items = [_text(rng) for _ in range(3)]
        assert yaml.safe_load(f"k: {yaml_value(items, plain=True)}")["k"] == items


def test_notes_keep_their_json_quoted_scalars():
    # Session notes always quote: a title like `2025-01-01` or `yes` stays a string.
    assert yaml_value("yes") == '"yes"'
    assert yaml_value(["a", "部署"]) == '["a", "部署"]'
    assert yaml_value("Use WAL mode", plain=True) == "Use WAL mode"
    assert yaml_value("2025-01-01", plain=True) == '"2025-01-01"'
