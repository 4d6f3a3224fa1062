"""Other secret scanners run on the same texts as memoryd's scrubber, as anchors for its
figures: detect-secrets 1.5 and trufflehog3 3.0, each pip-installed into a venv of its own
under bench/out/anchors/ (benchmarks only: neither is a dependency of memoryd). gitleaks has
no Debian package for this release (`apt-cache policy gitleaks` finds none) and no build
that can be trusted without downloading a binary, so it is left out.

Each tool scans a folder holding one file per text and reports (file, line) findings; a
finding's whole line counts as redacted, so a planted secret is caught when the lines
holding it were all reported. Their speed is the CPU time of their processes.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "anchors"
TOOLS = {"detect-secrets": "detect-secrets==1.5.0", "trufflehog3": "trufflehog3==3.0.10"}


def _venv(name: str) -> Path:
    """The tool's console script, installed into bench/out/anchors/<name> on first use."""
    folder = OUT / name
    script = folder / "bin" / name
    if not script.exists():
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(folder / "bin" / "pip"), "install", "-q", TOOLS[name]], check=True, timeout=900)
    return script


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Anchor:
    """One tool: `prepare(texts)` scans them all at once; calling it with a text gives the
    spans (whole lines) of its findings there."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.script = _venv(name)
        self.found: dict[str, list[tuple[int, int, str]]] = {}

    def _scan(self, folder: Path) -> list[tuple[str, int]]:
        if self.name == "detect-secrets":
            out = subprocess.run([str(self.script), "scan", "--all-files", "."], cwd=folder, capture_output=True, text=True, check=True).stdout
            return [(Path(f).name, int(item["line_number"])) for f, items in json.loads(out)["results"].items() for item in items]
        report = folder.parent / "report.json"
        subprocess.run([str(self.script), "-z", "--no-history", "-f", "JSON", "-o", str(report), "."], cwd=folder, capture_output=True, check=True)
        return [(Path(item["path"]).name, int(item["line"])) for item in json.loads(report.read_text() or "[]")]

    def prepare(self, texts: list[str]) -> float:
        """Scan `texts`; return the CPU seconds the tool took."""
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "texts"
            folder.mkdir()
            for i, text in enumerate(texts):
                (folder / f"{i:06d}.txt").write_text(text, encoding="utf-8")
            started = _child_cpu()
            findings = self._scan(folder)
            took = _child_cpu() - started
        for i, text in enumerate(texts):
            self.found.setdefault(text, [])
        lines = {i: text.split("\n") for i, text in enumerate(texts)}
        for name, line in findings:
            i = int(Path(name).stem)
            text_lines = lines[i]
            start = sum(len(x) + 1 for x in text_lines[: line - 1])
            self.found[texts[i]].append((start, start + len(text_lines[line - 1]), self.name))
        return took

    def __call__(self, text: str) -> list[tuple[int, int, str]]:
        return sorted(set(self.found.get(text, [])))


def anchors() -> dict[str, tuple[Anchor, None]]:
    return {name: (Anchor(name), None) for name in TOOLS}
