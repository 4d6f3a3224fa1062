"""Scrubber false positives and throughput, measured on real text that holds no secret.

    python bench/bench_scrub.py [--mb N] [--show K] [--corpus NAME ...]

Corpora: the interpreter's standard library source (`stdlib`), the installed packages of
this interpreter (`packages`: sources, METADATA, RECORD files), a real lockfile (`lockfile`:
the npm package-lock.json of the OpenCode install under .cache/, or a generated one), and
this repository's `git log` (`gitlog`). Each is cut at --mb megabytes. Every `[REDACTED:`
marker `redact()` adds is a false positive (these texts hold no credential); the figures
are markers per MB and MB per CPU second. `--show K` prints K redactions with their context.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import daemon.scrub  # noqa: E402

redact = daemon.scrub.redact

MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


def _files(root: Path, patterns: tuple[str, ...], skip: tuple[str, ...] = ()) -> Iterator[Path]:
    for pattern in patterns:
        for path in sorted(root.rglob(pattern)):
            if path.is_file() and not any(part in skip for part in path.parts):
                yield path


def stdlib() -> Iterator[tuple[str, str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in _files(root, ("*.py",), skip=("site-packages", "dist-packages")):
        yield str(path.relative_to(root)), path.read_text(encoding="utf-8", errors="replace")


def packages() -> Iterator[tuple[str, str]]:
    root = Path(sysconfig.get_paths()["purelib"])
    for path in _files(root, ("*.py", "METADATA", "RECORD", "*.txt", "*.json", "*.toml")):
        yield str(path.relative_to(root)), path.read_text(encoding="utf-8", errors="replace")


def lockfile() -> Iterator[tuple[str, str]]:
    found = sorted((ROOT / ".cache").glob("*/package-lock.json")) if (ROOT / ".cache").exists() else []
    size = 0
    for path in found[:3]:
        text = path.read_text(encoding="utf-8")
        size += len(text)
        yield path.name, text
    if size < 2_000_000:  # too small to measure: add one of the shape npm writes (sha512 integrity)
        import base64
        import hashlib

        packages = {}
        for i in range(20000):
            digest = base64.b64encode(hashlib.sha512(str(i).encode()).digest()).decode()
            packages[f"node_modules/pkg-{i}"] = {
                "version": f"1.{i % 30}.{i % 7}",
                "resolved": f"https://registry.npmjs.org/pkg-{i}/-/pkg-{i}-1.0.0.tgz",
                "integrity": f"sha512-{digest}",
            }
        yield "package-lock.json (generated)", json.dumps({"lockfileVersion": 3, "packages": packages}, indent=2)


def gitlog() -> Iterator[tuple[str, str]]:
    text = subprocess.run(["git", "-C", str(ROOT), "log", "--stat"], capture_output=True, text=True, check=True).stdout
    yield "git log --stat", text


CORPORA = {"stdlib": stdlib, "packages": packages, "lockfile": lockfile, "gitlog": gitlog}


def measure(name: str, limit_mb: float, show: int) -> dict:
    redact("warm up: token=abc123XYZ https://u:p4ss@h sk-" + "a" * 30)  # first-use regex compiles
    texts, size = [], 0
    for label, text in CORPORA[name]():
        texts.append((label, text))
        size += len(text.encode("utf-8"))
        if size >= limit_mb * 1e6:
            break
    # CPU time of this process: the machine may be busy with other work.
    start = time.process_time()
    outputs = [redact(text) for _, text in texts]
    seconds = time.process_time() - start
    kinds: Counter[str] = Counter()
    shown = 0
    for (label, text), out in zip(texts, outputs):
        added = Counter(MARKER.findall(out)) - Counter(MARKER.findall(text))
        kinds.update(added)
        if added and shown < show:
            for m in MARKER.finditer(out):
                if shown >= show:
                    break
                line_start = out.rfind("\n", 0, m.start()) + 1
                line_end = out.find("\n", m.end())
                print(f"  {label}: {out[line_start:line_end if line_end >= 0 else None][:160]}")
                shown += 1
    mb = size / 1e6
    total = sum(kinds.values())
    return {"corpus": name, "mb": round(mb, 2), "redactions": total, "per_mb": round(total / mb, 2) if mb else 0,
            "mb_per_s": round(mb / seconds, 2), "kinds": dict(kinds.most_common(8))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="megabytes read per corpus (default 20)")
    parser.add_argument("--show", type=int, default=0, help="print this many redactions per corpus")
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="only these corpora")
    parser.add_argument("--baseline", type=Path, help="also measure the redact() of this scrubber module file (e.g. an older scrub.py)")
    args = parser.parse_args()
    global redact
    scrubbers = {"current": daemon.scrub.redact}
    if args.baseline:
        import importlib.util

        spec = importlib.util.spec_from_file_location("baseline_scrub", args.baseline)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
        scrubbers["baseline"] = module.redact
    for name in args.corpus or list(CORPORA):
        for label, scrubber in scrubbers.items():
            redact = scrubber
            print(json.dumps({"scrubber": label, **measure(name, args.mb, args.show)}))


if __name__ == "__main__":
    main()
