"""Pure: the files a session touched and how (read, edited, created), and its commands.

A command that only reads a file (`cat f`, `sed -n '1,80p' f`, `head f`) is folded into
that file's "read". Paths inside a memory tree are memoryd's own writes, which
OpenCode's snapshot reports as changes: they and the project root are never listed.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

from daemon.capture.distill.base import TOOL_ALIASES, Entry

FILE_KEYS = ("filePath", "path", "file")
_READ_TOOLS = {"read", "view", "list", "ls"}
_CHANGE_CHARS = 120  # an edit of one line whose two sides fit this is shown as the change
_EDIT_TOOLS = {"edit", "multiedit", "patch", "apply_patch"}
_WRITE_TOOLS = {"write", "create"}
# Commands that only look around the working tree, alone on their line.
_LOOKS_AROUND = re.compile(r"^(?:git (?:status|diff|log|show|branch|remote -v)(?: [^;&|]*)?|ls(?: [^;&|]*)?|pwd|tree(?: [^;&|]*)?)$")
_READ_COMMANDS = {"cat", "head", "tail", "less", "more", "nl", "bat", "wc", "file", "stat", "sed"}
_SHELL_META = re.compile(r"[|;&<>`$(){}]")
_MEMORY_PARTS = (".memory",)
_REDIRECT_OPS = {">", ">>", ">|", "&>", "&>>"}
# `<<EOF` … `EOF` (also `<<-`, `<<'EOF'`, `<<"EOF"`): the body is data, not shell.
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_GLOBAL_TREE = re.compile(r"(^|/)opencode/memory(/|$)")
_QUOTING = re.compile(r"[\\'\"]")  # what makes shlex read a word otherwise than str.split does


def relative(path: str, directory: str) -> str:
    path = path.strip()
    base = directory.rstrip("/")
    if base and (path == base or path.startswith(base + "/")):
        return os.path.relpath(path, base)
    return path


def is_memory_path(path: str) -> bool:
    """A path inside a project's `.memory/` or the global tree (`…/opencode/memory/`)."""
    parts = path.replace("\\", "/").split("/")
    return any(p in _MEMORY_PARTS for p in parts) or bool(_GLOBAL_TREE.search(path.replace("\\", "/")))


def _read_only_targets(command: str) -> list[str] | None:
    """The files a read-only command (or pipe of them) reads, or None if it does anything else."""
    if _SHELL_META.sub("", command.replace("|", "")) != command.replace("|", "") or "\n" in command:
        return None
    targets: list[str] = []
    for segment in command.split("|"):
        found = _segment_targets(segment.strip())
        if found is None:
            return None
        targets += found
    return targets or None


def _without_heredocs(command: str) -> str:
    """The command with every here-document's body left out (its opening line kept)."""
    lines = command.split("\n")
    kept: list[str] = []
    ends: list[str] = []
    for line in lines:
        if ends:
            if line.strip() == ends[0]:
                ends.pop(0)
            continue
        kept.append(line)
        ends = [m.group(2) for m in _HEREDOC.finditer(line)]
    return "\n".join(kept)


def redirect_targets(command: str) -> list[str]:
    """Files a shell command writes by redirection (`> f`, `>> f`, `&> f`), shell quoting respected.

    Words inside quotes (`psql -c "… HAVING count(*) > 1"`) and here-document bodies are
    data, never a redirect; `2>&1` duplicates a descriptor and names no file.
    """
    if ">" not in command and "tee" not in command:
        return []  # every redirect has a `>`; a `tee` names its files: neither, nothing to lex
    lexer = shlex.shlex(_without_heredocs(command), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: nothing in it can be trusted as a target
        return []
    targets: list[str] = []
    for op, target in zip(words, words[1:]):
        if op in _REDIRECT_OPS and target not in _REDIRECT_OPS and not target.isdigit() and target != "-":
            targets.append(target)
    return targets + _tee_targets(words)


def _tee_targets(words: list[str]) -> list[str]:
    """Files `… | tee [-a] f g` writes."""
    out: list[str] = []
    for at, word in enumerate(words):
        if word == "tee" and at and words[at - 1] == "|":
            for arg in words[at + 1 :]:
                if arg in _REDIRECT_OPS or arg in ("|", "&&", "||", ";", "&"):
                    break
                if not arg.startswith("-"):
                    out.append(arg)
    return out


def reads_only(command: str) -> bool:
    """A command that only shows files (`cat f`, `tail -n 50 app.log`, `sed -n '1,9p' f | head`)."""
    return bool(_read_only_targets(command.strip()))


def _segment_targets(command: str) -> list[str] | None:
    """Files one read-only command names ([] when it filters its input), or None."""
    first = command.split(None, 1)[0] if command.strip() else ""
    if first and not _QUOTING.search(first) and first not in _READ_COMMANDS:
        return None  # shlex would read the same first word: no need to split the whole line
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or words[0] not in _READ_COMMANDS:
        return None
    if words[0] == "sed" and ("-i" in words or "-n" not in words and not any(w.startswith("-n") for w in words)):
        return None
    args = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "sed" and args:
        args = args[1:]  # the script
    elif words[0] in ("head", "tail") and args and args[0].isdigit():
        args = args[1:]
    return args


class Touched:
    """Collects paths with how they were touched, and the commands run, in order."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.files: dict[str, list[str]] = {}
        self.commands: list[str] = []
        self.changes: dict[str, str] = {}  # path → its last edit, when that is one short line

    def touch(self, path: str, how: str) -> None:
        rel = relative(path, self.directory)
        if not rel or rel in (".", "./") or is_memory_path(rel) or is_memory_path(path):
            return
        hows = self.files.setdefault(rel, [])
        if how == "created" and hows:
            how = "edited"  # written after being read: it existed
        if how == "edited" and "created" in hows:
            return  # a new file's later edits are part of creating it
        if how not in hows:
            hows.append(how)

    def add_tool(self, tool: Entry) -> None:
        name = tool.tool.lower()
        name = TOOL_ALIASES.get(name, name)  # OpenCode 2's spellings
        path = next((tool.input[k] for k in FILE_KEYS if isinstance(tool.input.get(k), str)), "")
        for verb, patched in _PATCH_FILE.findall(str(tool.input.get("patchText", ""))):
            self.touch(patched, {"Add": "created", "Delete": "deleted"}.get(verb, "edited"))
        if path:
            how = "edited" if name in _EDIT_TOOLS else "created" if name in _WRITE_TOOLS else "read"
            if tool.status == "error":
                how = f"{name} failed" if name not in _READ_TOOLS else "read failed"
            self.touch(path, how)
            if how == "edited":
                self._note_change(path, tool.input.get("oldString"), tool.input.get("newString"))
        if name == "bash" and isinstance(tool.input.get("command"), str):
            self._add_command(tool.input["command"])
        elif name in ("grep", "glob") and "pattern" in tool.input:
            self.commands.append(f"{name} `{_short(tool.input['pattern'], 120)}`")
        elif name == "task":
            self.commands.append(f"subagent: {_short(str(tool.input.get('description', '')), 120)}")

    def _note_change(self, path: str, old: object, new: object) -> None:
        """A one-line edit, short enough to read, is the change itself: `old` → `new` (the file's last one)."""
        rel = relative(path, self.directory)
        if rel not in self.files:
            return
        if isinstance(old, str) and isinstance(new, str) and "\n" not in old.strip() + new.strip():
            old, new = old.strip(), new.strip()
            if old and new and old != new and len(old) + len(new) <= _CHANGE_CHARS:
                self.changes[rel] = f"`{old}` → `{new}`"
                return
        self.changes.pop(rel, None)  # a longer edit came after it: the short one is no longer the change

    def _add_command(self, command: str) -> None:
        targets = _read_only_targets(command.strip())
        if targets:
            for target in targets:
                self.touch(target, "read")
            return
        if any(is_memory_path(word) for word in command.split()):
            return  # reading or writing memoryd's own tree is not the session's work
        for target in redirect_targets(command):
            if not target.startswith("/dev/"):
                self.touch(target, "written")  # `cat > new.py <<EOF`, `echo x >> .env`
        if _LOOKS_AROUND.match(command.strip()):
            return  # `git status`, `git diff --stat`, `ls`: a look around, not the session's work
        self.commands.append(f"`{_short(command, 120)}`")

    def add_changed(self, paths: Iterable[str]) -> None:
        for path in paths:
            if path.strip():
                self.touch(path.strip(), "edited")

    def lines(self, max_files: int = 15, max_commands: int = 8) -> list[str]:
        """Files changed first, then files only read; runs of look-alikes (`frame_0.cpp` … `frame_25.cpp`,
        one build per target) shown once with their count, so a long session's list keeps its variety."""
        changed = [(p, h) for p, h in self.files.items() if h != ["read"]]
        read = [(p, h) for p, h in self.files.items() if h == ["read"]]
        files = [f"`{path}` ({', '.join(how)}{more})" + (f": {self.changes[path]}" if path in self.changes and not more else "")
                 for path, how, more in _alike([*changed, *read])]
        commands = [f"{command} ({more.removeprefix('; ')})" if more else command
                    for command, _, more in _alike([(c, []) for c in dict.fromkeys(self.commands)])]
        return files[:max_files] + commands[:max_commands]


_DIGITS = re.compile(r"\d+")


def _alike(items: list[tuple[str, list[str]]]) -> list[tuple[str, list[str], str]]:
    """Items grouped by their shape (digits aside), first of each kept with "; and N more like it"."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for text, how in items:
        groups.setdefault((_DIGITS.sub("#", text), tuple(how)), []).append(text)
    out = []
    for (_, how), members in groups.items():
        more = f"; and {len(members) - 1} more like it" if len(members) > 1 else ""
        out.append((members[0], list(how), more))
    return out


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
