"""Note quality: distil a corpus with the extractive distiller and score what a reader gets.

    python bench/bench_notes.py [--corpus DIR ...] [--synthetic] [--multiturn] [--data DIR_OR_FILE ...] [--show]

A corpus is a folder holding `opencode.db` and `sessions.json` (scenario → session id,
facts a note must keep, junk or not), like tests/fixtures/opencode-1.18.33. With no
`--corpus` the repository's fixture is scored; `--synthetic` adds the test corpora
(Chinese, Japanese, Korean, a continued session, a 150-part session, subagents).

Figures: facts kept; lines repeated across sections; descriptions equal to the first
user prompt; memory-tree paths and project roots listed under "Files"; note size; and what
a reader picking the work up is misled by: superseded claims (a corpus's `superseded`
fragments) stated as outcome, description, cause or fix; raw tool output or source lines
and plans in Problems & Fixes; a user prompt repeated outside What Was Worked On;
descriptions without content ("Fixed.", "修正しました。").

`--multiturn` scores the longer multi-turn corpora (superseded attempts, blocked endings).

`--data` scores labelled sets in the held-out writer's JSON format (tests/data/notes/training,
a fresh batch, the validation folder): each is built into a real OpenCode 1.18 database and
scored with the labelled checks too (bench/note_checks.py), one column per `--data`, side by
side. A folder named `validation` (or any with `--aggregate-only`) prints figures only, never
a note, a fragment or a scenario's name.
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

from bench.note_checks import LabelScore, check_labels, label_details, label_rows  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "opencode-1.18.33"
FILES_SECTION = "Files, Systems & Commands"
WORKED_SECTION = "What Was Worked On"
PROBLEMS_SECTION = "Problems & Fixes"
# Where a superseded claim may stand: only as a failed attempt under Problems & Fixes.
CLAIM_SECTIONS = ("Outcome / Current State", "Decisions & Rationale", "Findings & Learnings", PROBLEMS_SECTION)
# An output line that reports an error (the one a note may quote), any casing; "1 failed" is a tally.
REAL_ERROR = re.compile(
    r"(?i)\b(?:error|fatal|exception|traceback|panic|denied|timed? ?out|unauthorized|forbidden)\b"
    r"|(?-i:[A-Za-z0-9](?:Error|Exception))\b|\bERR!|undefined (?:reference|symbol)|no such file|cannot find|not found"
    r"|(?<!\d )\bfailed\b|错误|失败|报错|エラー|失敗|오류|실패"
)
PLAN = re.compile(
    r"(?i)\b(?:i'll|i will|i'm going to|let me|let's|we should|should|we'll|going to|plan to|next i)\b"
    r"|我会|我来|让我|我先|打算|应该|しましょう|してみます|するつもり|予定です|하겠습니다|할게요|해 보겠|할 예정"
)
# A description that says nothing once the bare words of "done" are taken out.
_DONE_WORDS = re.compile(
    r"(?i)\b(?:fixed|fix|done|resolved|solved|completed?|finished|succeeded|success(?:ful(?:ly)?)?|pass(?:es|ed)?|all"
    r"|good|ok|okay|it|this|that|the|issue|problem|bug|build|tests?|now|works?|working|has|have|been|is|was|i|we)\b"
    r"|已|修复|完成|好了|解决|成功|通过|问题|构建|测试|了|修正|完了|対応|直し|解決|成功|ビルド|テスト|通りました|しました"
    r"|ました|です|수정|완료|해결|고쳤|성공|빌드|테스트|통과|했습니다|습니다|[\W_]"
)
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_PROMPT_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


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
    superseded: list[str] = field(default_factory=list)  # withdrawn claims stated as outcome/description/cause/fix
    raw_lines: list[str] = field(default_factory=list)  # tool output or source lines in Problems & Fixes
    plans: list[str] = field(default_factory=list)  # "I'll…" / "should…" in Problems & Fixes
    prompt_repeated: list[str] = field(default_factory=list)
    contentless: list[str] = field(default_factory=list)  # descriptions without content
    labels: LabelScore = field(default_factory=LabelScore)  # the labelled sets' checks (note_checks.py)


@dataclass
class SessionText:
    """What the session itself shows, to check a note against: prompts and tool outputs."""

    prompts: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # command outputs (bash, shell)
    sources: list[str] = field(default_factory=list)  # file contents a read tool returned
    tools: int = 0  # tool calls in the session


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


def session_text(db: Path, session_id: str) -> SessionText:
    """The session's user prompts, command outputs and file reads, from the database (read-only)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'session_v2'").fetchone():  # OpenCode 2's tables
        try:
            return _session_text_v2(conn, session_id)
        finally:
            conn.close()
    try:
        rows = conn.execute(
            "SELECT m.data, p.data FROM part p JOIN message m ON m.id = p.message_id"
            " WHERE p.session_id = ? ORDER BY m.time_created, m.id, p.id",
            (session_id,),
        ).fetchall()
    finally:
        conn.close()
    found = SessionText()
    for mdata, pdata in rows:
        message, part = json.loads(mdata), json.loads(pdata)
        if message.get("role") == "user" and part.get("type") == "text" and part.get("text", "").strip():
            found.prompts.append(part["text"].strip())
        elif part.get("type") == "tool":
            found.tools += 1
            output = str(part.get("state", {}).get("output", ""))
            if part.get("tool") in ("bash", "shell"):
                found.outputs.append(output)
            elif part.get("tool") in ("read", "view"):
                found.sources.append(output)
    return found


def _session_text_v2(conn, session_id: str) -> SessionText:  # noqa: ANN001 - sqlite3.Connection
    """SessionText of an OpenCode 2 session: its `session_message` rows in `seq` order."""
    from daemon.opencode.jsonrow import unquote_prompt

    found = SessionText()
    for kind, data in conn.execute("SELECT type, data FROM session_message WHERE session_id = ? ORDER BY seq", (session_id,)):
        row = json.loads(data)
        if kind == "user" and str(row.get("text", "")).strip():
            found.prompts.append(unquote_prompt(row["text"].strip()))
        for item in row.get("content", []) if kind == "assistant" else []:
            if item.get("type") != "tool":
                continue
            found.tools += 1
            output = "\n".join(c.get("text", "") for c in item.get("state", {}).get("content", []) if isinstance(c, dict))
            if item.get("name") in ("shell", "bash"):
                found.outputs.append(output)
            elif item.get("name") in ("read", "view"):
                found.sources.append(output)
    return found


def first_prompt(db: Path, session_id: str) -> str:
    prompts = session_text(db, session_id).prompts
    return prompts[0] if prompts else ""


def _weight(text: str) -> int:
    return len(text) + 2 * len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", text))


def is_attempt(line: str) -> bool:
    """A Problems & Fixes line that states a failed approach ("Tried: …")."""
    from daemon.capture.distill.supersede import ATTEMPT_PREFIXES

    return line.startswith(ATTEMPT_PREFIXES)


def contentless(description: str) -> bool:
    """A description that says only that something was done ("Fixed.", "修正しました。")."""
    return description.startswith("No result stated in the session") or _weight(_DONE_WORDS.sub("", description)) < 8


def score_claims(post, sections: dict[str, list[str]], spec: dict, score: Score, label: str) -> None:
    """Superseded claims stated as outcome, description, cause or fix."""
    description = str(post.get("description", ""))
    for fragment in spec.get("superseded", []):
        if fragment in description:
            score.superseded.append(f"{label}: description: {fragment}")
        for name in CLAIM_SECTIONS:
            for line in sections.get(name, []):
                if fragment in line and not (name == PROBLEMS_SECTION and is_attempt(line)):
                    score.superseded.append(f"{label}: {name}: {line[:90]}")
    if contentless(description):
        score.contentless.append(f"{label}: {description[:80]}")


def _lines(texts: list[str], least: int, but: re.Pattern[str] | None = None) -> set[str]:
    """Every line of `texts` at least `least` characters long (except those `but` matches), normalised."""
    return {
        _norm(line) for text in texts for line in text.splitlines()
        if len(line.strip()) >= least and not (but and but.search(line))
    }


def score_problems(sections: dict[str, list[str]], seen: SessionText, score: Score, label: str) -> None:
    """Raw output lines, source lines and plans in Problems & Fixes; prompts repeated elsewhere."""
    outputs = _lines(seen.outputs, 6, but=REAL_ERROR)
    sources = _lines(seen.sources, 20)
    for line in sections.get(PROBLEMS_SECTION, []):
        text = _norm(line)
        raw = next((o for o in outputs | sources if o in text), None)
        if raw:
            score.raw_lines.append(f"{label}: {line[:90]} [{raw[:40]}]")
        if PLAN.search(line) and not is_attempt(line):
            score.plans.append(f"{label}: {line[:90]}")
    # The prose of each request: an error pasted in a code block is the problem, not the request.
    prose = [_CODE_BLOCK.sub("\n", prompt) for prompt in seen.prompts]
    asked = {_norm(p) for prompt in prose for p in [prompt, *_PROMPT_SENTENCE.split(prompt)] if _weight(p) >= 25}
    for name, lines in sections.items():
        if name == WORKED_SECTION:
            continue
        for line in lines:
            if any(a in _norm(line) for a in asked):
                score.prompt_repeated.append(f"{label}: {name}: {line[:80]}")


def score_corpus(corpus: Path, score: Score, show: bool) -> None:
    """Distil a copy of the corpus in a throwaway home and score every note."""
    import frontmatter

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
            seen = session_text(db, spec["session"])
            score_note(text, seen.prompts[0] if seen.prompts else "", spec, score, label)
            post = frontmatter.loads(text)
            sections = sections_of(post.content)
            score_claims(post, sections, spec, score, label)
            score_problems(sections, seen, score, label)
            check_labels(text, sections, spec, seen.tools, score.labels, label)


def figures(score: Score) -> list[tuple[str, str]]:
    """(figure, value) rows for one group of corpora."""
    kept = 100 * score.facts_kept / score.facts if score.facts else 100.0
    misled = len({item.split(": ", 1)[0] for item in score.superseded})
    median = f"{statistics.median(score.sizes):.0f}" if score.sizes else "-"
    rows = [
        ("notes scored", str(score.notes)),
        ("facts kept (target >= 97 %)", f"{score.facts_kept}/{score.facts} ({kept:.1f} %)"),
        ("lines repeated across sections (0)", str(len(score.repeated))),
        ("descriptions = first prompt (0)", str(len(score.prompt_descriptions))),
        ("memory-tree paths in Files (0)", str(len(score.tree_paths))),
        ("project roots in Files (0)", str(len(score.roots))),
        ("should-be-absent found (0)", str(len(score.present))),
        ("superseded claims stated as result (0)", f"{len(score.superseded)} (in {misled} notes)"),
        ("raw output lines in Problems (0)", str(len(score.raw_lines))),
        ("plans in Problems (0)", str(len(score.plans))),
        ("prompt repeated (0)", str(len(score.prompt_repeated))),
        ("descriptions without content (0)", str(len(score.contentless))),
        ("note size median / max", f"{median} / {max(score.sizes) if score.sizes else '-'}"),
    ]
    return rows + (label_rows(score.labels) if score.labels.notes else [])


def details(score: Score) -> list[tuple[str, list[str]]]:
    return [
        ("missing facts", score.missing),
        ("repeated lines", score.repeated),
        ("prompt descriptions", score.prompt_descriptions),
        ("tree paths", score.tree_paths),
        ("project roots", score.roots),
        ("should be absent", score.present),
        ("superseded", score.superseded),
        ("raw output", score.raw_lines),
        ("plan", score.plans),
        ("prompt repeated", score.prompt_repeated),
        ("no content", score.contentless),
        *label_details(score.labels),
    ]


def report(groups: list[tuple[str, Score, bool]]) -> None:
    """The figures of every group side by side, then the items behind them (not for aggregate-only groups)."""
    tables = [figures(score) for _, score, _ in groups]
    names = [name for name, _, _ in groups]
    rows: dict[str, list[str]] = {}
    for number, table in enumerate(tables):
        for figure, value in table:
            rows.setdefault(figure, ["-"] * len(tables))[number] = value
    width = max(len(f) for f in rows) + 2
    columns = [max(18, len(n) + 2) for n in names]
    print("".ljust(width) + "".join(n.ljust(c) for n, c in zip(names, columns)))
    for figure, values in rows.items():
        print(figure.ljust(width) + "".join(v.ljust(c) for v, c in zip(values, columns)))
    for name, score, aggregate_only in groups:
        if aggregate_only:
            continue
        for title, items in details(score):
            for item in items[:20]:
                print(f"  [{name}] {title}: {item}")


def _data_corpora(where: Path, built: Path, v2: bool = False) -> list[Path]:
    """The labelled sets of a folder (or one file) as built corpora: a real OpenCode 1.18 database each
    (with `v2`, the database OpenCode 2.0.15 writes)."""
    from tests.capture.corpora import build_corpus
    from tests.capture.notes_set import load_set, set_files
    from tests.capture.notes_set_v2 import write_v2_corpus

    out = []
    for number, path in enumerate(set_files(where)):
        name, scenarios = load_set(path)
        out.append((write_v2_corpus if v2 else build_corpus)(built, f"set{number}-{name}", scenarios))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="folder with opencode.db + sessions.json")
    parser.add_argument("--synthetic", action="store_true", help="also score the synthetic test corpora")
    parser.add_argument("--multiturn", action="store_true", help="also score the multi-turn corpora")
    parser.add_argument("--data", type=Path, action="append", default=[], help="a labelled JSON set, or a folder of them")
    parser.add_argument("--aggregate-only", action="store_true", help="print no item behind a --data figure")
    parser.add_argument("--opencode2", action="store_true", help="also build each --data set as an OpenCode 2.0 database")
    parser.add_argument("--show", action="store_true", help="print every note (never for aggregate-only sets)")
    args = parser.parse_args()
    from daemon.logs import setup_logging

    setup_logging("warning")  # the figures, not a log line per session
    groups: list[tuple[str, Score, bool]] = []
    with tempfile.TemporaryDirectory() as built:
        corpora = list(args.corpus) or ([] if args.data and not (args.synthetic or args.multiturn) else [FIXTURE])
        if args.synthetic:
            from tests.capture.corpora import build_all

            corpora += build_all(Path(built))
        if args.multiturn:
            from tests.capture.corpora import build_all

            multi = build_all(Path(built) / "multiturn", multiturn=True)
            corpora = multi if not (args.corpus or args.synthetic) else [*corpora, *multi]
        if corpora:
            score = Score()
            for corpus in corpora:
                score_corpus(corpus, score, args.show)
            groups.append(("corpora", score, False))
        for number, where in enumerate(args.data):
            hidden = args.aggregate_only or "validation" in where.resolve().parts
            for v2 in (False, True) if args.opencode2 else (False,):
                score = Score()
                for corpus in _data_corpora(where, Path(built) / f"data{number}{'v2' if v2 else ''}", v2):
                    score_corpus(corpus, score, args.show and not hidden)
                groups.append((where.name.removesuffix(".json") + (" (2.0)" if v2 else ""), score, hidden))
    report(groups)


if __name__ == "__main__":
    main()
