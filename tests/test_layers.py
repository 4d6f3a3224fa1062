"""Imports flow one way (DESIGN.md, "Layers"): read from every module's own imports.

base (config, paths, files, logs, state, scrub, timefmt, sqlscript, diskfull) → opencode/, memory/
→ capture/, sinks/ → service/ → faces (cli/, mcp, status, __main__). A module may import
its own layer's package and anything below; opencode/ and memory/ never import each
other, nor capture/ and sinks/. Lazy imports inside functions and imports for type
checking count the same: they are dependencies all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "daemon"

BASE = {"config", "paths", "files", "logs", "state", "scrub", "timefmt", "sqlscript", "diskfull", "__init__"}
FACES = {"cli", "mcp", "status", "__main__"}
# What each layer may import, besides itself.
ALLOWED = {
    "base": {"base"},
    "opencode": {"base"},
    "memory": {"base"},
    "capture": {"base", "opencode", "memory"},
    "sinks": {"base", "opencode", "memory"},
    "service": {"base", "opencode", "memory", "capture", "sinks"},
    "face": {"base", "opencode", "memory", "capture", "sinks", "service", "face"},
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
