"""A backfill's worker side, stage by stage: CPU per session of reading rows, building the
transcript, the extractive distiller and rendering the note (what `capture.workers._build`
runs for each session), all in this process.

    python bench/bench_distill_stages.py [--db PATH ...] [--sessions N] [--repeat R] [--digest]

Without `--db`, grows a 1.x database of N sessions (default 10000) from the 1.18.33 fixture
(bench/grow_db.py) in a temporary folder. Each stage is timed with `time.process_time()`
around its own calls, over every root and subagent session of the database; the figure is
the fastest of `--repeat` runs (default 1), in ms of CPU per session. `--digest` prints a
SHA-256 over everything the stages made (transcript texts and hashes, the notes' text,
statements and index rows): two versions of the code whose digests agree made the same
output byte for byte on that database.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from daemon.capture.distill.extractive import ExtractiveDistiller  # noqa: E402
from daemon.capture.notes import render  # noqa: E402
from daemon.capture.transcript import Limits, build_transcript  # noqa: E402
from daemon.opencode.reader import OpenCodeReader  # noqa: E402

STAGES = ("rows", "transcript", "distill", "render")


def run(db: Path, digest: hashlib._Hash | None) -> tuple[int, dict[str, float]]:
    """Sessions built, and the CPU seconds each stage took over all of them."""
    spent = dict.fromkeys(STAGES, 0.0)
    clock = time.process_time
    distiller, limits = ExtractiveDistiller(), Limits()
    with OpenCodeReader(db) as reader:
        sessions = reader.sessions()
        for info in sessions:
            t0 = clock()
            rows = reader.session_rows(info)
            t1 = clock()
            transcript = build_transcript(rows, limits)
            t2 = clock()
            distilled = distiller.distill(transcript)
            t3 = clock()
            rendered = None if distilled.junk else render(transcript.session, distilled, True)
            t4 = clock()
            spent["rows"] += t1 - t0
            spent["transcript"] += t2 - t1
            spent["distill"] += t3 - t2
            spent["render"] += t4 - t3
            if digest is not None:
                digest.update(repr((transcript.hash, transcript.text, transcript.warnings, distilled)).encode())
                if rendered is not None:
                    digest.update(repr((rendered.text, rendered.filename, rendered.stated, rendered.index_text)).encode())
    return len(sessions), spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, action="append", help="an OpenCode database (1.x or 2.0); repeatable")
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions to grow when no --db is given")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--digest", action="store_true", help="print a digest of everything made")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dbs = args.db
        if not dbs:
            from grow_db import grow

            dbs = [Path(tmp) / "opencode.db"]
            grow(dbs[0], args.sessions)
        for db in dbs:
            best: dict[str, float] | None = None
            for _ in range(args.repeat):
                digest = hashlib.sha256() if args.digest else None
                count, spent = run(db, digest)
                if best is None or sum(spent.values()) < sum(best.values()):
                    best = spent
            assert best is not None
            cells = "  ".join(f"{stage} {1000 * best[stage] / count:.3f}" for stage in STAGES)
            print(f"{db.name}: {count} sessions, ms CPU/session: {cells}  total {1000 * sum(best.values()) / count:.3f}")
            if digest is not None:
                print(f"{db.name}: digest {digest.hexdigest()}")


if __name__ == "__main__":
    main()
