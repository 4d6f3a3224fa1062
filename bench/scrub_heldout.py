"""A planted catalogue and a false-positive set, as the held-out sets are written, measured.

    python bench/bench_scrub.py --data DIR [--batch NAME] [--anchors]

DIR holds `planted.json` and `fp.json` (a validation folder), or `NAME.json` and
`NAME-fp.json` (a fresh batch: `--batch batch-1`). Planted: `{"cases": [{"family", "place",
"lang", "text", "secret"}]}`, a case leaks when its secret survives redaction verbatim;
false positives: `{"texts": [{"kind", "text"}]}`, where every redaction is one. Only
aggregates are printed (shares by family, place and language, redactions per MB by kind,
test-runner lines redacted, MB per CPU second), never a text or a value: a validation
folder's contents must stay unread.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

# A line a test runner prints about a test: DejaGnu's `PASS: name`, go test's `--- PASS:` and
# `=== RUN`, its package summary `ok  pkg 0.01s`, cargo's `test x ... ok`, pytest's node ids,
# jest's `✓ name` and `PASS src/x.test.js`. None of them holds a secret.
RUNNER_LINE = re.compile(
    r"^[ \t]*(?:(?:PASS|FAIL|XFAIL|XPASS|KFAIL|KPASS|UNSUPPORTED|UNRESOLVED|UNTESTED|ERROR|SKIP|SKIPPED|WARNING):[ \t]"
    r"|---[ \t](?:PASS|FAIL|SKIP):|===[ \t](?:RUN|PAUSE|CONT|NAME)[ \t]|(?:ok|FAIL|\?)[ \t]+\S+[ \t]+(?:[0-9.]+s|\[no test files\]|\(cached\))"
    r"|test[ \t]\S+[ \t]\.\.\.[ \t](?:ok|FAILED|ignored)|\S+\.py::\S+|[✓✔✕✗×√○][ \t]|(?:PASS|FAIL)[ \t]+\S+\.(?:js|ts|jsx|tsx|mjs|cjs)\b)"
)

Scrubber = Callable[[str], list[tuple[int, int, str]]]


def _read(path: Path) -> dict:
    """A set as JSON, or gzipped beside it (`planted.json.gz`): the repository keeps its
    validation sets gzipped, so that neither a search of the tree nor a secret scanner
    reads their planted values; {} when neither exists."""
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    packed = path.with_name(path.name + ".gz")
    return json.loads(gzip.decompress(packed.read_bytes()).decode("utf-8")) if packed.exists() else {}


def load(folder: Path, batch: str | None) -> tuple[list[dict], list[dict]]:
    planted_path, fp_path = (folder / f"{batch}.json", folder / f"{batch}-fp.json") if batch else (folder / "planted.json", folder / "fp.json")
    planted = _read(planted_path).get("cases", [])
    fp = _read(fp_path).get("texts", [])
    if not planted and not fp:
        sys.exit(f"bench_scrub: neither {planted_path} nor {fp_path} holds anything")
    return planted, fp


def _share(leaked: Counter, total: Counter) -> dict[str, str]:
    return {key: f"{leaked[key]}/{total[key]} ({100 * leaked[key] / total[key]:.0f} %)" for key in sorted(total)}


def leaks(cases: list[dict], spans_of: Scrubber) -> dict:
    """The share of planted secrets that survive, overall and by family, place and language."""
    leaked: dict[str, Counter] = {"family": Counter(), "place": Counter(), "lang": Counter()}
    total: dict[str, Counter] = {"family": Counter(), "place": Counter(), "lang": Counter()}
    count = 0
    for case in cases:
        text, secret = case["text"], case["secret"]
        spans = spans_of(text)
        # The secret survives when some occurrence of it is not wholly covered by spans.
        survived, at = False, text.find(secret)
        while at >= 0 and not survived:
            covered = [(max(s, at), min(e, at + len(secret))) for s, e, _ in spans if s < at + len(secret) and e > at]
            survived = not _covers(covered, at, at + len(secret))
            at = text.find(secret, at + 1)
        count += survived
        for axis in leaked:
            key = str(case.get(axis, "?"))
            total[axis][key] += 1
            leaked[axis][key] += survived
    n = len(cases)
    return {"planted": n, "leaked": count, "leaked_share": round(count / n, 3) if n else 0.0,
            **{f"by_{axis}": _share(leaked[axis], total[axis]) for axis in leaked}}


def _covers(pieces: list[tuple[int, int]], start: int, end: int) -> bool:
    """True when `pieces` cover every character of start..end (a partial redaction still leaks)."""
    pos = start
    for s, e in sorted(pieces):
        if s > pos:
            return False
        pos = max(pos, e)
    return pos >= end


def runner_lines_redacted(text: str, spans: list[tuple[int, int, str]]) -> int:
    """How many test-runner lines of `text` lose something to `spans`."""
    if not spans:
        return 0
    lines = [m.span() for m in re.finditer(r"[^\n]+", text) if RUNNER_LINE.match(m.group())]
    return sum(1 for lo, hi in lines if any(s < hi and e > lo for s, e, _ in spans))


def false_positives(texts: list[dict], spans_of: Scrubber) -> dict:
    """Redactions per MB by kind of text, and how many test-runner lines lost something."""
    size: Counter = Counter()
    found: Counter = Counter()
    runner_lines = runner_hit = 0
    for item in texts:
        text = item["text"]
        kind = item.get("kind", "?")
        size[kind] += len(text.encode("utf-8"))
        spans = spans_of(text)
        found[kind] += len(spans)
        runner_lines += sum(1 for line in text.splitlines() if RUNNER_LINE.match(line))
        runner_hit += runner_lines_redacted(text, spans)
    code_docs = [k for k in size if re.search(r"code|doc|js|minified|lock|i18n|config|source|readme|markdown", k)]
    mb = sum(size[k] for k in code_docs) / 1e6
    total = sum(size.values()) / 1e6
    return {"fp_mb": round(total, 3), "fp_per_mb_all": round(sum(found.values()) / total, 2) if total else None,
            "fp_per_mb": {k: round(found[k] / (size[k] / 1e6), 2) for k in sorted(size)},
            "fp_per_mb_code_docs": round(sum(found[k] for k in code_docs) / mb, 2) if mb else None,
            "runner_lines": runner_lines, "runner_lines_redacted": runner_hit}


def throughput(texts: list[str], redact: Callable[[str], str], repeat: int = 5) -> float:
    """MB per CPU second of `redact` over `texts`, the fastest of `repeat` passes; a pass
    goes over the texts as many times as it takes a tenth of a second (a few KB of code
    would be timed in noise), a scrubber's cache of answers emptied before each."""
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    cache = getattr(sys.modules.get(redact.__module__), "_redact_short", None)
    rounds, best = 1, float("inf")
    for _ in range(repeat):
        while True:
            if cache is not None:
                cache.cache_clear()
            start = time.process_time()
            for _ in range(rounds):
                for text in texts:
                    redact(text)
                if cache is not None:
                    cache.cache_clear()
            took = time.process_time() - start
            if took >= 0.1:
                break
            rounds *= 2
        best = min(best, took / rounds)
    return round(size / best, 2) if best > 0 else 0.0


def measure(folder: Path, batch: str | None, scrubbers: dict[str, tuple[Scrubber, Callable[[str], str] | None]]) -> list[dict]:
    """One line of figures per scrubber: leaks, false positives, runner lines, MB/s."""
    planted, fp = load(folder, batch)
    code = [t["text"] for t in fp if "code" in t.get("kind", "")] or [t["text"] for t in fp]
    rows = []
    for label, (spans_of, redact) in scrubbers.items():
        row = {"scrubber": label, "data": folder.name + (f"/{batch}" if batch else "")}
        if hasattr(spans_of, "prepare"):  # another tool (scrub_anchors.py): it scans all texts at once
            spans_of.prepare([c["text"] for c in planted] + [t["text"] for t in fp])
            if code:
                row["mb_per_s_code"] = round(sum(len(t.encode("utf-8")) for t in code) / 1e6 / max(spans_of.prepare(code), 1e-9), 2)
        if planted:
            row.update(leaks(planted, spans_of))
        if fp:
            row.update(false_positives(fp, spans_of))
            if redact is not None and code:
                row["mb_per_s_code"] = throughput(code, redact)
        rows.append(row)
    return rows
