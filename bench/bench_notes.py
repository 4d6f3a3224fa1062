"""Note quality: distil a corpus with the extractive distiller and score what a reader gets.

    python bench/bench_notes.py [--corpus DIR ...] [--synthetic] [--show]

A corpus is a folder holding `opencode.db` and `sessions.json` (scenario → session id,
facts a note must keep, junk or not), like tests/fixtures/opencode-1.18.33. With no
`--corpus` the repository's fixture is scored; `--synthetic` adds the test corpora
(Chinese, Japanese, Korean, a continued session, a 150-part session, subagents).

Figures: facts kept; lines repeated across sections; descriptions equal to the first
user prompt; memory-tree paths and project roots listed under "Files"; note size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "opencode-1.18.33"
FILES_SECTION = "Files, Systems & Commands"


@dataclass
class Score:
    notes: int = 0
    facts: int = 0
    facts_kept: int = 0
    missing: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    prompt_descriptions: list[str] = field(default_factory=list)
    tree_paths: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)  # strings a good note leaves out, found
    sizes: list[int] = field(default_factory=list)


def sections_of(body: str) -> dict[str, list[str]]:
    """`## Section` → its non-empty lines, bullets stripped."""
    out: dict[str, list[str]] = {}
    current = None
    for line in body.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current and line.strip():
            out[current].append(line.strip().removeprefix("- ").strip())
    return out


def _norm(text: str) -> str:
    return " ".join(text.split()).strip(" \"'…").lower()


def equals_prompt(description: str, prompt: str) -> bool:
    """The description is the first prompt, whole or clipped."""
    d, p = _norm(description), _norm(prompt)
    return bool(d) and (d == p or (len(d) >= 30 and p.startswith(d)))


def score_note(text: str, first_prompt: str, spec: dict, score: Score, label: str) -> None:
    import frontmatter

    facts, project = spec["facts"], spec["project"]
    score.present += [f"{label}: {s}" for s in spec.get("absent", []) if s in text]

    post = frontmatter.loads(text)
    score.notes += 1
    score.sizes.append(len(text))
    for fact in facts:
        score.facts += 1
        if fact in text:
            score.facts_kept += 1
        else:
            score.missing.append(f"{label}: {fact}")
    seen: dict[str, str] = {}
    for name, lines in sections_of(post.content).items():
        for line in lines:
            key = _norm(line)
            if key in seen and seen[key] != name:
                score.repeated.append(f"{label}: {line[:80]}")
            seen.setdefault(key, name)
    if equals_prompt(str(post.get("description", "")), first_prompt):
        score.prompt_descriptions.append(f"{label}: {str(post.get('description'))[:80]}")
    for line in sections_of(post.content).get(FILES_SECTION, []):
        paths = re.findall(r"`([^`]+)`", line)[:1]
        for path in paths:
            if ".memory/" in path or "/opencode/memory" in path or path.startswith(".memory"):
                score.tree_paths.append(f"{label}: {path}")
            if path.rstrip("/") in (project.rstrip("/"), ".", "") or path.rstrip("/") == os.path.basename(project):
                score.roots.append(f"{label}: {path}")


def first_prompt(db: Path, session_id: str) -> str:
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT m.data, p.data FROM part p JOIN message m ON m.id = p.message_id"
            " WHERE p.session_id = ? ORDER BY m.time_created, m.id, p.id",
            (session_id,),
        ).fetchall()
    finally:
        conn.close()
    for mdata, pdata in rows:
        message, part = json.loads(mdata), json.loads(pdata)
        if message.get("role") == "user" and part.get("type") == "text" and part.get("text", "").strip():
            return part["text"].strip()
    return ""


def score_corpus(corpus: Path, score: Score, show: bool) -> None:
    """Distil a copy of the corpus in a throwaway home and score every note."""
    sessions = json.loads((corpus / "sessions.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        db = home / "opencode.db"
        shutil.copy(corpus / "opencode.db", db)
        os.environ.update(
            HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"),
            XDG_DATA_HOME=str(home / "data"), OPENCODE_DB=str(db),
        )
        from tests.capture.helpers import distill_once

        report = distill_once()
        for name, spec in sessions.items():
            note = report.notes.get(spec["session"])
            if spec.get("junk"):
                continue
            label = f"{corpus.name}/{name}"
            if note is None:
                score.missing += [f"{label}: (no note) {f}" for f in spec["facts"]]
                score.facts += len(spec["facts"])
                continue
            text = Path(note).read_text()
            if show:
                print(f"\n===== {label} =====\n{text}")
            score_note(text, first_prompt(db, spec["session"]), spec, score, label)


def report(score: Score) -> None:
    kept = 100 * score.facts_kept / score.facts if score.facts else 100.0
    print(f"notes scored:                 {score.notes}")
    print(f"facts kept:                   {score.facts_kept}/{score.facts} ({kept:.1f} %)  target >= 97 %")
    print(f"lines repeated across sections: {len(score.repeated)}  target 0")
    print(f"descriptions = first prompt:  {len(score.prompt_descriptions)}  target 0")
    print(f"memory-tree paths in Files:   {len(score.tree_paths)}  target 0")
    print(f"project roots in Files:       {len(score.roots)}  target 0")
    print(f"should-be-absent found:       {len(score.present)}  target 0 (done follow-ups, sed reads, tree paths)")
    if score.sizes:
        print(f"note size: median {statistics.median(score.sizes):.0f} chars, max {max(score.sizes)}  target median <= 2500")
    for title, items in (
        ("missing facts", score.missing),
        ("repeated lines", score.repeated),
        ("prompt descriptions", score.prompt_descriptions),
        ("tree paths", score.tree_paths),
        ("project roots", score.roots),
        ("should be absent", score.present),
    ):
        for item in items[:20]:
            print(f"  {title}: {item}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="folder with opencode.db + sessions.json")
    parser.add_argument("--synthetic", action="store_true", help="also score the synthetic test corpora")
    parser.add_argument("--show", action="store_true", help="print every note")
    args = parser.parse_args()
    corpora = args.corpus or [FIXTURE]
    score = Score()
    with tempfile.TemporaryDirectory() as built:
        if args.synthetic:
            from tests.capture.corpora import build_all

            corpora = [*corpora, *build_all(Path(built))]
        for corpus in corpora:
            score_corpus(corpus, score, args.show)
    report(score)


if __name__ == "__main__":
    main()
