"""memory.max_file_bytes holds for every reader and writer of a tree: each search index the
daemon, the CLI, capture's memories or the sink opens is opened with the configured limits."""

from __future__ import annotations

import ast
from pathlib import Path

from daemon.config import Config, load_settings
from daemon.memory.roots import MemoryRoot
from daemon.sinks.run import Sink
from daemon.state import StateDB

PACKAGE = Path(__file__).resolve().parent.parent / "daemon"
CAP = 4096  # the smallest memory.max_file_bytes


def test_only_open_index_and_the_sinks_filler_make_a_search_index():
    """A SearchIndex made anywhere else would read with the default limit, not the configured one."""
    makers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "SearchIndex":
                makers.append(path.relative_to(PACKAGE).as_posix())
    assert sorted(makers) == ["memory/index.py", "sinks/fill.py"]


def test_the_sinks_index_reads_a_memory_over_the_cap_by_its_head_and_reports_it(home, monkeypatch):
    monkeypatch.setenv("MEMORYD_MEMORY__MAX_FILE_BYTES", str(CAP))
    monkeypatch.setenv("MEMORYD_SINKS__COGNEE__URL", "http://127.0.0.1:9")  # never asked: fill only
    settings, paths = load_settings()
    root = MemoryRoot(paths.global_root, "global")
    big = root.path / "sessions" / "big.md"
    big.parent.mkdir(parents=True)
    big.write_text('---\ntitle: "Big"\nkind: "session"\nid: "ses_big"\n---\n\n' + "word " * 2000)
    state = StateDB(paths.state_db)
    try:
        sink = Sink(Config(settings, paths), state)
        try:
            sink.fill()
            problems = sink.filler.index.problems(root)
        finally:
            sink.close()
    finally:
        state.close()
    assert any(f"over memory.max_file_bytes ({CAP})" in p.reason for p in problems), problems
