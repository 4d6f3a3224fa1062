"""A large pass over Claude Code and Codex sessions builds them in worker processes (each opens
the sources itself with their `opener()`), and writes what a pass without workers writes."""

from __future__ import annotations

import os
import uuid

from daemon.capture import workers
from tests.agents.homes import CLAUDE, CODEX, RECORDED_PROJECT, slug
from tests.capture.test_workers import _count_pools, _pass

TOPICS = ["the deploy script", "the login form", "the CSV export", "the cache layer", "the CI workflow", "the docs site"]


def _grow(home, count: int) -> int:  # noqa: ANN001
    """`count` Claude Code sessions and `count` Codex threads, copies of the recorded ones with
    their own ids and prompts; return how many root sessions that makes."""
    project = home.root / "code" / "shop"
    project.mkdir(parents=True)
    folder = home.root / ".claude" / "projects" / slug(project)
    folder.mkdir(parents=True)
    claude = (CLAUDE / "tool-call" / "projects" / "-home-dev-proj" / "b368e461-d56a-4410-9cb6-9d1ece674ca2.jsonl").read_bytes()
    (rollout,) = (CODEX / "tool-call-hooks" / "sessions").rglob("rollout-*.jsonl")
    thread = rollout.stem[-36:]
    days = home.root / ".codex" / "sessions" / "2026" / "12" / "04"
    days.mkdir(parents=True)
    for n in range(count):
        prompt = f"Fix {TOPICS[n % len(TOPICS)]} bug number {n}".encode()
        text = claude.replace(RECORDED_PROJECT.encode(), str(project).encode()).replace(b"List the files in this project", prompt)
        (folder / f"{uuid.UUID(int=n + 1)}.jsonl").write_bytes(text)
        ident = str(uuid.UUID(int=10_000 + n))
        body = rollout.read_bytes().replace(thread.encode(), ident.encode()).replace(b"List the files in this project", prompt)
        (days / f"rollout-2026-12-04T18-11-52-{ident}.jsonl").write_bytes(body.replace(RECORDED_PROJECT.encode(), str(project).encode()))
    return 2 * count


def test_agent_sessions_are_built_by_workers_as_by_the_pass(home, tmp_path, monkeypatch):  # noqa: ANN001
    roots = _grow(home, 30)
    monkeypatch.setattr(workers, "POOL_MIN", 10)
    monkeypatch.setattr(workers, "BATCH", 4)
    spawned = _count_pools(monkeypatch)
    taken: list[bool] = []
    take = workers.Prefetch.take
    monkeypatch.setattr(workers.Prefetch, "take", lambda self, sid: taken.append((b := take(self, sid)) is not None) or b)
    alone, paths = _pass(1)
    assert spawned == [] and len(alone.distilled) == roots
    before = {p.name: p.read_bytes() for p in (paths.global_root / "sessions").glob("*.md") if p.name != "index.md"}
    os.rename(paths.state_dir, tmp_path / "state-alone")
    os.rename(paths.global_root, tmp_path / "tree-alone")
    pooled, paths = _pass(2)
    assert spawned == [2] and len(taken) == roots and all(taken), "a session was not built by a worker"
    after = {p.name: p.read_bytes() for p in (paths.global_root / "sessions").glob("*.md") if p.name != "index.md"}
    assert sorted(pooled.distilled) == sorted(alone.distilled) and after == before and len(after) == roots
