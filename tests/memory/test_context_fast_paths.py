"""The context builder's fast paths give the bytes the plain ones give."""

from __future__ import annotations

import random

import pytest

from daemon.memory import relevance, tokenize
from daemon.memory.context import StablePart, estimate_tokens
from daemon.memory.routing import render_routing, routing_words
from daemon.memory.stable_store import _decode, _encode

WORDS = "deploy database 部署 迁移 テスト デプロイ 배포 releasing slow queries snake_case src/app/main.py pnpm the a of".split()


def plain_routing(rows, prompt: str, budget: int) -> str:  # noqa: ANN001
    """The routing as it was rendered before the word index: every scenario tokenized."""
    words = set(relevance.content_terms(prompt)) if prompt else set()
    ordered = sorted(rows, key=lambda r: not words.intersection(tokenize.tokens(r[0]))) if words else list(rows)
    lines, used = [], 0
    for number, (scenario, path, mid) in enumerate(ordered):
        line = f"- {scenario if len(scenario) <= 120 else scenario[:119].rstrip() + '…'} → {path} (id {mid})"
        reserve = 60 if len(ordered) - number - 1 else 0
        if used + len(line) + 1 + reserve > budget:
            lines.append(f"… {len(ordered) - number} more scenarios: ROOT.md of the project tree")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(40))
def test_routing_through_the_word_index_is_the_plain_routing(seed: int) -> None:
    rng = random.Random(seed)
    rows = tuple(
        sorted(
            (" ".join(rng.sample(WORDS, rng.randint(1, 4))), f"c/m{n}.md", f"m{n}")
            for n in range(rng.randint(0, 60))
        )
    )
    words = routing_words(rows)
    for prompt in ("", " ".join(rng.sample(WORDS, 3)), "nothing stored here", "部署和迁移"):
        for budget in (0, 120, 400, 5000):
            assert render_routing(rows, prompt, budget, words) == plain_routing(rows, prompt, budget)
            assert render_routing(rows, prompt, budget) == plain_routing(rows, prompt, budget)


def test_token_estimate_counts_ascii_and_other_characters_as_before() -> None:
    for text in ("", "abc", "部署 pnpm", "é" * 7 + "x" * 9, "\x7f\x80", "한국어 text 日本語テキスト"):
        ascii_chars = sum(1 for c in text if c < "\x80")
        assert estimate_tokens(text) == (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


def test_a_stable_part_kept_in_the_index_comes_back_equal() -> None:
    rows = (("database work", "decision/wal.md", "p-dec"), ("部署", "note/deploy.md", "p-cjk"))
    part = StablePart("head", rows, "- inventory", "gen1", frozenset({"a", "b"}), frozenset({"a"}), "rules1")
    back = _decode(_encode(part))
    assert back == part and back.routing_words == part.routing_words == routing_words(rows)
    assert back.render("部署 please", 400) == part.render("部署 please", 400)


@pytest.mark.parametrize("seed", range(3))
def test_hard_rules_read_as_far_as_shown_are_the_plain_sorted_rules(tmp_path, seed: int) -> None:  # noqa: ANN001
    from datetime import timedelta

    from daemon.memory.context import FIRST_KINDS, RULES_CHARS, _bounded, _hard_rules, build_stable
    from daemon.memory.index import SearchIndex
    from daemon.memory.roots import MemoryRoot
    from tests.memory.conftest import NOW, write_memory

    rng = random.Random(seed)
    root = MemoryRoot(tmp_path / "global", "global")
    for n in range(rng.choice((3, 40, 150))):
        when = "" if rng.random() < 0.2 else f"\nupdated: {(NOW - timedelta(hours=rng.randrange(60))).isoformat()}"
        title = rng.choice(("x", "Never push to main", "部署前先备份", "Run the migrations first " * rng.randint(1, 12)))
        write_memory(root.path, f"rule/r{n}.md", f"title: {title}\nkind: {rng.choice(('rule', 'Lesson', 'GOTCHA', ''))}"
                     f"\nid: r{n}\nhard_rule: true{when}")  # fmt: skip
    with SearchIndex(tmp_path / "index.db") as index:
        index.sync_root(root)
        plain = sorted(
            index.visible([root], NOW, hard_rules=True, project=""),
            key=lambda m: (m.kind.casefold() not in FIRST_KINDS, -m.newest.timestamp(), m.title_key, str(m.path)),
        )
        first, count, ids = _hard_rules(index, [root], NOW, "")
        assert count == len(plain) and ids == {m.id for m in plain}
        assert [m.path for m in first] == [m.path for m in plain[: len(first)]]
        assert _bounded(first, RULES_CHARS, count) == _bounded(plain, RULES_CHARS)
        assert ("## Hard rules (global)\n" + _bounded(plain, RULES_CHARS)) in build_stable(index, [root], NOW).head
