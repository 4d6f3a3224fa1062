"""What a labelled set (tests/data/notes, the held-out writer's JSON) lets bench_notes check.

Each check reads one note against its scenario's labels:
- a final fix recorded as a failed attempt: a `final_fix` fragment in a failed-attempt line
  ("Tried: … did not work", in any of the note languages);
- a check meant to fail, or a command that is no failure (a grep that found lines), listed
  under Problems & Fixes;
- an unresolved session that lost a next step; a cause never stated (outside the request
  and the failed attempts);
- the note's size on a long session (LONG_TOOLS tool calls or more).
"""

from __future__ import annotations

from dataclasses import dataclass, field

WORKED = "What Was Worked On"
PROBLEMS = "Problems & Fixes"
LONG_TOOLS = 6


def attempt_markers() -> tuple[str, ...]:
    """How a failed-attempt line opens or carries on, in every language the distiller writes."""
    from daemon.capture.distill.supersede import ATTEMPT_LABELS

    return tuple(part.strip(" —:：") for pair in ATTEMPT_LABELS.values() for part in pair) + ("did not work",)


def is_failed_attempt(line: str) -> bool:
    return any(marker and marker in line for marker in attempt_markers())


@dataclass
class LabelScore:
    notes: int = 0
    fix_as_failed: list[str] = field(default_factory=list)
    not_failures: list[str] = field(default_factory=list)  # grep-with-matches / expected failures under Problems
    unresolved: int = 0
    next_steps_kept: int = 0
    next_steps_lost: list[str] = field(default_factory=list)
    with_cause: int = 0
    cause_stated: int = 0
    cause_lost: list[str] = field(default_factory=list)
    long_sizes: list[int] = field(default_factory=list)


def _has(fragment: str, text: str) -> bool:
    return fragment.casefold() in text.casefold()


def check_labels(text: str, sections: dict[str, list[str]], spec: dict, tools: int, score: LabelScore, label: str) -> None:
    """Score one note (its text and `## ` sections) against its scenario's labels."""
    score.notes += 1
    if tools >= LONG_TOOLS:
        score.long_sizes.append(len(text))
    problems = sections.get(PROBLEMS, [])
    attempts = [line for lines in sections.values() for line in lines if is_failed_attempt(line)]
    for fragment in spec.get("final_fix", []):
        for line in attempts:
            if _has(fragment, line):
                score.fix_as_failed.append(f"{label}: {line[:100]}")
    for fragment in [*spec.get("expected_failures", []), *spec.get("not_failures", [])]:
        for line in problems:
            if _has(fragment, line):
                score.not_failures.append(f"{label}: {line[:100]}")
    if spec.get("outcome") == "unresolved" and spec.get("next_steps"):
        score.unresolved += 1
        lost = [f for f in spec["next_steps"] if not _has(f, text)]
        if lost:
            score.next_steps_lost.append(f"{label}: {', '.join(lost)}")
        else:
            score.next_steps_kept += 1
    if spec.get("cause"):
        score.with_cause += 1
        stated = [line for name, lines in sections.items() if name != WORKED for line in lines
                  if not is_failed_attempt(line)]
        if any(_has(f, line) for f in spec["cause"] for line in stated):
            score.cause_stated += 1
        else:
            score.cause_lost.append(f"{label}: {', '.join(spec['cause'])}")


def label_rows(score: LabelScore) -> list[tuple[str, str]]:
    """(figure, value) rows of one set's labelled checks."""
    import statistics

    median = f"{statistics.median(score.long_sizes):.0f}" if score.long_sizes else "-"
    return [
        ("final fixes recorded as failed (target 0)", str(len(score.fix_as_failed))),
        ("grep/expected failures in Problems (target 0)", str(len(score.not_failures))),
        ("unresolved keeping next steps", f"{score.next_steps_kept}/{score.unresolved}"),
        ("cause stated", f"{score.cause_stated}/{score.with_cause}"),
        (f"median note, sessions >= {LONG_TOOLS} tools (<= 2500)", f"{median} ({len(score.long_sizes)})"),
    ]


def label_details(score: LabelScore) -> list[tuple[str, list[str]]]:
    return [("fix recorded as failed", score.fix_as_failed), ("not a failure", score.not_failures),
            ("next steps lost", score.next_steps_lost), ("cause lost", score.cause_lost)]
