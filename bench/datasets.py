"""Benchmark data generated once and kept under bench/out/ (gitignored).

Writing 100,000 memory files or growing a 50,000-session database takes minutes on a
shared machine; every benchmark run after the first reuses them. A data set is complete
only when its `.complete` marker exists, so an interrupted build starts over.

    python bench/datasets.py memory|inject|sessions COUNT    # build one ahead of a run
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
sys.path.insert(0, str(OUT.parent.parent))
sys.path.insert(0, str(OUT.parent))

# Bump when a generator's output changes: older caches are rebuilt.
GENERATION = 1
AGE_SECONDS = 3600  # files are aged past the index's racy-mtime window, as on a real machine


def cached(name: str, build: Callable[[Path], None]) -> Path:
    """Return bench/out/<name>, built by `build(folder)` unless a complete copy exists."""
    target = OUT / name
    marker = target / ".complete"
    if marker.exists() and marker.read_text().strip() == str(GENERATION):
        return target.resolve()  # bench/out may be a link: the index names trees by their real path
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    started = time.perf_counter()
    build(target)
    marker.write_text(f"{GENERATION}\n")
    print(f"(built bench/out/{name} in {time.perf_counter() - started:.0f} s; later runs reuse it)", flush=True)
    return target.resolve()


def age_tree(folder: Path) -> None:
    """Set every file's mtime an hour back, so the index trusts their stat signatures."""
    old = time.time() - AGE_SECONDS
    for dirpath, _, names in os.walk(folder):
        for name in names:
            os.utime(os.path.join(dirpath, name), (old, old))


def memory_home(count: int) -> Path:
    """Return a home whose global tree (`config/opencode/memory`) holds `count` memories, aged."""
    from bench_memory import write_tree

    def build(target: Path) -> None:
        tree = target / "config" / "opencode" / "memory"
        write_tree(tree, count, seed=7)
        age_tree(tree)

    return cached(f"memory-{count}", build)


def inject_home(count: int) -> Path:
    """Return a home for bench_inject: half the memories global (`c/…`), half in project `p/shop`."""
    from bench_memory import write_tree

    def build(target: Path) -> None:
        project = target / "p" / "shop"
        (project / ".git").mkdir(parents=True)
        write_tree(target / "c" / "opencode" / "memory", count // 2, seed=1)
        write_tree(project / ".memory", count - count // 2, seed=2)
        age_tree(target / "c")
        age_tree(project / ".memory")

    return cached(f"inject-{count}", build)


def opencode_db(sessions: int) -> Path:
    """Return a real-shape OpenCode database grown to `sessions` root sessions (grow_db)."""
    from grow_db import grow

    def build(target: Path) -> None:
        grow(target / "opencode.db", sessions)

    return cached(f"opencode-{sessions}", build) / "opencode.db"


if __name__ == "__main__":
    what, size = sys.argv[1], int(sys.argv[2])
    build = {"memory": memory_home, "inject": inject_home, "sessions": opencode_db}[what]
    print(build(size))
