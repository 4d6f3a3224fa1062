"""Viewer benchmark: what `memoryd ui` costs, and what it costs the sessions beside it.

    python bench/bench_ui.py [--sizes 10000,100000] [--requests 200]

For each size (half the memories global, half in project p/shop; over 10,000 generated
once under bench/out/ by bench/datasets.py), in one process as the daemon runs them: the
context socket (ContextServer) and the viewer on its own thread (`start_viewer`, trusting
the index as the daemon's viewer does). Measured:

1. every page, server-side (the viewer's Server-Timing header): p50/p95 over `--requests`
   requests spread over the page's variants (deep pages, filters, random memories);
2. search as you type: each query typed a character at a time, as htmx asks for it;
3. the socket's `GET /context` for a new 13-word prompt, p50/p95: alone, then while
   another process browses the viewer flat out (pages and search), then alone again.

Targets (issue 40): every page p95 < 150 ms, search as you type p95 < 50 ms at 100,000
memories; the socket's p95 does not move while the viewer is used.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_inject import env_for, prepare  # noqa: E402
from bench.bench_memory import CATEGORIES, Corpus, pct, queries  # noqa: E402
from bench.machine import Steal, machine_line  # noqa: E402


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values):7.2f} ms   p95 {pct(values, 95):7.2f} ms"


def server_ms(answer) -> float:  # noqa: ANN001 - an httpx.Response
    assert answer.status_code == 200, (answer.status_code, answer.url)
    return float(answer.headers["server-timing"].split("dur=")[1])


def logged_in(base: str, secret: str):  # noqa: ANN201 - an httpx.Client holding the cookie
    import httpx

    client = httpx.Client(base_url=base, timeout=60)
    client.get("/", params={"token": secret}, follow_redirects=False)
    return client


def page_variants(count: int, project: Path, rng: random.Random, ids: list[str]) -> dict[str, list[str]]:
    """The pages, each with the variants a person clicks through (`ids`: memories to open)."""
    # The generated memories' times span January to September 2025: a cursor in June.
    deep = 1_748_736_000
    words = queries(40, seed=5)
    quoted = urllib.parse.quote(str(project))
    return {
        "overview": ["/"],
        "sessions": ["/sessions", f"/sessions?project={quoted}", f"/sessions?after={deep}:0"],
        # after=: a page deep in the listing (a cursor far down, as "Older →" leads there)
        "memories": ["/memories", f"/memories?after={deep}:0", f"/memories?project={quoted}", f"/memories?project={quoted}&after={deep}:0"]
        + [f"/memories?kind={c}" for c in CATEGORIES] + [f"/memories?kind={c}&after={deep}:0" for c in CATEGORIES[:3]],
        "one memory": [f"/memories/{i}" for i in ids],
        "edit form": [f"/memories/{i}/edit" for i in ids[:10]],
        "search page": [f"/search?{urllib.parse.urlencode({'q': q, 'project': str(project)})}" for q in words],
        "given (recent)": ["/given", "/given/0", "/given/3"],
        "try a prompt": [
            f"/given?{urllib.parse.urlencode({'project': str(project), 'prompt': Corpus(n).sentence()})}" for n in range(20)
        ],
    }


def bench_pages(client, count: int, project: Path, requests: int, ids: list[str]) -> None:  # noqa: ANN001
    rng = random.Random(3)
    for name, variants in page_variants(count, project, rng, ids).items():
        server_ms(client.get(variants[0]))  # a first request warms the page's queries
        times = [server_ms(client.get(variants[n % len(variants)])) for n in range(requests)]
        print(f"page {name:<24} {ms(times)}   target p95 < 150 ms")


def bench_typing(client, project: Path, words: int) -> None:  # noqa: ANN001
    times = []
    for query in queries(words, seed=9):
        for end in range(1, len(query) + 1):
            params = {"q": query[:end], "project": str(project), "scope": "all"}
            times.append(server_ms(client.get("/search", params=params, headers={"HX-Request": "true"})))
    print(f"search as you type           {ms(times)}   target p95 < 50 ms  ({len(times)} keystrokes)")


def browse(base: str, secret: str, project: str, count: int, ids: list[str], rate: float) -> None:
    """The load (a subprocess): clicking and typing at `rate` requests a second (0: as fast
    as the viewer answers)."""
    client = logged_in(base, secret)
    rng = random.Random(1)
    pages = [p for variants in page_variants(count, Path(project), rng, ids).values() for p in variants]
    typed = [q[:end] for q in queries(200, seed=4) for end in range(1, len(q) + 1)]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    client.get("/").raise_for_status()
    print("browsing", flush=True)
    n, started = 0, time.perf_counter()
    try:
        while True:
            if rate:
                time.sleep(max(0.0, started + n / rate - time.perf_counter()))
            for answer in (client.get(rng.choice(pages)),
                           client.get("/search", params={"q": rng.choice(typed), "project": project}, headers={"HX-Request": "true"})):  # fmt: skip
                answer.raise_for_status()
                n += 1
    finally:
        print(n, flush=True)


def bench_socket_beside(sock: Path, project: Path, base: str, secret: str, count: int, n: int, ids: list[str]) -> None:
    from daemon.service.context_server import request

    corpus = Corpus(21)

    def context_ms(prompt: str) -> float:
        target = "/context?" + urllib.parse.urlencode({"dir": str(project), "prompt": prompt, "session": "ses_bench"})
        started = time.perf_counter()
        status, answer = request(sock, "GET", target, timeout=30)
        assert status == 200, (status, answer)
        return (time.perf_counter() - started) * 1000

    def prompts() -> list[str]:
        return [" ".join(f"{corpus.sentence()} {corpus.sentence()}".split()[:13]) for _ in range(n)]

    print(f"socket context, 13-word prompt, alone            {ms([context_ms(p) for p in prompts()])}")
    for rate, label in ((10.0, "a fast typist, 10 requests/s"), (0.0, "flat out")):
        beside, served, seconds = _beside(context_ms, prompts, n, [base, secret, str(project), str(count), ",".join(ids)], rate)
        print(f"socket context, 13-word prompt, viewer in use    {ms(beside)}   (another process browsing, {label}:"
              f" {served} viewer answers, {served / seconds:.0f}/s)")
    print(f"socket context, 13-word prompt, alone again      {ms([context_ms(p) for p in prompts()])}"
          f"   (load {os.getloadavg()[0]:.1f})")


def _beside(context_ms, prompts, n: int, args: list[str], rate: float) -> tuple[list[float], int, float]:  # noqa: ANN001
    """Socket times while a subprocess browses the viewer at `rate`; its answers and the seconds."""
    load = subprocess.Popen(
        [sys.executable, __file__, "--load", *args, str(rate)], env=os.environ.copy(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert load.stdout is not None and load.stdout.readline().strip() == "browsing"
        started = time.perf_counter()
        beside = []
        while len(beside) < n or time.perf_counter() - started < 5:  # long enough for many viewer answers
            beside.extend(context_ms(p) for p in prompts()[:50])
        seconds = time.perf_counter() - started
    finally:
        load.terminate()
        served = int(load.communicate(timeout=10)[0].strip() or 0)
    return beside, served, seconds


def remembered(config, project: Path, count: int = 40) -> list[str]:  # noqa: ANN001 - a Config
    """The ids of memories saved as `memoryd remember` saves them (the generated trees
    share ids between their two halves: opening one by id would find two)."""
    from daemon.memory.commands import remember
    from daemon.memory.workspace import open_workspace

    corpus = Corpus(33)
    with open_workspace(config, project, explicit_project=True) as ws:
        return [
            remember(ws, kind="lesson", title=f"Bench lesson {n}", body=" ".join(corpus.sentence() for _ in range(6))).memory.id
            for n in range(count)
        ]


def session_notes(home: Path, count: int) -> Path:
    """`count` session notes (kind session, as capture writes them) in a project of their
    own beside the generated trees, indexed; the caller forgets the tree afterwards."""
    from daemon.config import Config, load_settings
    from daemon.memory.index import open_index
    from daemon.memory.roots import MemoryRoot

    project = Path(tempfile.mkdtemp(prefix="mdb-notes-"))
    (project / ".git").mkdir()
    folder = project / ".memory" / "sessions"
    folder.mkdir(parents=True)
    corpus = Corpus(17)
    for i in range(count):
        day = f"2025-{1 + i % 9:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
        (folder / f"ses-{i:06d}.md").write_text(
            f"---\nid: ses_{i:06d}\ntitle: {corpus.sentence()[:80]}\ndescription: {corpus.sentence()[:120]}\n"
            f"kind: session\nsession_id: ses_{i:06d}\nproject: {project}\nstarted: {day}\nupdated: {day}\n---\n\n"
            f"## What Was Worked On\n- {corpus.sentence()}\n\n## Outcome / Current State\n- {corpus.sentence()}\n",
            encoding="utf-8",
        )
    with open_index(Config(*load_settings())) as index:
        index.sync_root(MemoryRoot(project / ".memory", "project"))
    return project


def bench_size(count: int, requests: int) -> None:
    from daemon.config import Config, load_settings
    from daemon.service.context_server import SWITCH_INTERVAL_S, ContextServer
    from daemon.ui.server import start_viewer

    sys.setswitchinterval(SWITCH_INTERVAL_S)  # as `memoryd run` sets it
    steal = Steal()
    home, _ = prepare(count)
    os.environ.update(env_for(home))
    config = Config(*load_settings())
    from daemon.state import StateDB

    StateDB(config.paths.state_db).close()  # the Overview reads the capture state (empty here)
    project = (home / "p" / "shop").resolve()
    started = time.perf_counter()
    notes = session_notes(home, count // 10)
    print(f"({count // 10:,} session notes written and indexed in {time.perf_counter() - started:.0f} s)")
    sock = home / "s" / "ui-bench.sock"
    server = ContextServer(lambda: config, lambda _sid: None)
    server.start(sock)
    viewer = start_viewer(lambda: config, daemon=True)
    try:
        base = f"http://127.0.0.1:{viewer.port}"
        from daemon.service.context_server import request

        for n in range(5):  # sessions whose blocks the daemon records, for the "given" pages
            prompt = urllib.parse.quote(Corpus(n).sentence())
            request(sock, "GET", f"/context?dir={urllib.parse.quote(str(project))}&prompt={prompt}&session=ses_{n}")
        time.sleep(0.5)  # the record is written off the socket's thread
        client = logged_in(base, viewer.viewer.secret)
        ids = remembered(config, project)
        bench_pages(client, count, project, requests, ids)
        bench_typing(client, project, max(20, requests // 5))
        bench_socket_beside(sock, project, base, viewer.viewer.secret, count, requests, ids)
    finally:
        viewer.close()
        server.close()
        from daemon.memory.index import open_index
        from daemon.memory.roots import MemoryRoot

        with open_index(config) as index:  # a cached home stays as generated
            index.forget_root(MemoryRoot(notes / ".memory", "project"))
        shutil.rmtree(notes, ignore_errors=True)
    print(f"(CPU steal during this size: {steal.share()})")


def main() -> None:
    if sys.argv[1:2] == ["--load"]:
        base, secret, project, count, ids, rate = sys.argv[2:8]
        browse(base, secret, project, int(count), ids.split(","), float(rate))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    print(machine_line())
    for count in (int(s) for s in args.sizes.split(",")):
        bench_size(count, args.requests)


if __name__ == "__main__":
    main()
