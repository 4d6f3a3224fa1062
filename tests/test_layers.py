"""Imports flow one way (DESIGN.md, "Layers"): read from every module's own imports.

base (config, paths, files, logs, state, scrub, timefmt, sqlscript, diskfull, lexicon, the source
interface and the JSONL reading the agents share) → the agents (opencode/, claudecode/,
codex/), memory/ → capture/, sinks/ → service/ → faces (cli/, mcp, status, __main__). A
module may import its own layer's package and anything below; no agent imports another
agent or memory/ (nor memory/ an agent), nor capture/ and sinks/ each other. Lazy imports inside functions and imports for type
checking count the same: they are dependencies all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "daemon"

BASE = {
    "config", "paths", "files", "logs", "state", "scrub", "timefmt", "sqlscript", "diskfull", "lexicon", "__init__",
    "source", "jsonlfiles", "agentformats", "hookstore", "jsonc", "hooksettings", "installplan",
}  # fmt: skip
AGENTS = {"opencode", "claudecode", "codex"}
FACES = {"cli", "mcp", "status", "__main__", "hook", "agentstatus", "mcpfront", "mcpinstructions"}
# What each layer may import, besides itself.
ALLOWED = {
    "base": {"base"},
    **{agent: {"base"} for agent in AGENTS},
    "memory": {"base"},
    "capture": {"base", *AGENTS, "memory"},
    "sinks": {"base", *AGENTS, "memory"},
    "service": {"base", *AGENTS, "memory", "capture", "sinks"},
    "face": {"base", *AGENTS, "memory", "capture", "sinks", "service", "face"},
}


def layer_of(parts: tuple[str, ...]) -> str:
    """The layer of `daemon.<parts>` (a module or package path below `daemon`)."""
    if not parts:
        return "base"  # `daemon` itself: its __init__ (the version)
    top = parts[0].removesuffix(".py")
    if top in BASE:
        return "base"
    if top in FACES:
        return "face"
    if top in ALLOWED:
        return top
    raise AssertionError(f"daemon/{'/'.join(parts)} is in no layer: add it to tests/test_layers.py and DESIGN.md")


def imported_modules(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    """(line, parts below `daemon`) for every import of a daemon module in `path`."""
    module = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = module if path.name == "__init__.py" else module[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            # `from daemon.memory import tokenize` imports daemon.memory.tokenize.
            names = [target + [alias.name] for alias in node.names] if len(target) <= 2 else [target]
        else:
            continue
        for name in names:
            if name and name[0] == "daemon":
                found.append((node.lineno, tuple(name[1:])))
    return found


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_layers_of_the_tree_are_known():
    for path in modules():
        layer_of(path.relative_to(PACKAGE).parts)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path):
    own = layer_of(path.relative_to(PACKAGE).parts)
    wrong = []
    for line, parts in imported_modules(path):
        if parts and not ((PACKAGE / parts[0]).exists() or (PACKAGE / f"{parts[0]}.py").exists()):
            continue  # `from daemon import __version__`: a name, not a module
        target = layer_of(parts)
        if target != own and target not in ALLOWED[own]:
            wrong.append(f"line {line}: imports daemon.{'.'.join(parts)} ({target})")
    assert not wrong, f"{path.relative_to(PACKAGE)} ({own}) " + "; ".join(wrong)


def test_the_checker_sees_lazy_imports():
    # A module of the real tree, read as the checker reads it: a lazy import is found.
    found = dict((parts, line) for line, parts in imported_modules(PACKAGE / "memory" / "commands.py"))
    assert ("memory", "compile") in found  # imported inside _compile, not at the top
    assert layer_of(("service", "jobs.py")) == "service" and layer_of(("scrub.py",)) == "base"


def _module_of(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


# paths.py names config.Settings for type checkers only, so that `memoryd recall`
# never loads pydantic: a circle of annotations, which no import ever runs.
TYPE_ONLY_CIRCLES = {frozenset({("config",), ("paths",)})}


def import_graph() -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """daemon module → the daemon modules it imports (lazily, for type checking, or at the top)."""
    known = {_module_of(p) for p in modules()}
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for path in modules():
        own = _module_of(path)
        targets = set()
        for _, parts in imported_modules(path):
            target = tuple(part.removesuffix(".py") for part in parts)
            while target and target not in known:
                target = target[:-1]  # `from daemon.capture.plan import Action`: the module
            if target and target != own[: len(target)] and own != target[: len(own)]:
                targets.add(target)  # a package and its own modules are not a circle
        graph[own] = targets
    return graph


def circles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[set[tuple[str, ...]]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan)."""
    order: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    found: list[set[tuple[str, ...]]] = []

    def visit(node: tuple[str, ...]) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(group)

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return found


def test_no_two_modules_import_each_other():
    found = [group for group in circles(import_graph()) if frozenset(group) not in TYPE_ONLY_CIRCLES]
    assert not found, "import circles: " + "; ".join(
        " ↔ ".join(".".join(m) for m in sorted(group)) for group in found
    )


def test_the_circle_check_finds_a_circle():
    graph = {("a",): {("b",)}, ("b",): {("c",)}, ("c",): {("a",)}, ("d",): {("a",)}}
    assert circles(graph) == [{("a",), ("b",), ("c",)}]


#: A module a newcomer can read in one sitting, a function that fits on a screen.
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def test_modules_and_functions_stay_small() -> None:
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE.parent)
        if (lines := len(source.splitlines())) > MAX_MODULE_LINES:
            too_long.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {length} lines (at most {MAX_FUNCTION_LINES})")
    assert not too_long, "split these:\n" + "\n".join(too_long)
