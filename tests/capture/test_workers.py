"""A large pass builds its transcripts and extractive notes in worker processes: the
same notes, records and index as the pass that builds them itself."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from pathlib import Path

import pytest

from daemon.capture import run, workers
from daemon.capture.pipeline import PassOptions, open_capturer
from daemon.config import Config, load_settings

REPO = Path(__file__).resolve().parents[2]


def _grow(db: Path, sessions: int) -> int:
    spec = importlib.util.spec_from_file_location("grow_db", REPO / "bench" / "grow_db.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.grow(db, sessions)


def _count_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The worker counts of the pools started from now on."""
    spawned: list[int] = []
    made = workers.Prefetch.__init__

    def counting(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        spawned.append(args[2])  # opener, limits, workers
        made(self, *args, **kwargs)

    monkeypatch.setattr(workers.Prefetch, "__init__", counting)
    return spawned


def _pass(count: int):  # noqa: ANN202
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    settings.capture.workers = count
    capture = open_capturer(Config(settings, paths))
    try:
        return capture.run_pass(PassOptions()), paths
    finally:
        capture.close()


def _written(paths) -> tuple[dict[str, bytes], list[tuple], list[tuple]]:  # noqa: ANN001
    # index.md is left out: the lessons' first commit (timed, run.COMMIT_SECONDS) may compile it
    # mid-pass, and the refresh after the pass compiles it whole, with or without workers.
    notes = {p.name: p.read_bytes() for p in (paths.global_root / "sessions").glob("*.md") if p.name != "index.md"}
    notes |= {f"transcripts/{p.name}": p.read_bytes() for p in paths.transcripts_dir.glob("*.md")}
    state = sqlite3.connect(paths.state_db)
    records = state.execute("SELECT session_id, status, title, transcript_hash, note_path FROM session ORDER BY 1").fetchall()
    state.close()
    index = sqlite3.connect(paths.state_dir / "index.db")
    rows = index.execute(
        "SELECT d.path, d.title, d.description, t.t_body FROM doc d JOIN doc_text t ON t.rowid = d.rowid ORDER BY 1"
    ).fetchall()
    index.close()
    return notes, records, rows


def test_a_pass_with_workers_writes_what_one_without_them_writes(home, fixture_db, tmp_path, monkeypatch):
    roots = _grow(fixture_db, 150)
    monkeypatch.setattr(workers, "POOL_MIN", 10)
    monkeypatch.setattr(workers, "BATCH", 4)  # several batches, and a partial one at the end
    monkeypatch.setattr(workers, "AHEAD", 24)
    monkeypatch.setattr(run, "RECORD_CHUNK", 40)  # several slices, each planned one slice ahead
    monkeypatch.setattr(run, "PLAN_AHEAD", 1)
    spawned = _count_pools(monkeypatch)
    taken: list[bool] = []
    take = workers.Prefetch.take
    monkeypatch.setattr(workers.Prefetch, "take", lambda self, sid: taken.append((b := take(self, sid)) is not None) or b)
    alone, paths = _pass(1)
    assert spawned == [] and len(alone.distilled) + len(alone.junk) == roots
    before = _written(paths)

    os.rename(paths.state_dir, tmp_path / "state-alone")
    os.rename(paths.global_root, tmp_path / "tree-alone")
    pooled, paths = _pass(2)
    assert spawned == [2], "the pool did not start"
    assert len(taken) == roots and all(taken), "a session was built by the pass, not by a worker"
    assert sorted(pooled.distilled) == sorted(alone.distilled) and sorted(pooled.junk) == sorted(alone.junk)
    after = _written(paths)
    assert after[0] == before[0]  # notes and transcripts, byte for byte
    assert after[1] == before[1]
    assert after[2] == before[2]


def test_a_pass_plans_a_few_slices_ahead_and_never_the_whole_backlog(home, fixture_db, monkeypatch):
    # The workers are handed PLAN_AHEAD slices beyond the one walked (they go on while the
    # pass commits), and no more: a backfill of years must not hold every record at once.
    roots, chunk, slices_ahead = _grow(fixture_db, 150), 20, 2
    monkeypatch.setattr(workers, "POOL_MIN", 10)
    monkeypatch.setattr(run, "RECORD_CHUNK", chunk)
    monkeypatch.setattr(run, "PLAN_AHEAD", slices_ahead)
    planned: list[int] = []  # sessions planned when each session is acted on
    walked: list[int] = []
    plan_slice, act = run._plan_slice, run._act
    monkeypatch.setattr(run, "_plan_slice", lambda p, chunk, settle: planned.append(len(chunk)) or plan_slice(p, chunk, settle))
    monkeypatch.setattr(run, "_act", lambda p, *args: walked.append(sum(planned)) or act(p, *args))
    report, _ = _pass(2)
    assert len(report.distilled) + len(report.junk) == roots and sum(planned) == roots
    for position, seen in enumerate(walked):
        slice_end = (position // chunk + 1) * chunk  # of the slice this session is in
        assert seen - slice_end == min(slices_ahead * chunk, roots - slice_end), (position, seen)


def test_a_malformed_row_read_by_a_worker_is_skipped_with_its_warning(home, fixture_db, monkeypatch):
    roots = _grow(fixture_db, 40)
    conn = sqlite3.connect(fixture_db)
    with conn:  # one session's part is no JSON object: that row is skipped with a warning, in both
        sid = conn.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()[0]
        conn.execute("UPDATE part SET data = '[1, 2' WHERE session_id = ? AND rowid = (SELECT MIN(rowid) FROM part WHERE session_id = ?)", (sid, sid))
    conn.close()
    monkeypatch.setattr(workers, "POOL_MIN", 5)
    spawned = _count_pools(monkeypatch)
    report, _ = _pass(2)
    assert spawned == [2]
    assert len(report.distilled) + len(report.junk) + len(report.failed) + len(report.pending) == roots
    assert any("malformed JSON" in w for w in report.warnings)


def test_worker_count():
    assert workers.worker_count(3) == 3
    assert 1 <= workers.worker_count(0) <= workers.MAX_WORKERS


def test_a_pool_that_breaks_leaves_the_pass_to_build_the_rest(home, fixture_db, monkeypatch):
    roots = _grow(fixture_db, 40)
    monkeypatch.setattr(workers, "POOL_MIN", 5)

    def broken(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        from concurrent.futures.process import BrokenProcessPool

        raise BrokenProcessPool("a child process terminated abruptly")

    monkeypatch.setattr(workers.ProcessPoolExecutor, "submit", broken)
    report, _ = _pass(2)
    assert len(report.distilled) + len(report.junk) == roots and not report.failed
