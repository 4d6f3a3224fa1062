"""Relevance benchmark: is "Relevant to the first prompt" worth its tokens?

    python bench/bench_relevance.py [--sizes 1000,10000] [--verbose] [--sets "held-out 5"]

On a labelled set (bench/relevance_set.py: how it was built is in its docstring; in
short, six projects in four languages plus machine-wide memories, 73 prompts written by
hand in two batches (the second after the first was measured) with the memories that
should be shown, prompts about another project's topic, prompts about nothing stored,
filler up to 1k, 10k or 100k memories) and two held-out batches (bench/relevance_heldout.py:
71 prompts written apart, from the memories' content, labels fixed before their first
run: paraphrases, CJK and mixed prompts, words many memories share, greetings, long
chatty prompts; then 39 more written after the ranking was changed on the first
held-out results, so that one figure stays unseen: pasted error messages and log lines)
and a third (bench/relevance_heldout3.py: 55 prompts built by another method, one per
memory with the kind of prompt assigned in rotation: paraphrase, cross-language,
identifier, symptom; then near misses, nothing stored, another project's topic)
and a fourth (bench/relevance_heldout4.py: 59 prompts as sessions really open, one per
memory in rotation: a long opener with a pasted stack trace, log or diff, a terse command,
another language; then 20 with nothing stored in the same styles) and a fifth
(bench/relevance_heldout5.py: 65 prompts, one per memory in rotation: typo'd,
mixed-language, very short, a pasted diff or log, a symptom whose memory names the cause,
synonyms; eight more in synonyms, then 18 near misses and prompts about nothing stored),
a sixth (bench/relevance_heldout6.py: 58 prompts about work a memory bears on: a goal,
a PR under review, another language, a chat line; 19 with nothing stored) and a seventh
(bench/relevance_heldout7.py: 55 prompts: why/how in the user's words, alert and CI
one-liners, another language; 16 with nothing stored), both written before their first
run so that each gave one unseen figure, and an eighth (bench/relevance_heldout8.py: 53
prompts of work in a memory's area, written by another hand and kept from the ranking's
author until after the last change),
each reported on its own, every prompt's block is
built exactly as a session in that project gets it, from real trees and a real index
(the global tree shared by all projects, two projects with a tree of their own). Measured:

- precision and recall of the "Relevant" previews (micro-averaged; a preview of a filler
  memory or of any memory not listed counts as wrong);
- prompts about nothing stored (or another project's topic) that still got a section;
- cross-project items: memories of another project anywhere in a block (inventory or
  previews): must be 0;
- the block's size in tokens (estimated as the block's budget counts them), median and max;
- the time to build a block (in-process, the prompt-free part built once per project as
  the daemon caches it; the socket's p95 is bench_inject.py's).

Targets (issue 21): precision >= 0.8, recall >= 0.95, cross-project 0, block ~800 tokens.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.relevance_heldout import HELDOUT, HELDOUT_2  # noqa: E402
from bench.relevance_heldout3 import HELDOUT_3  # noqa: E402
from bench.relevance_heldout4 import HELDOUT_4  # noqa: E402
from bench.relevance_heldout5 import HELDOUT_5  # noqa: E402
from bench.relevance_heldout6 import HELDOUT_6  # noqa: E402
from bench.relevance_heldout7 import HELDOUT_7  # noqa: E402
from bench.relevance_heldout8 import HELDOUT_8  # noqa: E402
from bench.relevance_set import GENERIC, GENERIC_CJK, MEMORIES, PROMPTS, SYLLABLES  # noqa: E402

SETS = {"first": PROMPTS, "held-out": HELDOUT, "held-out 2": HELDOUT_2, "held-out 3": HELDOUT_3, "held-out 4": HELDOUT_4, "held-out 5": HELDOUT_5, "held-out 6": HELDOUT_6, "held-out 7": HELDOUT_7, "held-out 8": HELDOUT_8}

NOW = datetime(2026, 6, 1, tzinfo=UTC)
OWN_TREES = ("shop", "datapipe")  # projects with a `.memory/` of their own
PROJECTS = ("shop", "datapipe", "billing", "infra", "jpapi", "mobile")
CATEGORY = {"session": "sessions"}


def _write(path: Path, fields: dict[str, object], body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    front = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items())
    path.write_text(f"---\n{front}\n---\n\n{body}\n", encoding="utf-8")


class World:
    """Worktrees, trees and the owner of every memory id."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.worktrees = {p: base / "src" / p for p in PROJECTS}
        for tree in self.worktrees.values():
            (tree / ".git").mkdir(parents=True)
        for name in OWN_TREES:
            (self.worktrees[name] / ".memory").mkdir()
        self.global_root = base / "config" / "opencode" / "memory"
        self.owner: dict[str, str] = {}

    def put(self, mid: str, project: str, kind: str, title: str, body: str, day: int) -> None:
        self.owner[mid] = project
        fields: dict[str, object] = {"id": mid, "title": title, "kind": kind, "updated": f"2026-0{1 + day % 5}-{1 + day % 27:02d}"}
        if kind == "session":
            fields["session_id"] = mid
        if project in OWN_TREES:
            root = self.worktrees[project] / ".memory"
        else:
            root = self.global_root
            if project:
                fields["project"] = str(self.worktrees[project] / ("web" if project == "shop" else ""))
        _write(root / CATEGORY.get(kind, kind) / f"{mid}.md", fields, body)


def _nonce(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def filler(world: World, count: int, seed: int = 5) -> None:
    """Memories about nothing in particular: made-up words, a few generic ones, some CJK."""
    rng = random.Random(seed)
    owners = [*PROJECTS, ""]
    kinds = ["session"] * 7 + ["lesson", "gotcha", "decision", "fact"]
    for n in range(count):
        words = lambda k: " ".join(rng.choice(GENERIC) if rng.random() < 0.2 else _nonce(rng) for _ in range(k))  # noqa: E731
        title = words(rng.randint(3, 6)).capitalize()
        body = " ".join(words(rng.randint(6, 12)).capitalize() + "." for _ in range(rng.randint(2, 6)))
        if rng.random() < 0.15:
            body += " " + "".join(rng.choice(GENERIC_CJK) for _ in range(3)) + "。"
        world.put(f"f{n:06d}", rng.choice(owners), rng.choice(kinds), title, body, n)


@dataclass
class Tally:
    shown: int = 0
    right: int = 0
    wanted: int = 0
    found: int = 0
    empty_prompts: int = 0
    empty_with_section: int = 0
    cross: int = 0
    tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    stable_seconds: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)


def run(size: int, verbose: bool, sets: dict[str, list] = SETS) -> dict[str, Tally]:
    from daemon.memory.context import Budgets, assemble, build_context, build_stable, estimate_tokens, render_relevant
    from daemon.memory.index import SearchIndex
    from daemon.memory.roots import MemoryRoot

    base = Path(tempfile.mkdtemp(prefix="mdr-")).resolve()
    try:
        world = World(base)
        for number, (mid, project, kind, title, body) in enumerate(MEMORIES):
            world.put(mid, project, kind, title, body, number)
        filler(world, max(0, size - len(MEMORIES)))
        tallies = {name: Tally() for name in sets}
        with SearchIndex(base / "state" / "index.db") as index:
            global_root = MemoryRoot(world.global_root, "global")
            trees = {p: MemoryRoot(world.worktrees[p] / ".memory", "project") for p in PROJECTS}
            for root in [global_root, *(trees[p] for p in OWN_TREES)]:
                index.sync_root(root)
            stable: dict[str, object] = {}
            for name, project, prompt, should in ((n, *p) for n, ps in sets.items() for p in ps):
                tally = tallies[name]
                roots = [trees[project], global_root]
                if project not in stable:  # what the daemon keeps until a tree changes
                    started = time.perf_counter()
                    stable[project] = build_stable(index, roots, NOW)
                    tally.stable_seconds.append(time.perf_counter() - started)
                started = time.perf_counter()
                lines, ids = render_relevant(
                    index, roots, prompt, NOW, Budgets(), project=str(world.worktrees[project]),
                    skip_ids=stable[project].rule_ids,  # type: ignore[attr-defined]
                )  # fmt: skip
                context = assemble(stable[project], prompt, lines, ids)  # type: ignore[arg-type]
                tally.seconds.append(time.perf_counter() - started)
                assert context.block == build_context(index, roots, NOW, prompt=prompt).block
                tally.tokens.append(estimate_tokens(context.block))
                _score(tally, world, project, prompt, should, context, verbose)
        return tallies
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _score(tally: Tally, world: World, project: str, prompt: str, should: list[str], context, verbose: bool) -> None:
    shown = list(context.relevant_ids)
    right = [m for m in shown if m in should]
    tally.shown += len(shown)
    tally.right += len(right)
    tally.wanted += len(should)
    tally.found += len(set(right))
    if not should:
        tally.empty_prompts += 1
        tally.empty_with_section += bool(shown)
    named = set(re.findall(r"id ([\w-]+)\)", context.block))
    tally.cross += sum(1 for mid in named if world.owner.get(mid, "") not in ("", project))
    if verbose and (set(shown) != set(should)):
        tally.misses.append(f"  [{project}] {prompt!r}: shown {shown}, should {should}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated numbers of memories")
    parser.add_argument("--verbose", action="store_true", help="list every prompt whose previews are not exactly right")
    parser.add_argument("--sets", default="", help="comma-separated prompt sets to run (default: all)")
    args = parser.parse_args()
    sets = {n: SETS[n] for n in args.sets.split(",")} if args.sets else SETS
    print(f"labelled set: {len(MEMORIES)} memories; prompts: " + ", ".join(
        f"{name} {len(ps)} ({sum(1 for p in ps if not p[2])} with nothing to show)" for name, ps in sets.items()))  # fmt: skip
    for size in (int(s) for s in args.sizes.split(",")):
        for name, t in run(size, args.verbose, sets).items():
            report(size, name, t)


def report(size: int, name: str, t: Tally) -> None:
    precision = t.right / t.shown if t.shown else 1.0
    recall = t.found / t.wanted if t.wanted else 1.0
    print(f"\n{size} memories, {name} prompts")
    print(f"  precision {precision:.3f} ({t.right}/{t.shown} previews right)   recall {recall:.3f} ({t.found}/{t.wanted})")
    print(f"  prompts with nothing to show that got a section: {t.empty_with_section}/{t.empty_prompts}")
    print(f"  cross-project items in blocks: {t.cross}")
    print(f"  block tokens: median {statistics.median(t.tokens):.0f}, max {max(t.tokens)}")
    print(f"  previews + block for a prompt: median {statistics.median(t.seconds) * 1000:.2f} ms, "
          f"max {max(t.seconds) * 1000:.2f} ms (in-process)")
    if t.stable_seconds:  # built once per project, for the first set that asks
        print(f"  prompt-free part (after a tree changed): median {statistics.median(t.stable_seconds) * 1000:.2f} ms")
    for line in t.misses:
        print(line)


if __name__ == "__main__":
    main()
