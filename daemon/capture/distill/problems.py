"""Pure: what goes under Problems & Fixes: a failing command with its first real error line.

A command's output is mostly noise: progress, test tallies ("1 failed"), echoed source.
The line worth keeping is the first that reports an error, in any casing: a compiler or
linker diagnostic, an exception, `Error:` / `error:` / `fatal:`; only when there is none,
a line that says something failed. Output of a tool that reads a file is never a problem:
it is source. A sentence that is a plan, or a line lifted from output or source, is no fix.
"""

from __future__ import annotations

import re

from daemon.capture.distill.base import Entry
from daemon.capture.distill.memo import per_entry
from daemon.capture.distill.tables import RegexTable
from daemon.capture.distill.touched import reads_only

_ERROR_CHARS = 200  # an error line, whole as a tool prints one; a longer one is a dump
COMMAND_TOOLS = frozenset({"bash", "shell", "sh", "exec", "run", "terminal"})
_STRONG = RegexTable("distill_error_strong", "(?i)")  # an error reported outright
_WEAK = RegexTable("distill_error_weak", "(?i)")  # something failed

# Lines that look like errors and are not: a tally, a "0 errors" summary, a warning, a traceback's frame.
_NOT_AN_ERROR = re.compile(
    r"(?i)^(?:traceback \(most recent call last\)|file \".*\", line \d+|warning:|-- )|\b(?:0|no) (?:errors?|failures?)\b"
    r"|^\s*(?:tests?|test files)\s+\d+ failed|^\d+ (?:failed|passed)\b"
    r"|;\s*//"  # a source line echoed with its comment (node's "throw er; // Unhandled 'error' event")
)
# Errors that only say a tool gave up; the line that says why comes after them.
_WRAPPER = re.compile(
    r"(?i)linking with `?\S+`? failed|could not compile|ld returned \d+ exit status|^make(?:\[\d+\])?: \*\*\*"
    r"|^npm (?:ERR!|error) (?:code|errno)\b|^npm (?:ERR!|error)\s*$|^error: command .* failed|exited with (?:code|status)"
    r"|^error: Recipe .* failed|^FAILED: \S+$|^ninja: build stopped"
)
_PIP_CONFLICT = "The conflict is caused by:"
_EXTRAS = re.compile(r"\[[^\]]*\]")
_CLIPPED = re.compile(r" …\[\d+ chars omitted\]… ")  # transcript.clip's marker
_CUT = "\x00\n\x00"  # where a clip cut two lines short: neither is an error line
_MESSAGE = re.compile(r"^[\w.]+: \S")  # "KeyError: 'customer_id'", not a bare "asyncio.exceptions.TimeoutError"
_NOTE = re.compile(r"^= (?:note|help): ")  # rustc's notes under a diagnostic
# A Python traceback's frame: the line under it is the frame's source, quoted, never the error.
_PY_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
_FRAME = re.compile(r"^[\s│┃|╷╵╭╮╰╯>❯✗×•*-]+")
_CODE = re.compile(
    r"[;{}]\s*$|^(?:def|class|import|from|return|const|let|var|function|#include|#define|public|private|static|fn|"
    r"package|using|if|for|while)\s+[\w\"'<{(*&]|^[\w.\[\]'\"]+\s*(?:=|\+=|:=)\s*\S|^\s*(?:<[^>]+>)"
)


def _clean(line: str) -> str:
    return " ".join(_NOTE.sub("", _FRAME.sub("", line)).split())


def _exception(lines: list[str]) -> str:
    """The exception a Python traceback ends with: the first line after its frames that is not indented."""
    for number, line in enumerate(lines):
        if line.strip().startswith("Traceback (most recent call last)"):
            for after in lines[number + 1 :]:
                if after.strip() and not after[:1].isspace():
                    return _clean(after)
    return ""


def _conflict(lines: list[str]) -> str:
    """What pip's resolver says a conflict is caused by: the requirements it lists that are not the user's own
    (a package's extras, `geoharvest[dev]`, said once with the package)."""
    for number, line in enumerate(lines):
        if line.strip() == _PIP_CONFLICT:
            causes: dict[str, str] = {}
            for after in lines[number + 1 :]:
                if not after[:1].isspace():
                    break
                if not after.strip().startswith("The user requested"):
                    causes.setdefault(_EXTRAS.sub("", _clean(after)), _clean(after))
            return "; ".join(causes)
    return ""


def first_error_line(output: str) -> str:
    """The first line of `output` that reports an error, else the first that says something failed, else "".

    A wrapper's line ("linking with `cc` failed", "npm ERR! code ERESOLVE", "make: *** Error 2") gives way to
    the first error after it that says what went wrong. A traceback's exception is the error its test
    runner's header ("ERROR: test_x") announced; pip's resolver error carries what caused the conflict.
    """
    output = _CLIPPED.sub(_CUT, output)  # the two sides of a clip are two lines, never one, and both cut short
    found = _first_error_line(output)
    if not found:
        return ""
    lines = output.splitlines()
    exception = _exception(lines) if "Traceback (most recent call last)" in output else ""
    if exception and _STRONG.found(exception) and _MESSAGE.search(exception):  # a bare name says less
        return exception
    conflict = _conflict(lines) if _PIP_CONFLICT in output else ""
    if not conflict or conflict in found:
        return found
    return f"{found.split(' because ', 1)[0]} — {conflict}"  # "because these versions conflict": the causes say how


def _first_error_line(output: str) -> str:
    # Most output holds no word of either table.
    if not (_STRONG.may_match(output) or _WEAK.may_match(output)):
        return ""
    weak = wrapper = ""
    previous = ""
    for raw in output.splitlines():
        quoted, previous = bool(_PY_FRAME.match(previous)), raw
        # A cleaned line holds only words of its raw line: most lines hold none, and are passed by.
        if quoted or not (_STRONG.may_match(raw) or _WEAK.may_match(raw)):
            continue
        line = _clean(raw).rstrip(":")
        if len(line) < 4 or "\x00" in raw or _NOT_AN_ERROR.search(line):
            continue
        if _STRONG.found(line):
            if not _WRAPPER.search(line):
                # A short wrapper carries a code worth keeping ("npm error code E401"): both, in order.
                return f"{wrapper} — {line}" if wrapper and len(wrapper) < 30 else line
            wrapper = wrapper or line
        elif not weak and _WEAK.found(line):
            weak = line
    return wrapper or weak


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@per_entry
def failing_line(tool: Entry) -> str:
    """"`cmd` failed: first error line" for a failed or erroring command, "`tool` path failed: …" for a failed tool."""
    file_keys = ("filePath", "path", "file")
    command = tool.input.get("command")
    if tool.status == "error":
        target = command or next((tool.input[k] for k in file_keys if k in tool.input), "")
        error = first_error_line(tool.error) or _clean(tool.error.splitlines()[0] if tool.error else "")
        label = f"`{_short(str(target), 100)}`" if command else f"`{tool.tool}` {_short(str(target), 100)}".rstrip()
        return f"{label} failed: {_short(error, _ERROR_CHARS)}" if error else f"{label} failed"
    if tool.tool.lower() not in COMMAND_TOOLS or not isinstance(command, str):
        return ""
    error = first_error_line(tool.output or "")
    if not error:
        return ""
    # `cat app.log` did not fail: the file it shows holds the error.
    verb = "shows" if reads_only(command) else "failed"
    return f"`{_short(command, 100)}` {verb}: {_short(error, _ERROR_CHARS)}"


def output_lines(tools: list[Entry]) -> set[str]:
    """Every line of every tool's output and of every file a tool read, normalised: what a note never lifts."""
    found: set[str] = set()
    for tool in tools:
        for raw in (tool.output or "").splitlines():
            line = " ".join(_clean(raw).split()).casefold()
            if len(line) >= 12:
                found.add(line)
    return found


def is_lifted(sentence: str, lines: set[str]) -> bool:
    """A sentence that is a line of output or source, or looks like code, not prose."""
    text = " ".join(_clean(sentence).split()).casefold()
    return text in lines or bool(_CODE.search(sentence.strip()))
