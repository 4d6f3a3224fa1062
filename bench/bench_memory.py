"""Memory benchmark: full index + compile, the pass after one change, recall latency, CLI wall time.

    python bench/bench_memory.py [--sizes 1000,10000,100000] [--queries 300] [--cli-runs 10] [--rounds 2]

For each size, writes that many memory files (mixed English, Chinese, Japanese, Korean,
identifiers; ten categories; scenarios and hard rules) into a temporary global tree (over
10,000: generated once under bench/out/ with its index, see bench/datasets.py; the first
run builds them, which takes minutes), then measures, each `--rounds` times in the run:

1. full index (SearchIndex.sync_root on an empty index) and full compile;
2. the pass after one file changes: index.update_file_report + compile_root of what it
   changed (its index.md line edited in place), and the generic sync_root + compile of all;
3. a pass with nothing changed: the full sync_root (a stat of every file, what the
   daemon's reconcile does), the quick one (folder signatures, what a command without a
   daemon does), and what the running daemon does on a tree event (refresh_paths of the
   file the event names, changed and unchanged) or for a command (nothing: it trusts it);
4. recall latency in-process: SearchIndex.search p50/p95, and commands.recall p50/p95
   (which also checks the tree for changes and counts hits);
5. on the largest size, the wall time of the whole `memoryd recall` command, process
   start included, as a user runs it (the console script of a non-editable install:
   `bench/installed.py`; `--from-checkout`: this venv's), its CPU time (user + system: what load does not inflate), and the
   imports that dominate it (python -X importtime).

Issue 22's run (each figure twice, 1k and 10k beside 100k; note `uptime` before):

    uptime; python bench/bench_memory.py --sizes 1000,10000,100000 --rounds 2

Targets: full index of 10,000 < 10 s; at 100,000 too: one-file change < 50 ms, search
p95 < 10 ms in-process, no-change pass with the daemon < 50 ms, `memoryd recall` < 300 ms wall.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.commandenv import command_env  # noqa: E402
from bench.installed import memoryd_as_installed  # noqa: E402
from bench.machine import Steal, machine_line, startup_ms  # noqa: E402

CATEGORIES = ("decision", "fact", "gotcha", "lesson", "preference", "sessions", "runbook", "api", "infra", "ci")
TECH = (
    "deploy migration postgres sqlite cache redis queue worker retry backoff timeout lockfile pnpm npm "
    "docker compose kubernetes ingress certificate rotation staging production rollback feature flag "
    "schema index vacuum checkpoint wal journal tokenizer bigram search ranking latency throughput "
    "memory leak profiler flamegraph benchmark regression fixture snapshot golden parser lexer grammar"
).split()
IDENTIFIERS = (
    "busy_timeout_ms", "daemon.memory.tree", "src/app/main.py", "--dry-run", "SearchIndex", "MAX_RETRIES",
    "kebab-case-name", "user_id", "api.v2.users", "config.example.toml", "HTTPServer", "on_conflict_do_update",
)
ZH = ("部署脚本用 pnpm 而不是 npm", "数据库迁移需要先备份", "缓存失效导致接口变慢", "测试环境的证书已经过期", "日志轮转每天一次")
JA = ("テストは pytest で実行する", "デプロイの前にマイグレーションを確認", "キャッシュを削除してから再起動")
KO = ("데이터베이스를 마이그레이션하기 전에 백업한다", "배포 스크립트는 pnpm을 사용한다", "캐시 설정을 확인한다")


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """Return a vocabulary: the technical words first (frequent), then made-up words."""
    syllables = "ka to ri mu sen do la pe vo zi ran tek lor bu mi sha gon fer".split()
    words = dict.fromkeys(TECH)
    while len(words) < size:
        words["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


class Corpus:
    """Words drawn with Zipf frequencies (s = 1.05), as in real prose: few very common, many rare."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.cumulative = list(itertools.accumulate(1 / (rank + 1) ** 1.05 for rank in range(len(self.words))))

    def sample(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def sentence(self) -> str:
        roll = self.rng.random()
        if roll < 0.12:
            return self.rng.choice(ZH) + "。"
        if roll < 0.18:
            return self.rng.choice(JA) + "。"
        if roll < 0.24:
            return self.rng.choice(KO) + "."
        words = self.sample(self.rng.randint(6, 14))
        if self.rng.random() < 0.4:
            words.insert(self.rng.randrange(len(words)), self.rng.choice(IDENTIFIERS))
        return " ".join(words).capitalize() + "."


def write_tree(root: Path, count: int, seed: int = 7) -> list[Path]:
    """Write `count` memory files under `root`; return their paths."""
    corpus = Corpus(seed)
    rng = corpus.rng
    paths = []
    for i in range(count):
        category = CATEGORIES[i % len(CATEGORIES)]
        title = " ".join(corpus.sample(3)).title() + f" {i}"
        body = "\n\n".join(" ".join(corpus.sentence() for _ in range(rng.randint(2, 5))) for _ in range(rng.randint(1, 4)))
        extra = ""
        if i % 50 == 0:
            extra += f"scenarios: [{rng.choice(TECH)} work, {rng.choice(TECH)} review]\n"
        if i % 200 == 0:
            extra += "hard_rule: true\n"
        day = 1 + i % 28
        text = (
            f"---\nid: m{i:07d}\ntitle: {title}\ndescription: {corpus.sentence()[:120]}\nkind: {category}\n"
            f"tags: [{rng.choice(TECH)}, {rng.choice(TECH)}]\n{extra}created: 2025-0{1 + i % 9}-{day:02d}\n"
            f"updated: 2025-0{1 + i % 9}-{day:02d}T{i % 24:02d}:00:00Z\n---\n\n{body}\n"
        )
        path = root / category / f"memory-{i:07d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def queries(count: int, seed: int = 11) -> list[str]:
    """Queries people and agents type: content words, identifiers, CJK words, prefixes."""
    corpus = Corpus(seed)
    rng = corpus.rng
    content = corpus.words[10:1500]  # not the handful of words in every other memory
    pool = [
        lambda: rng.choice(content),
        lambda: " ".join(rng.sample(content, 2)),
        lambda: rng.choice(TECH[10:]),
        lambda: rng.choice(IDENTIFIERS),
        lambda: rng.choice(("部署", "迁移", "缓存", "テスト", "デプロイ", "마이그레이션", "배포")),
        lambda: rng.choice(content)[:5],  # a prefix: often a strict miss, then the prefix retry
    ]
    return [rng.choice(pool)() for _ in range(count)]


def child_cpu() -> float:
    """CPU seconds (user + system) of the waited-for children so far: what a command cost
    whatever the machine's load (wall time waits for other processes' turns too)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


FRESH_MAX = 10_000  # larger trees come from bench/out/ (generated once), with their index


def prepare(home: Path, count: int) -> tuple[Path, Path, float | None]:
    """A tree of `count` memories and its index: (tree, index.db, full index seconds or None if cached)."""
    from daemon.memory.index import SearchIndex
    from daemon.memory.index_schema import SCHEMA_VERSION
    from daemon.memory.roots import MemoryRoot
    from daemon.memory.tokenize import TOKENIZER_VERSION

    db_path = home / "state" / "memoryd" / "index.db"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    if count <= FRESH_MAX:
        tree = home / "config" / "opencode" / "memory"
        shutil.rmtree(tree, ignore_errors=True)
        write_tree(tree, count)
        cached = None
    else:
        from bench.datasets import memory_home

        tree = memory_home(count) / "config" / "opencode" / "memory"
        cached = tree.parent.parent.parent / f"index-s{SCHEMA_VERSION}-t{TOKENIZER_VERSION}.db"
        if cached.exists():
            shutil.copy(cached, db_path)
            return tree, db_path, None
    with SearchIndex(db_path) as index:
        t0 = time.perf_counter()
        index.sync_root(MemoryRoot(tree, "global"))
        took = time.perf_counter() - t0
        index._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if cached is not None:
        shutil.copy(db_path, cached)
    return tree, db_path, took


def bench_size(home: Path, count: int, n_queries: int, rounds: int) -> Path:
    from daemon.memory.compile import compile_root
    from daemon.memory.index import SearchIndex
    from daemon.memory.roots import MemoryRoot

    tree, db_path, full_index = prepare(home, count)
    paths = sorted(tree.glob("*/memory-*.md"))
    size_mb = sum(p.stat().st_size for p in paths) / 1e6
    print(f"\n== {count:,} memories ({size_mb:.1f} MB of Markdown; index.db {db_path.stat().st_size / 1e6:.0f} MB,"
          f" {db_path.stat().st_size / 1e6 / size_mb:.2f}x)")
    root = MemoryRoot(tree, "global")
    with SearchIndex(db_path) as index:
        t0 = time.perf_counter()
        written = compile_root(root, index)
        full_compile = time.perf_counter() - t0
        if full_index is not None:
            print(f"full index             {ms(full_index)}  ({index.count()} entries)")
        print(f"full compile           {ms(full_compile)}  ({len(written)} files written)")
        aged(paths)
        index.sync_root(root)
        for round_ in range(1, rounds + 1):
            print(f"-- round {round_}   (load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
            steal = Steal()
            bench_changes(index, root, paths)
            bench_search(index, root, count, n_queries)
            print(f"   (CPU steal during the round: {steal.share()})")
    return tree


def aged(paths: list[Path]) -> None:
    """Let every file age past the racy-mtime window, as on a real machine."""
    old = time.time() - 3600
    for p in paths:
        os.utime(p, (old, old))


def bench_changes(index, root, paths: list[Path]) -> None:  # noqa: ANN001 - SearchIndex, MemoryRoot
    """One file changed (path known, then unknown) and a sync that finds nothing."""
    from daemon.memory.compile import compile_root

    def edit(path: Path, n: int) -> None:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("\n\n", f"\n\nEdited {n}: 部署 pnpm hotfix.\n\n", 1), encoding="utf-8")

    known, unknown = [], []
    originals = {}
    try:
        for n in range(5):
            target = paths[(n + 1) * len(paths) // 7]
            originals.setdefault(target, target.read_bytes())
            edit(target, n)
            t0 = time.perf_counter()
            changes = index.update_file_report(target, root)
            t1 = time.perf_counter()
            compile_root(root, index, changes=changes)
            known.append((t1 - t0, time.perf_counter() - t1))
            edit(target, n + 10)
            t0 = time.perf_counter()
            index.sync_root(root)
            t1 = time.perf_counter()
            compile_root(root, index)
            unknown.append((t1 - t0, time.perf_counter() - t1))
    finally:
        for path, data in originals.items():  # a cached tree stays as generated
            path.write_bytes(data)
        aged(list(originals))
        index.sync_root(root)
        compile_root(root, index)

    def med(pairs: list[tuple[float, float]], i: int) -> float:
        return statistics.median(p[i] for p in pairs)

    print(
        f"one change, path known: update_file {ms(med(known, 0))} + compile its category {ms(med(known, 1))}"
        f" = {ms(med(known, 0) + med(known, 1))}   target < 50 ms (median of 5)"
    )
    print(
        f"one change, path unknown: sync_root {ms(med(unknown, 0))} + compile all {ms(med(unknown, 1))}"
        f" = {ms(med(unknown, 0) + med(unknown, 1))}"
    )
    t0 = time.perf_counter()
    assert index.sync_root(root) == 0
    print(f"no-change sync_root    {ms(time.perf_counter() - t0)}   (a stat of every file: the reconcile pass)")
    t0 = time.perf_counter()
    assert index.sync_root(root, quick=True) == 0
    print(f"no-change quick sync   {ms(time.perf_counter() - t0)}   (folder signatures: a command without a daemon)")
    bench_daemon_pass(index, root, paths)


def bench_daemon_pass(index, root, paths: list[Path]) -> None:  # noqa: ANN001 - SearchIndex, MemoryRoot
    """What the running daemon does on a tree event: re-read the files it names (refresh_paths)."""
    from daemon.memory.refresh import refresh_paths
    from daemon.memory.workspace import Workspace

    target = paths[len(paths) // 3]
    original = target.read_bytes()
    changed, unchanged = [], []
    try:
        for n in range(5):
            target.write_text(original.decode().replace("\n\n", f"\n\nDaemon edit {n}.\n\n", 1), encoding="utf-8")
            t0 = time.perf_counter()
            assert refresh_paths(index, root, {target}).changed == 1
            changed.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            assert refresh_paths(index, root, {target}).changed == 0
            unchanged.append(time.perf_counter() - t0)
    finally:
        target.write_bytes(original)
        aged([target])
        refresh_paths(index, root, {target})
    trusted = Workspace(index, root, None, trust_index=True)
    t0 = time.perf_counter()
    trusted.refresh([root])
    print(f"daemon: one change, path known (refresh_paths: update + compile) {ms(statistics.median(changed))}"
          f"   target < 50 ms (median of 5)")
    print(f"daemon: no-change pass (refresh_paths of an unchanged file) {ms(statistics.median(unchanged))};"
          f" a command's check with the daemon running {ms(time.perf_counter() - t0)}   target < 50 ms")


def bench_search(index, root, count: int, n_queries: int) -> None:  # noqa: ANN001 - SearchIndex, MemoryRoot
    """Search and recall latency over the bench's query mix, and the commonest word alone."""
    from daemon.memory.commands import Workspace, recall

    qs = queries(n_queries)
    for q in qs[:20]:
        index.search(q, [root])  # warm the page cache
    timings, modes = [], {"strict": 0, "prefix": 0, "none": 0}
    for q in qs:
        t0 = time.perf_counter()
        result = index.search(q, [root], limit=10)
        timings.append(time.perf_counter() - t0)
        modes[result.mode] += 1
    print(
        f"search  p50 {ms(pct(timings, 50))}  p95 {ms(pct(timings, 95))}  max {ms(max(timings))}   "
        f"target p95 < 10 ms  ({len(qs)} queries: {modes})"
    )
    # Worst case: the commonest word of the corpus, in nearly every memory (like "the").
    common = Corpus().words[0]
    share = index.doc_counts([common]).get(common, 0)
    worst = []
    for _ in range(20):
        t0 = time.perf_counter()
        index.search(common, [root], limit=10)
        worst.append(time.perf_counter() - t0)
    print(f"search worst case: {common!r} is in {share / count:.0%} of memories: median {ms(statistics.median(worst))}")
    for trusted in (False, True):
        ws = Workspace(index, root, None, trust_index=trusted)
        timings = []
        for q in qs[:100]:
            t0 = time.perf_counter()
            recall(ws, q, limit=10)
            timings.append(time.perf_counter() - t0)
        what = "index trusted (daemon running)" if trusted else "checks the tree first (no daemon)"
        print(f"commands.recall, {what}:  p50 {ms(pct(timings, 50))}  p95 {ms(pct(timings, 95))}")


def bench_cli(home: Path, tree: Path, runs: int, rounds: int, memoryd: Path | None) -> None:
    """`memoryd recall` wall time over `tree` (the last size's; its index is in home/state),
    run as `memoryd` (the installed console script; None: this venv's, or `python -m daemon`)."""
    env = command_env(HOME=str(home), XDG_CONFIG_HOME=str(tree.parent.parent),
                      XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"))
    script = memoryd or Path(sys.executable).parent / "memoryd"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "daemon"]
    cwd = home / "elsewhere"
    cwd.mkdir(exist_ok=True)

    cpu: list[float] = []

    def wall(args: list[str]) -> float:
        t0, before = time.perf_counter(), child_cpu()
        subprocess.run(args, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        cpu.append(child_cpu() - before)
        return time.perf_counter() - t0

    from daemon.service.lock import InstanceLock

    wall([*command, "recall", "deploy"])  # warm caches and .pyc files
    words = ("deploy", "部署", "busy_timeout_ms", "migrat") * (runs // 4 + 1)
    print(f"\n== `{' '.join(Path(c).name for c in command)} recall` wall time, {runs} runs each")
    print(f"python -c pass                      median {ms(startup_ms(runs) / 1000)}")
    for _ in range(rounds):
        cpu.clear()
        alone = [wall([*command, "recall", q]) for q in words[:runs]]
        print(f"memoryd recall, no daemon           median {ms(statistics.median(alone))}  max {ms(max(alone))}"
              f"   target < 300 ms   (CPU median {ms(statistics.median(cpu))}; load {os.getloadavg()[0]:.1f})")
    # With the daemon's lock held, recall trusts the index the daemon keeps current.
    cpu.clear()
    with InstanceLock(home / "state" / "memoryd" / "memoryd.lock"):
        served = [wall([*command, "recall", q]) for q in words[:runs]]
    print(f"memoryd recall, daemon running      median {ms(statistics.median(served))}  max {ms(max(served))}"
          f"   (CPU median {ms(statistics.median(cpu))})")

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "daemon", "recall", "deploy"],
        env=env, cwd=cwd, capture_output=True, text=True, check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
            if not name.startswith(" "):
                rows.append((int(cumulative), name))
    top = sorted((r for r in rows if "." not in r[1] or r[1].startswith("daemon")), reverse=True)[:8]
    print("largest top-level imports on the recall path (cumulative):")
    for micros, name in top:
        print(f"  {micros / 1000:7.1f} ms  {name}")
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, runpy; sys.argv=['memoryd','recall','deploy'];\n"
         "try:\n runpy.run_module('daemon', run_name='__main__')\nexcept SystemExit: pass\n"
         "print(','.join(m for m in ('pydantic','structlog','httpx','rich','watchdog','mcp','yaml') if m in sys.modules), file=sys.stderr)"],
        env=env, cwd=cwd, capture_output=True, text=True, check=True,
    )
    print(f"heavy modules loaded by `memoryd recall`: {loaded.stderr.strip() or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated tree sizes")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="times each figure is measured in the run")
    parser.add_argument("--from-checkout", action="store_true",
                        help="time `memoryd recall` from this venv, not as installed (bench/installed.py)")
    args = parser.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"))
        for size in (int(s) for s in args.sizes.split(",")):
            tree = bench_size(home, size, args.queries, args.rounds)
        bench_cli(home, tree, args.cli_runs, args.rounds, None if args.from_checkout else memoryd_as_installed())


if __name__ == "__main__":
    main()
