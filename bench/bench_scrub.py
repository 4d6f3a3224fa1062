"""Scrubber false positives and throughput, measured on real text that holds no secret.

    python bench/bench_scrub.py [--mb N] [--show K] [--top K] [--corpus NAME ...]
                                [--lockfile PATH ...] [--baseline REV_OR_PATH] [--chunk CHARS]

Corpora: the interpreter's standard library source (`stdlib`), the installed packages of
this interpreter (`packages`: sources, METADATA, RECORD files), a real lockfile (`lockfile`:
--lockfile, or a package-lock.json npm resolves for two dozen popular packages, built once
under bench/out/), and this repository's `git log -p` (`gitlog`: messages and the diffs of
everything but tests/ and the scrubber's own sources; `gitlog-tests`: those diffs, which
plant or quote fake credentials on purpose, so their redactions are expected). Each is cut
at --mb megabytes.
Every redaction is a false-positive candidate (these texts hold no live credential); the
figures are redactions per MB and MB per CPU second, and the most frequent redactions by
kind, the characters before them and the shape of the value (`[a-z0-9]{24}`), never the
value. `--show K` prints K of them with their file; `--baseline` measures an older scrubber
on the same text: a git revision of this repository (`--baseline main`, its `daemon/scrub/`
package or the older `daemon/scrub.py`) or a module file. `--chunk CHARS` hands the text to
the scrubber in pieces of about CHARS characters (cut at line ends), as capture hands it
transcript entries and tool outputs: the cost of a call then counts as much as that of a byte.
The speed is CPU time of this process, the fastest of `--repeat` runs (default 3).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import daemon.scrub  # noqa: E402
from scrub_heldout import runner_lines_redacted  # noqa: E402 (bench/scrub_heldout.py)

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


LOCK_PACKAGES = (
    "jest eslint webpack webpack-cli typescript @babel/core @babel/preset-env next react react-dom vite "
    "@angular/core aws-sdk firebase-tools gatsby @storybook/react @nestjs/core @nestjs/cli @aws-sdk/client-s3 "
    "@aws-sdk/client-dynamodb nuxt expo react-native mongoose sequelize prisma puppeteer"
).split()


def _npm_lockfile(folder: Path) -> None:
    """A real package-lock.json, resolved by npm from the registry (no package is installed)."""
    (folder / "package.json").write_text('{"name": "fp-corpus", "version": "1.0.0"}\n')
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--legacy-peer-deps", "--ignore-scripts", "--no-audit", "--no-fund", *LOCK_PACKAGES],
        cwd=folder, check=True, capture_output=True, timeout=900,
    )


def lockfile() -> Iterator[tuple[str, str]]:
    paths = list(LOCKFILES)
    if not paths:
        from datasets import cached  # bench/datasets.py: built once under bench/out/

        try:
            paths = [cached("npm-lockfile", _npm_lockfile) / "package-lock.json"]
        except (OSError, subprocess.SubprocessError) as exc:
            sys.exit(f"bench_scrub: cannot build a real lockfile with npm ({exc}); pass --lockfile PATH")
    for path in paths:
        yield path.name, path.read_text(encoding="utf-8")


# Tests plant fake credentials on purpose (the scrubber's catalogue, the leak tests of every
# part), the scrubber's own sources quote them in comments ("the password is hunter2xyz"),
# as did this benchmark's warm-up line once: their diffs are a corpus of their own
# (`gitlog-tests`), whose redactions are expected; `gitlog` is the rest of the history.
PLANTED = re.compile(r"^(?:tests/|daemon/scrub(?:/|\.py$)|bench/bench_scrub\.py$)")


def _log_chunks() -> Iterator[tuple[str, str]]:
    """`git log -p` of this repository, one text per commit message and per file diff."""
    text = subprocess.run(["git", "-C", str(ROOT), "log", "-p", "--no-color"], capture_output=True, text=True, check=True).stdout
    for chunk in re.split(r"(?m)^(?=commit [0-9a-f]{40}$|diff --git )", text):
        path = re.match(r"diff --git a/(\S+)", chunk)
        yield (path.group(1) if path else "commit message"), chunk


def gitlog() -> Iterator[tuple[str, str]]:
    return ((label, chunk) for label, chunk in _log_chunks() if not PLANTED.match(label))


def gitlog_tests() -> Iterator[tuple[str, str]]:
    return ((label, chunk) for label, chunk in _log_chunks() if PLANTED.match(label))


def testlogs() -> Iterator[tuple[str, str]]:
    from scrub_corpora import testlogs as build  # bench/scrub_corpora.py

    return iter(build())


def minified() -> Iterator[tuple[str, str]]:
    from scrub_corpora import minified as build

    return iter(build())


def i18n() -> Iterator[tuple[str, str]]:
    from scrub_corpora import i18n as build

    return iter(build())


CORPORA = {"stdlib": stdlib, "packages": packages, "lockfile": lockfile, "gitlog": gitlog, "gitlog-tests": gitlog_tests,
           "testlogs": testlogs, "minified": minified, "i18n": i18n}
LOCKFILES: list[Path] = []


def shape(value: str) -> str:
    """What a redacted value looked like, without the value: its character classes and
    length (`[a-z0-9]{24}`, `[A-Za-z0-9+/]{44}`)."""
    classes = "".join(c for c, test in (("A-Z", str.isupper), ("a-z", str.islower), ("0-9", str.isdigit)) if any(test(ch) for ch in value if ch.isascii()))
    others = "".join(sorted({ch for ch in value if not (ch.isascii() and ch.isalnum())}))
    return f"[{classes}{re.escape(others) if others else ''}]{{{len(value)}}}"


def _context(text: str, start: int) -> str:
    """The few characters before a redaction (`password = '`, `sha256=`), letters kept."""
    line_start = text.rfind("\n", 0, start) + 1
    return text[max(line_start, start - 16) : start].lstrip()


def redactions(scrubber, text: str) -> list[tuple[str, str, str]]:
    """(kind, shape of the value, context before it) of each redaction `scrubber` makes."""
    if scrubber is daemon.scrub.redact:
        return [(kind, shape(text[s:e]), _context(text, s)) for s, e, kind in daemon.scrub.find_spans(text)]
    # Another scrubber (an older module): align its output with the input between markers.
    out = scrubber(text)
    found, pos = [], 0
    pieces = MARKER.split(out)  # literal, kind, literal, kind, …
    for i in range(1, len(pieces), 2):
        pos += len(pieces[i - 1])
        nxt = pieces[i + 1]
        end = text.find(nxt[:40], pos + 1) if nxt else len(text)
        found.append((pieces[i], shape(text[pos:end]), _context(text, pos)))
        pos = max(end, pos)
    return found


def _read(name: str, limit_mb: float) -> tuple[list[tuple[str, str]], int]:
    texts, size = [], 0
    for label, text in CORPORA[name]():
        texts.append((label, text))
        size += len(text.encode("utf-8"))
        if size >= limit_mb * 1e6:
            break
    return texts, size


def _pieces(text: str, chars: int) -> list[str]:
    """`text` cut at the first line end after every `chars` characters."""
    out, pos = [], 0
    while pos < len(text):
        cut = text.find("\n", pos + chars)
        cut = len(text) if cut < 0 else cut + 1
        out.append(text[pos:cut])
        pos = cut
    return out


def _cpu_seconds(scrubber, calls: list[str], repeat: int) -> float:
    """CPU time of this process for one call per piece, the fastest of `repeat` runs (the
    machine may be busy with other work); a scrubber's cache of answers is emptied first."""
    best = float("inf")
    for _ in range(repeat):
        for cached in (getattr(sys.modules.get(scrubber.__module__), "_redact_short", None),):
            if cached is not None:
                cached.cache_clear()
        start = time.process_time()
        for text in calls:
            scrubber(text)
        best = min(best, time.process_time() - start)
    return best


def measure(name: str, scrubber, options: argparse.Namespace) -> dict:
    scrubber("warm up: the first call compiles the patterns\n" * 3)
    texts, size = _read(name, options.mb)
    calls = [piece for _, text in texts for piece in _pieces(text, options.chunk)] if options.chunk else [text for _, text in texts]
    seconds = _cpu_seconds(scrubber, calls, options.repeat)
    kinds: Counter[str] = Counter()
    shapes: Counter[str] = Counter()
    shown = runner_hit = 0
    for label, text in texts:
        if scrubber is not daemon.scrub.redact and MARKER.search(text):
            continue  # (markers already there would misalign an older scrubber's output)
        for kind, form, before in redactions(scrubber, text):
            kinds[kind] += 1
            shapes[f"{kind} {before!r} {form}"] += 1
            if shown < options.show:
                print(f"  {label}: {kind} after {before!r}: {form}")
                shown += 1
        if scrubber is daemon.scrub.redact:
            runner_hit += runner_lines_redacted(text, daemon.scrub.find_spans(text))
    mb = size / 1e6
    total = sum(kinds.values())
    return {"corpus": name, "mb": round(mb, 2), "calls": len(calls), "redactions": total, "per_mb": round(total / mb, 2) if mb else 0,
            "mb_per_s": round(mb / seconds, 2), "us_per_call": round(1e6 * seconds / len(calls), 1),
            "runner_lines_redacted": runner_hit if scrubber is daemon.scrub.redact else None, "kinds": dict(kinds.most_common(8)), "top": shapes.most_common(options.top)}


def _load(path: Path):
    """The redact() of a scrubber module file, or of a package folder whose modules import
    each other as `baseline_scrub.<name>`."""
    import importlib.util

    init = path / "__init__.py" if path.is_dir() else path
    spec = importlib.util.spec_from_file_location("baseline_scrub", init, submodule_search_locations=[str(path)] if path.is_dir() else None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _load_revision(rev: str, folder: Path):
    """The redact() of the scrubber at git revision `rev`: its `daemon/scrub/` package (its
    imports of `daemon.scrub` renamed) or, before that was one, `daemon/scrub.py`."""
    git = ["git", "-C", str(ROOT)]
    names = subprocess.run([*git, "ls-tree", "--name-only", f"{rev}:daemon/scrub"], capture_output=True, text=True, check=False)
    if names.returncode != 0:
        source = subprocess.run([*git, "show", f"{rev}:daemon/scrub.py"], capture_output=True, text=True, check=True).stdout
        (folder / "scrub.py").write_text(source, encoding="utf-8")
        return _load(folder / "scrub.py")
    package = folder / "baseline_scrub"
    package.mkdir()
    for name in names.stdout.split():
        if name.endswith((".py", ".tsv")):
            source = subprocess.run([*git, "show", f"{rev}:daemon/scrub/{name}"], capture_output=True, text=True, check=True).stdout
            (package / name).write_text(source.replace("daemon.scrub", "baseline_scrub") if name.endswith(".py") else source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    import baseline_scrub  # noqa: PLC0415 (written just now)

    return baseline_scrub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="megabytes read per corpus (default 20)")
    parser.add_argument("--show", type=int, default=0, help="print this many redactions per corpus (kind, context, shape)")
    parser.add_argument("--top", type=int, default=10, help="how many of the most frequent redaction shapes to list (default 10)")
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="only these corpora")
    parser.add_argument("--lockfile", action="append", type=Path, default=[], help="a lockfile to read (default: one npm resolves, kept in bench/out/)")
    parser.add_argument("--baseline", help="also measure an older scrubber: a git revision (e.g. main) or a module file or package folder")
    parser.add_argument("--chunk", type=int, default=0, help="hand the text over in pieces of about this many characters (default: whole files)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per corpus, the fastest counts (default 3)")
    parser.add_argument("--data", type=Path, help="a held-out folder (planted.json, fp.json): print its aggregate figures only (scrub_heldout.py)")
    parser.add_argument("--batch", help="with --data: read NAME.json and NAME-fp.json (a fresh batch) instead")
    parser.add_argument("--anchors", action="store_true", help="with --data: also run detect-secrets and trufflehog3 on the same texts (scrub_anchors.py)")
    args = parser.parse_args()
    LOCKFILES.extend(args.lockfile)
    modules = {"current": daemon.scrub}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            path = Path(args.baseline)
            modules["baseline"] = _load(path) if path.exists() else _load_revision(args.baseline, Path(tmp))
        if args.data:
            from scrub_heldout import measure as measure_data  # bench/scrub_heldout.py

            scrubbers = {label: (module.find_spans, module.redact) for label, module in modules.items()}
            if args.anchors:
                from scrub_anchors import anchors  # bench/scrub_anchors.py

                scrubbers.update(anchors())
            for row in measure_data(args.data, args.batch, scrubbers):
                print(json.dumps(row, ensure_ascii=False), flush=True)
            return
        scrubbers = {label: module.redact for label, module in modules.items()}
        for name in args.corpus or list(CORPORA):
            for label, scrubber in scrubbers.items():
                print(json.dumps({"scrubber": label, **measure(name, scrubber, args)}), flush=True)

if __name__ == "__main__":
    main()
