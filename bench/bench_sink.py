"""Sink benchmark: delivery throughput of a 1,000-note backfill to a local Cognee server.

    python bench/bench_sink.py [--notes 1000] [--batch-sizes 50,100]

Starts a real Cognee 1.6 server (the venv .ci/install-cognee makes, offline as in the
tests), writes that many session notes (about 1.5 KB each, like extractive notes) into a
temporary global tree, then for each batch size, into a fresh dataset:

1. fill: reading the tree into the outbox (state database);
2. delivery: draining the outbox into Cognee (`memoryd sink push` without the CLI),
   reported as notes/s;
3. a second round with nothing changed (what the daemon pays per wake-up).

No cognify is requested (it needs a model). Figures depend on the machine: this one
has 2 cores, shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BODY = (
    "## What Was Worked On\n\nDeploy script for {project}: switched the install step to "
    "`pnpm install --frozen-lockfile` and pinned the runner image.\n\n## Outcome / Current State\n\n"
    "Builds pass on the staging runner; item {n} is closed.\n\n## Decisions & Rationale\n\n"
    "- Keep the lockfile in git: reproducible installs on every machine.\n- Retry the upload "
    "three times with backoff: the artifact store drops connections under load.\n\n"
    "## Findings & Learnings\n\n- `ERR_PNPM_NO_LOCKFILE` means the lockfile was not copied into "
    "the image.\n- The cache key must include the Node version.\n\n## Files\n\n- scripts/deploy.sh\n"
    "- .github/workflows/deploy.yml\n- Dockerfile\n\n## Systems & Commands\n\n- `pnpm install "
    "--frozen-lockfile`\n- `docker build -t app:{n} .`\n"
)


def write_notes(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        sid = f"ses_bench{n:05d}"
        folder.joinpath(f"2026-01-01-bench-{n:05d}.md").write_text(
            f'---\ntitle: "Bench session {n}"\ndescription: "Deploy fixes, item {n}"\nkind: "session"\n'
            f'id: "{sid}"\nsession_id: "{sid}"\nproject: "/src/project-{n % 20}"\n'
            f'started: "2026-01-01T00:00:00Z"\nupdated: "2026-01-01T01:00:00Z"\ntags: ["session"]\n---\n\n'
            + BODY.format(project=f"project-{n % 20}", n=n)
        )


def bench_batch(home: Path, url: str, batch_size: int, notes: int) -> dict[str, float]:
    from daemon.config import Config, load_settings
    from daemon.sinks.run import Sink
    from daemon.state import StateDB

    state_home = home / f"state-{batch_size}"
    os.environ.update(
        XDG_STATE_HOME=str(state_home),
        MEMORYD_SINKS__COGNEE__URL=url,
        MEMORYD_SINKS__COGNEE__DATASET=f"bench_{batch_size}",
        MEMORYD_SINKS__COGNEE__BATCH_SIZE=str(batch_size),
        MEMORYD_SINKS__COGNEE__COGNIFY="never",
        MEMORYD_SINKS__COGNEE__TIMEOUT_S="300",
    )
    settings, paths = load_settings()
    state = StateDB(paths.state_db)
    sink = Sink(Config(settings, paths), state)
    try:
        started = time.perf_counter()
        filled = sink.fill()
        fill_s = time.perf_counter() - started
        assert filled.queued_puts == notes, filled
        started = time.perf_counter()
        result = sink.round(now=True)
        deliver_s = time.perf_counter() - started
        assert result.added == notes and not result.error, result
        dataset_id = sink.client.dataset_id()
        assert sink.client.count(dataset_id) == notes
        started = time.perf_counter()
        idle = sink.round()
        idle_s = time.perf_counter() - started
        assert idle.added == idle.queued_puts == 0
    finally:
        sink.close()
        state.close()
    return {"fill_s": fill_s, "deliver_s": deliver_s, "notes_per_s": notes / deliver_s, "idle_round_s": idle_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--batch-sizes", default="50,100")
    args = parser.parse_args()

    from tests.sinks.cognee_server import CogneeServer, missing_reason

    reason = missing_reason()
    if reason:
        print(f"bench_sink: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-sink-") as tmp:
        home = Path(tmp)
        os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
        for key in [k for k in os.environ if k.startswith("MEMORYD_")]:
            del os.environ[key]
        write_notes(home / "config" / "opencode" / "memory" / "sessions", args.notes)
        server = CogneeServer(home / "cognee")
        started = time.perf_counter()
        server.start()
        print(f"Cognee {server.url} ready in {time.perf_counter() - started:.1f} s; {args.notes} notes")
        try:
            for size in (int(s) for s in args.batch_sizes.split(",")):
                r = bench_batch(home, server.url, size, args.notes)
                print(
                    f"batch {size:>4}: fill {r['fill_s']:.2f} s, delivery {r['deliver_s']:.1f} s = "
                    f"{r['notes_per_s']:.0f} notes/s; a round with nothing changed {r['idle_round_s'] * 1000:.0f} ms"
                )
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
