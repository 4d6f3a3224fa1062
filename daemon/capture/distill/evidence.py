"""Pure: what the tools say happened in a session, whatever language its words are in.

A session records its checks: a command, its exit status (OpenCode 1.18 and 2.0 keep a
shell command's in `state.metadata.exit`), the test tallies it printed (pytest, cargo,
go test, jest, mocha, vitest), the first error line; and its edits to files. From them:

- a run *failed* when its exit status says so, else when its tally counts failures or it
  reported an error; it *passed* when its exit status is 0, else when its tally counts
  passes and no failures;
- two runs are the same *check* when they run the same command (the last command of a
  `&&` chain, without a pipe's tail: `pip cache purge && pip install -r r.txt` re-runs
  `pip install -r r.txt`);
- an *attempt* is the edits between two runs of a check that failed: it did not work
  when the run after it still failed, and it held when that run passed;
- a command that only reads or searches (cat, grep, rg) is no check, and a grep that
  found lines (exit 0) is no failure;
- a failure nobody reacted to (no edit after it, never re-run), after the session's last
  edit, while another check passed there, is a check meant to fail (a rejection test); so
  is one the agent's next words name and call meant (`<lang>/distill_expected.tsv`);
- the session *ended fixed* when every check that failed passed at its last run,
  *unresolved* when one still failed at its last run after the last edit, *changed* when
  it edited files and no check failed after them (a check not run again on the change
  proves nothing either way).
When the words and the tools disagree, the tools win.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache

from daemon import lexicon

from daemon.capture.distill.base import Entry
from daemon.capture.distill.problems import COMMAND_TOOLS, first_error_line
from daemon.capture.distill.touched import reads_only

CHANGE_TOOLS = frozenset({"edit", "write", "multiedit", "patch", "apply_patch", "str_replace_based_edit_tool"})
FIXED, UNRESOLVED, CHANGED = "fixed", "unresolved", "changed"
# Programs that look for text or files: their exit 1 means "nothing found", their lines are matches.
_SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "locate", "which", "ls", "tree"})
_REDIRECT = re.compile(r"\s\d?>>?&?\s*\S+")  # `2>&1`, `>/dev/null`: where output goes, not what runs
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
# Test runners' tallies, as they print them.
_TALLIES = (
    re.compile(r"(?m)^=*\s*(?P<body>(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected)"
               r"(?:, )?)+) in [\d.]+s"),  # pytest
    re.compile(r"(?m)^test result: (?:ok|FAILED)\. (?P<body>\d+ passed; \d+ failed)"),  # cargo
    re.compile(r"(?m)^Tests:\s+(?P<body>(?:\d+ (?:failed|passed|skipped|todo|total)(?:, )?)+)"),  # jest
    re.compile(r"(?m)^\s*Tests\s+(?P<body>(?:\d+ (?:failed|passed|skipped)(?: \| )?)+)"),  # vitest
    re.compile(r"(?m)^\s*(?P<body>\d+ (?:passing|failing))"),  # mocha
)
_COUNT = re.compile(r"(\d+) (failed|failing|errors?|passed|passing)\b")
_GO_FAIL = re.compile(r"(?m)^(?:--- FAIL:|FAIL\b)")
_GO_OK = re.compile(r"(?m)^ok\s+\S+")


@dataclass(frozen=True)
class Run:
    """One command the agent ran, and what its tool reported."""

    at: int  # position among the session's steps
    turn: int
    command: str
    check: str  # what makes two runs the same check; "" for a read or a search
    failed: bool | None  # None: the tools do not say
    tally: str = ""  # "1 failed, 12 passed" as the runner printed it
    error: str = ""  # the first error line the tool reported
    exit: int | None = None

    def stated(self) -> str:
        """"`cmd` → 13 passed" / "`cmd` → exit 1: error": the run in the tool's own terms, in no language."""
        # A long chain or loop is shown by the check it re-ran (`for i in 1 2 3; do npm test; done` → `npm test`).
        command = self.command if len(self.command) <= 60 or not self.check else self.check
        command = command if len(command) <= 100 else command[:99] + "…"
        shown = self.tally or (f"exit {self.exit}" if self.exit is not None else "")
        if self.failed and self.error and self.error not in shown:
            shown = f"{shown}: {self.error[:200]}" if shown else self.error[:200]
        return f"`{command}` → {shown}" if shown else f"`{command}`"


@dataclass(frozen=True)
class Edit:
    at: int
    turn: int
    path: str


@dataclass
class Evidence:
    runs: list[Run] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    _by_entry: dict[int, Run] = field(default_factory=dict)  # id() of the tool's Entry → its run
    meant: set[int] = field(default_factory=set)  # positions of failures the agent's words call meant

    def run_of(self, tool: Entry) -> Run | None:
        return self._by_entry.get(id(tool))

    def after(self, run: Run) -> list[Run]:
        return [r for r in self.runs if r.check == run.check and r.at > run.at]

    def last_runs(self) -> dict[str, Run]:
        """Each check's last run."""
        return {r.check: r for r in self.runs if r.check}

    def ever_failed(self, check: str) -> bool:
        return any(r.failed for r in self.runs if r.check == check)

    def expected_failure(self, run: Run) -> bool:
        """A failure meant to happen, after the last edit: one the agent's next words name as meant ("exits 2,
        as intended"), or one never re-run, not reacted to, beside a check that passed."""
        if not (run.failed and run.check and self.edits):
            return False  # before any change a failure is the problem being reproduced, whatever is said
        last_edit = self.edits[-1].at
        if run.at > last_edit and run.at in self.meant:
            return True
        return run.at > last_edit and not self.after(run) and any(
            r.failed is False and r.check and r.check != run.check and r.at > last_edit for r in self.runs)

    def failed_unchanged(self, run: Run) -> bool:
        """A failed re-run of a check that failed before it with no edit in between (`pip install` after
        `pip install -U pip`): the same problem, run again."""
        before = [r for r in self.runs if r.check == run.check and r.at < run.at and run.check]
        return bool(run.failed and before and before[-1].failed
                    and not any(before[-1].at < e.at < run.at for e in self.edits))

    def is_problem(self, run: Run) -> bool:
        """A real failure: the tool said it failed, and it was no check meant to fail."""
        return bool(run.failed) and not self.expected_failure(run)

    def outcome(self) -> tuple[str, Run | None]:
        """(fixed / unresolved / changed / "", the run that shows it)."""
        last = [r for r in self.last_runs().values() if r.failed is not None and not self.expected_failure(r)]
        final_edit = self.edits[-1].at if self.edits else 0
        # A check that failed before the last edit was not run on the change: untested, not unresolved.
        still = [r for r in last if r.failed and r.at > final_edit]
        last = [r for r in last if not r.failed or r.at > final_edit]
        if still:
            return UNRESOLVED, still[-1]
        repaired = [r for r in last if self.ever_failed(r.check)]
        if repaired:
            return FIXED, repaired[-1]
        if self.edits:
            tallied = [r for r in last if r.tally]  # a test run shows a change better than a sample command
            return CHANGED, (tallied or last or [None])[-1]
        return "", None

    def attempts(self) -> list[tuple[list[Edit], Run, Run]]:
        """(edits, the failed run before them, the next run of that check) for every edited gap of a failing check."""
        out = []
        for run in self.runs:
            if not (run.failed and run.check):
                continue
            later = self.after(run)
            if not later:
                continue
            edits = [e for e in self.edits if run.at < e.at < later[0].at]
            if edits:
                out.append((edits, run, later[0]))
        return out


_REPORT_LINES = 40  # a long session's report keeps its first and last runs


def report(evidence: Evidence) -> str:
    """What the tools recorded, one line a check run or a group of edits, in order, then how it ended:
    for a model's prompt, in the tools' own terms (commands, exit status, tallies, error lines)."""
    events = sorted([(r.at, "run", r) for r in evidence.runs if r.check]
                    + [(e.at, "edit", e) for e in evidence.edits], key=lambda item: item[0])
    # The run after an edited gap of a failing check says whether the change held.
    judged = {after.at: "the change before it did not help" if after.failed else "the change before it held"
              for _, _, after in evidence.attempts() if after.failed is not None}
    lines: list[str] = []
    for _, kind, item in events:
        if kind == "edit":
            name = item.path.rsplit("/", 1)[-1] or "?"
            if lines and lines[-1].startswith("edited "):
                if name not in lines[-1][len("edited ") :].split(", "):
                    lines[-1] += f", {name}"
            else:
                lines.append(f"edited {name}")
        else:
            verdict = "failed" if item.failed else "passed" if item.failed is False else "ran"
            meant = " (meant to fail)" if evidence.expected_failure(item) else ""
            held = f": {judged[item.at]}" if item.at in judged else ""
            lines.append(f"{item.stated()} [{verdict}{meant}{held}]")
    if len(lines) > _REPORT_LINES:
        lines = [*lines[: _REPORT_LINES // 2], "…", *lines[-_REPORT_LINES // 2 :]]
    outcome, proof = evidence.outcome()
    if outcome:
        lines.append(f"ended: {outcome}" + (f", shown by {proof.stated()}" if proof is not None else ""))
    return "\n".join(lines)


def _segments(command: str) -> list[str]:
    return [s.strip() for s in re.split(r"&&|\|\||;|\n", command) if s.strip()]


def _program(segment: str) -> str:
    words = segment.split()
    if any(q in segment for q in "'\"\\"):  # only quoting needs the shell's own reading
        try:
            words = shlex.split(segment)
        except ValueError:
            pass
    words = [w for w in words if not _ENV.match(w)]
    return words[0].rsplit("/", 1)[-1] if words else ""


def check_of(command: str) -> str:
    """What two runs share when they are the same check; "" for a read, a search or a `cd`."""
    if reads_only(command):
        return ""
    segments = [s for s in _segments(command) if _program(s) not in ("cd", "export", "source", ".", "echo")]
    if not segments:
        return ""
    last = _REDIRECT.sub(" ", segments[-1].split("|", 1)[0]).strip()
    program = _program(last)
    if not program or program in _SEARCHES or (program == "git" and re.match(r"\s*git\s+(?:grep|log|status|diff|show)\b", last)):
        return ""
    return " ".join(last.split())


def tally(output: str) -> tuple[str, int | None, int | None]:
    """(the tally as printed, failures, passes) from a test runner's summary; ("", None, None) without one."""
    for pattern in _TALLIES:
        found = list(pattern.finditer(output))
        if found:
            body = found[-1].group("body").strip().rstrip(",|").strip()
            counts = {kind: int(n) for n, kind in _COUNT.findall(body)}
            failures = sum(v for k, v in counts.items() if k.startswith(("fail", "error")))
            passes = sum(v for k, v in counts.items() if k.startswith("pass"))
            return body.replace(" | ", ", ").replace(";", ","), failures, passes
    if _GO_FAIL.search(output):
        return "", 1, None
    if _GO_OK.search(output):
        return "", 0, 1
    return "", None, None


def verdict(tool: Entry) -> tuple[bool | None, str, str]:
    """(failed?, tally, error line) of one command, the exit status first, then the tally, then the output."""
    output = tool.output or ""
    printed, failures, passes = tally(output)
    error = first_error_line(tool.error or output) if tool.status == "error" else first_error_line(output)
    if tool.status == "error":
        return True, printed, error or " ".join((tool.error or "").split())[:200]
    if tool.exit is not None:
        return tool.exit != 0, printed, error if tool.exit != 0 else ""
    if failures is not None:
        return failures > 0, printed, error if failures else ""
    if passes:
        return False, printed, ""
    return (True, printed, error) if error else (None, printed, "")


@lru_cache(maxsize=1)
def _meant_words() -> lexicon.Matcher:
    return lexicon.Matcher({row[0] for _, row in lexicon.every("distill_expected")})


_ARG = re.compile(r"[\w.=/-]{3,}")


def _calls_meant(text: str, run: Run) -> bool:
    """Words after a failed run that name it (an argument of its command) and say the failure was meant."""
    if not _meant_words().found(text):
        return False
    args = {a.lower() for a in _ARG.findall(run.command)[1:]}
    return any(a in text.lower() for a in args)


def gather(turns: list) -> Evidence:  # list[Turn]: turns.py imports nothing from here
    """The runs and edits of a session's turns, in order."""
    evidence = Evidence()
    at = 0
    for number, turn in enumerate(turns):
        pending: list[Run] = []  # this turn's failed runs, for the words after them
        for step in turn.steps:
            at += 1
            if step.kind == "text":
                evidence.meant |= {r.at for r in pending if _calls_meant(step.text, r)}
            if step.kind != "tool":
                continue
            name = step.tool.lower()
            if name in CHANGE_TOOLS and step.status != "error":
                path = str(step.input.get("filePath") or step.input.get("path") or step.input.get("file") or "")
                evidence.edits.append(Edit(at, number, path))
            command = step.input.get("command")
            if name in COMMAND_TOOLS and isinstance(command, str) and command.strip():
                check = check_of(command)
                failed, printed, error = verdict(step) if check else (None, "", "")
                if not check and not reads_only(command) and step.exit in (0, 1):
                    failed = False  # a search: its exit 1 is "nothing found", its lines are what it found
                evidence.runs.append(Run(at, number, command.strip(), check, failed, printed, error, step.exit))
                evidence._by_entry[id(step)] = evidence.runs[-1]
                if failed and check:
                    pending.append(evidence.runs[-1])
    return evidence
