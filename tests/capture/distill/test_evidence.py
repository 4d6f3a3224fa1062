"""The tools' account of a session (evidence.py): exit status first, then the runner's tally."""

from __future__ import annotations

from daemon.capture.distill.base import Entry
from daemon.capture.distill.evidence import CHANGED, FIXED, UNRESOLVED, check_of, gather, tally
from daemon.capture.distill.problems import first_error_line
from daemon.capture.distill.turns import split_turns

PYTEST_RED = "tests/test_import.py ..F\nE   sqlite3.OperationalError: database is locked\n=== 1 failed, 12 passed in 5.41s ==="
PYTEST_GREEN = "tests/test_import.py ...\n============ 13 passed in 0.62s ============"


def _run(command: str, output: str, exit: int | None = None) -> Entry:
    return Entry("assistant", "tool", tool="bash", input={"command": command}, output=output, status="completed", exit=exit)


def _edit(path: str) -> Entry:
    return Entry("assistant", "tool", tool="edit", input={"filePath": path}, output="Edit applied successfully.",
                 status="completed")


def _evidence(*steps: Entry):
    return gather(split_turns([Entry("user", "text", text="the importer fails"), *steps]))


def test_an_edit_followed_by_the_same_failure_did_not_work_and_the_one_before_a_pass_held():
    ev = _evidence(_run("pytest -q", PYTEST_RED, 1), _edit("db.py"), _run("pytest -q", PYTEST_RED, 1), _edit("db.py"),
                   _run("pytest -q", PYTEST_GREEN, 0))
    assert [after.failed for _, _, after in ev.attempts()] == [True, False]
    outcome, proof = ev.outcome()
    assert outcome == FIXED and proof.stated() == "`pytest -q` → 13 passed"


def test_the_exit_status_wins_over_error_words_in_the_output():
    ev = _evidence(_run("grep -rn ERROR logs/", "logs/a.log:3: ERROR worker-1 database is locked", 0),
                   _run("make check", "all good, 0 errors", 2))
    grep, make = ev.runs
    assert grep.check == "" and not ev.is_problem(grep)  # a search is no check, its lines no failure
    assert make.failed and ev.outcome()[0] == UNRESOLVED


def test_without_an_exit_status_the_tally_decides():
    assert tally("test result: ok. 18 passed; 0 failed; 0 ignored")[1:] == (0, 18)
    assert tally("Tests:       1 failed, 21 passed, 22 total")[1:] == (1, 21)
    assert tally("--- FAIL: TestPool (0.02s)\nFAIL\texample.com/cache\t0.118s")[1] == 1
    ev = _evidence(_edit("a.py"), _run("pytest", PYTEST_GREEN))
    assert ev.runs[0].failed is False and ev.outcome()[0] == CHANGED


def test_a_rejection_check_that_fails_after_the_last_edit_beside_a_passing_check_was_meant_to_fail():
    ev = _evidence(_edit("cli.py"), _run("pytest -q", PYTEST_GREEN, 0),
                   _run("python -m shop export --format csv", "Error: unsupported format 'csv'", 2))
    rejected = ev.runs[1]
    assert ev.expected_failure(rejected) and not ev.is_problem(rejected)
    assert ev.outcome()[0] == CHANGED
    # The same failure with nothing passing beside it is where the session ended: a problem.
    alone = _evidence(_edit("cli.py"), _run("python -m shop export --format csv", "Error: unsupported format", 2))
    assert alone.is_problem(alone.runs[0]) and alone.outcome()[0] == UNRESOLVED


def test_a_chain_re_runs_its_last_command_and_a_pipe_tail_is_no_part_of_the_check():
    assert check_of("pip cache purge && pip install -r requirements.txt") == "pip install -r requirements.txt"
    assert check_of("cd web && npx jest | tail -5") == "npx jest"
    assert check_of("cat app.log") == "" and check_of("rg -n TODO src") == ""


def test_a_traceback_reports_its_exception_not_a_source_line_quoted_in_a_frame():
    output = ('Traceback (most recent call last):\n  File "b/invoice.py", line 48, in build\n'
              '    """Raises an error when the customer is not found."""\nKeyError: \'customer_id\'')
    assert first_error_line(output) == "KeyError: 'customer_id'"


def test_pips_resolver_error_says_what_the_conflict_is_caused_by():
    output = ("ERROR: Cannot install a and a[dev]==0.9.0 because these package versions have conflicting dependencies.\n\n"
              "The conflict is caused by:\n    The user requested pydantic>=2.6\n    a 0.9.0 depends on pydantic>=2.6\n"
              "    a[dev] 0.9.0 depends on pydantic>=2.6\n    kml 1.4.2 depends on pydantic<2\n\nTo fix this you could try to:")
    assert first_error_line(output) == ("ERROR: Cannot install a and a[dev]==0.9.0 — a 0.9.0 depends on pydantic>=2.6; "
                                        "kml 1.4.2 depends on pydantic<2")


def test_a_failure_the_agent_names_as_meant_after_the_change_is_no_problem_but_a_reproduction_is():
    said = Entry("assistant", "text", text="`--format csv` now exits 2, which is the intended behaviour.")
    ev = _evidence(_edit("cli.py"), _run("shop export --format csv", "Error: unsupported format 'csv'", 2), said)
    assert ev.expected_failure(ev.runs[0]) and ev.outcome()[0] == CHANGED
    repro = Entry("assistant", "text", text="`pytest -q` fails as expected, with database is locked.")
    ev = _evidence(_run("pytest -q", PYTEST_RED, 1), repro, _edit("db.py"), _run("pytest -q", PYTEST_GREEN, 0))
    assert ev.is_problem(ev.runs[0]) and ev.outcome()[0] == FIXED
