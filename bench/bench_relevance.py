"""Relevance benchmark: is "Relevant to the first prompt" worth its tokens, on prompts the tuner has not seen?

    python bench/bench_relevance.py                      # training sets, as written and at 1k, 10k
    python bench/bench_relevance.py --validation DIR --first-run FILE_OR_DIR
    python bench/bench_relevance.py --data DIR [--sizes 0] [--verbose]

Each JSON file is one world (format: tests/data/relevance/README.md): projects, their
memories (some projects with a `.memory/` tree of their own, the others' in the shared
global tree with `project:` set, as memoryd writes them), machine-wide memories, and the
prompts a session in one of the projects opens with, each with the memories a colleague
would hand over. Every world is scored on its own: as written (a small store: size 0)
and padded with generated filler (tests/data/relevance/filler.json) to each size. Every
prompt's block is built as a session in that project gets it, from real trees and a real
index. Figures, side by side for each group of worlds:

- training: tests/data/relevance/training/ (seen and tuned on: regression only);
- validation (--validation DIR): written by someone else, never read by the tuner; only
  aggregates are printed, never a prompt, and --verbose is refused for it;
- first-run (--first-run): a fresh batch, run once before it is read.

Measured: precision and recall of the previews (micro-averaged; a preview of a memory
not listed counts as wrong), for English and CJK prompts (zh, ja, ko, mixed) apart;
prompts with nothing relevant that still got a "Relevant" section; items of another
project in a block (inventory or previews: must be 0) or among the first ten of a recall
of the prompt's words in that project; the block's tokens (median); the time to build
a block in-process (the socket's p95 is bench_inject.py's).

Targets (issue 37, held out): precision >= 0.85, recall >= 0.90, nothing-relevant with a
section <= 10 %, CJK within 0.05 of English, cross-project 0, block median <= 600 tokens.
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

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "relevance"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
KINDS = ("rule", "lesson", "gotcha", "decision", "fact", "session")
CJK_LANGS = ("zh", "ja", "ko", "mixed")


class BadSet(ValueError):
    """A labelled set that does not follow the format: which file and what."""


def load(path: Path) -> dict:
    """A world from its JSON file, checked: every prompt's project known, every `should`
    a memory of its scope (its project's or machine-wide)."""
    try:
        world = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BadSet(f"{path}: {error}") from error
    projects = {p["name"] for p in world.get("projects", [])}
    owner = {}
    for m in world.get("memories", []):
        if m.get("kind") not in KINDS or not m.get("id") or m.get("project", "") not in projects | {""}:
            raise BadSet(f"{path}: memory {m.get('id')!r}: kind must be one of {KINDS}, project one of the projects or ''")
        owner[m["id"]] = m.get("project", "")
    for p in world.get("prompts", []):
        if p.get("project") not in projects:
            raise BadSet(f"{path}: prompt {p.get('prompt', '')[:40]!r}: unknown project {p.get('project')!r}")
        wrong = [s for s in p.get("should", []) if owner.get(s, None) not in (p["project"], "")]
        if wrong:
            raise BadSet(f"{path}: prompt {p['prompt'][:40]!r}: {wrong} not memories in its scope")
    world["owner"] = owner
    return world


def _write(path: Path, fields: dict[str, object], body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    front = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items())
    path.write_text(f"---\n{front}\n---\n\n{body}\n", encoding="utf-8")


class Trees:
    """A world on disk: a worktree per project, its tree or the shared global one."""

    def __init__(self, base: Path, projects: list[dict]) -> None:
        self.worktrees = {p["name"]: base / "src" / p["name"] for p in projects}
        self.own = {p["name"] for p in projects if p.get("own_tree")}
        for name, tree in self.worktrees.items():
            (tree / ".git").mkdir(parents=True)
            if name in self.own:
                (tree / ".memory").mkdir()
        self.global_root = base / "config" / "opencode" / "memory"
        self.global_root.mkdir(parents=True)

    def put(self, memory: dict, day: int) -> None:
        mid, project, kind = memory["id"], memory.get("project", ""), memory["kind"]
        fields: dict[str, object] = {"id": mid, "title": memory["title"], "kind": kind}
        if memory.get("description"):
            fields["description"] = memory["description"]
        if memory.get("tags"):
            fields["tags"] = memory["tags"]
        fields["updated"] = f"2026-0{1 + day % 5}-{1 + day % 27:02d}"
        if kind == "session":
            fields["session_id"] = mid
        if project in self.own:
            root = self.worktrees[project] / ".memory"
        else:
            root = self.global_root
            if project:
                fields["project"] = str(self.worktrees[project])
        category = "sessions" if kind == "session" else kind
        _write(root / category / f"{mid}.md", fields, memory["body"])


def filler(count: int, owners: list[str], seed: int = 5) -> list[dict]:
    """Memories about nothing in particular: made-up words, a few generic ones, some CJK."""
    words = json.loads((DATA / "filler.json").read_text(encoding="utf-8"))
    rng = random.Random(seed)
    kinds = ["session"] * 7 + ["lesson", "gotcha", "decision", "fact"]

    def nonce() -> str:
        return "".join(rng.choice(words["syllables"]) for _ in range(rng.randint(2, 3)))

    def text(k: int) -> str:
        return " ".join(rng.choice(words["generic"]) if rng.random() < 0.2 else nonce() for _ in range(k))

    out = []
    for n in range(count):
        body = " ".join(text(rng.randint(6, 12)).capitalize() + "." for _ in range(rng.randint(2, 6)))
        if rng.random() < 0.15:
            body += " " + "".join(rng.choice(words["generic_cjk"]) for _ in range(3)) + "。"
        out.append({"id": f"f{n:06d}", "project": rng.choice(owners), "kind": rng.choice(kinds),
                    "title": text(rng.randint(3, 6)).capitalize(), "body": body})  # fmt: skip
    return out


@dataclass
class Tally:
    shown: dict[str, int] = field(default_factory=lambda: {"en": 0, "cjk": 0})
    right: dict[str, int] = field(default_factory=lambda: {"en": 0, "cjk": 0})
    wanted: dict[str, int] = field(default_factory=lambda: {"en": 0, "cjk": 0})
    found: dict[str, int] = field(default_factory=lambda: {"en": 0, "cjk": 0})
    prompts: int = 0
    empty_prompts: int = 0
    empty_with_section: int = 0
    cross: int = 0
    recall_cross: int = 0
    tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("shown", "right", "wanted", "found"):
            for group, n in getattr(other, name).items():
                getattr(self, name)[group] += n
        for name in ("prompts", "empty_prompts", "empty_with_section", "cross", "recall_cross"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.tokens += other.tokens
        self.seconds += other.seconds
        self.misses += other.misses

    def precision(self, *groups: str) -> float:
        shown = sum(self.shown[g] for g in groups or self.shown)
        return sum(self.right[g] for g in groups or self.right) / shown if shown else 1.0

    def recall(self, *groups: str) -> float:
        wanted = sum(self.wanted[g] for g in groups or self.wanted)
        return sum(self.found[g] for g in groups or self.found) / wanted if wanted else 1.0


def run_world(world: dict, size: int, verbose: bool) -> Tally:
    """Score one world's prompts, its store padded with filler to `size` memories."""
    from daemon.memory.context import Budgets, assemble, build_context, build_stable, estimate_tokens, render_relevant
    from daemon.memory.index import SearchIndex
    from daemon.memory.roots import MemoryRoot

    base = Path(tempfile.mkdtemp(prefix="mdr-")).resolve()
    tally = Tally()
    try:
        trees = Trees(base, world["projects"])
        memories = world["memories"]
        padding = filler(max(0, size - len(memories)), [*trees.worktrees, ""])
        owner = {**world["owner"], **{m["id"]: m["project"] for m in padding}}
        for number, memory in enumerate([*memories, *padding]):
            trees.put(memory, number)
        with SearchIndex(base / "state" / "index.db") as index:
            global_root = MemoryRoot(trees.global_root, "global")
            roots_of = {p: [MemoryRoot(w / ".memory", "project"), global_root] for p, w in trees.worktrees.items()}
            index.sync_root(global_root)
            for name in trees.own:
                index.sync_root(roots_of[name][0])
            stable = {}
            for item in world["prompts"]:
                project, prompt, should = item["project"], item["prompt"], item.get("should", [])
                roots = roots_of[project]
                if project not in stable:  # what the daemon keeps until a tree changes
                    stable[project] = build_stable(index, roots, NOW)
                started = time.perf_counter()
                lines, ids = render_relevant(
                    index, roots, prompt, NOW, Budgets(), project=str(trees.worktrees[project]),
                    skip_ids=stable[project].rule_ids,
                )  # fmt: skip
                context = assemble(stable[project], prompt, lines, ids)
                tally.seconds.append(time.perf_counter() - started)
                assert context.block == build_context(index, roots, NOW, prompt=prompt).block
                tally.tokens.append(estimate_tokens(context.block))
                found = index.search(prompt[:300], roots, 10, now=NOW, project=str(trees.worktrees[project]))
                tally.recall_cross += sum(1 for h in found.hits if owner.get(h.memory.id, "") not in ("", project))
                _score(tally, owner, item, should, context, verbose)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return tally


def _score(tally: Tally, owner: dict[str, str], item: dict, should: list[str], context, verbose: bool) -> None:
    group = "cjk" if item.get("lang", "en") in CJK_LANGS else "en"
    shown = list(context.relevant_ids)
    right = [m for m in shown if m in should]
    tally.prompts += 1
    tally.shown[group] += len(shown)
    tally.right[group] += len(right)
    tally.wanted[group] += len(should)
    tally.found[group] += len(set(right))
    if not should:
        tally.empty_prompts += 1
        tally.empty_with_section += bool(shown)
    named = set(re.findall(r"id ([\w-]+)\)", context.block))
    tally.cross += sum(1 for mid in named if owner.get(mid, "") not in ("", item["project"]))
    if verbose and set(shown) != set(should):
        tally.misses.append(f"  [{item['project']}] {item['prompt']!r}: shown {shown}, should {should}")


def worlds_in(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.glob("*.json"))


def table(columns: dict[str, Tally]) -> str:
    """The figures of each group of worlds, side by side."""

    def row(label: str, fn) -> str:
        return f"  {label:<34}" + "".join(f"{fn(t):>14}" for t in columns.values())

    empty = lambda t: f"{t.empty_with_section}/{t.empty_prompts}"  # noqa: E731
    lines = [
        f"  {'':<34}" + "".join(f"{name:>14}" for name in columns),
        row("prompts", lambda t: str(t.prompts)),
        row("precision", lambda t: f"{t.precision():.3f}"),
        row("recall", lambda t: f"{t.recall():.3f}"),
        row("precision en / cjk", lambda t: f"{t.precision('en'):.2f}/{t.precision('cjk'):.2f}"),
        row("recall en / cjk", lambda t: f"{t.recall('en'):.2f}/{t.recall('cjk'):.2f}"),
        row("nothing relevant, got a section", empty),
        row("cross-project (blocks / recall)", lambda t: f"{t.cross}/{t.recall_cross}"),
        row("block tokens, median", lambda t: f"{statistics.median(t.tokens):.0f}" if t.tokens else "-"),
        row("block ms in-process, median", lambda t: f"{statistics.median(t.seconds) * 1000:.2f}" if t.seconds else "-"),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0,1000,10000", help="store sizes (0: as written), comma-separated")
    parser.add_argument("--training", type=Path, default=DATA / "training", help="folder of training worlds")
    parser.add_argument("--validation", type=Path, help="folder of validation worlds (aggregates only)")
    parser.add_argument("--first-run", type=Path, help="a fresh batch (file or folder) run before it is read")
    parser.add_argument("--data", type=Path, help="run only the worlds of this folder (a validation folder: aggregates only)")
    parser.add_argument("--verbose", action="store_true", help="list each prompt whose previews are not exactly right")
    args = parser.parse_args()
    if args.data is not None:
        groups = {args.data.name or "data": args.data}
    else:
        groups = {"training": args.training, "validation": args.validation, "first-run": args.first_run}
    groups = {name: path for name, path in groups.items() if path is not None}
    hidden = {name for name, path in groups.items() if name == "validation" or "validation" in path.resolve().parts}
    if args.verbose and hidden:
        parser.error("--verbose lists prompts: not for a validation set")
    worlds = {name: [load(p) for p in worlds_in(path)] for name, path in groups.items()}
    for name, found in worlds.items():
        if not found:
            parser.error(f"no JSON world in {groups[name]}")
        if name not in hidden:
            print(f"{name}: " + ", ".join(f"{w['name']} ({len(w['memories'])} memories, {len(w['prompts'])} prompts)" for w in found))
        else:
            print(f"{name}: {len(found)} worlds, {sum(len(w['prompts']) for w in found)} prompts")
    for size in (int(s) for s in args.sizes.split(",")):
        columns = {}
        for name, found in worlds.items():
            total = Tally()
            for world in found:
                total.add(run_world(world, size, args.verbose and name not in hidden))
            columns[name] = total
        print(f"\n{'as written' if not size else f'padded to {size} memories'}:")
        print(table(columns))
        for name, tally in columns.items():
            if name not in hidden:
                for line in tally.misses:
                    print(f"  {name}{line}")


if __name__ == "__main__":
    main()
