"""A `.gitignore` in each memory tree: memoryd's per-machine files stay out of git.

Trees are often kept in git across machines. Swept memories (`.expired/`), in-flight
temp files and the recall counters older versions kept in the tree (`.state.json`; they
now live in the state folder) are this machine's business; a commit of them would
conflict on every pull. The block is memoryd's; lines around it are the
user's and are kept exactly. Written only when its bytes change.
"""

from __future__ import annotations

from pathlib import Path

from daemon.files import TEMP_PREFIX, write_if_changed
from daemon.memory.roots import EXPIRED_DIR, MemoryRoot

GITIGNORE = ".gitignore"
STATE_FILE = ".state.json"  # recall counters of earlier versions: may still lie in a tree
BEGIN = "# memoryd:begin (generated: memoryd's per-machine files, kept out of git)"
END = "# memoryd:end"
PATTERNS = (f"/{STATE_FILE}", f"/{EXPIRED_DIR}/", f"{TEMP_PREFIX}*")


def render_block() -> str:
    return "\n".join((BEGIN, *PATTERNS, END))


def merge(current: str | None) -> str:
    """The file with memoryd's block in place: added at the end, or replaced where it is."""
    block = render_block()
    if not current:
        return block + "\n"
    lines = current.split("\n")
    if BEGIN in lines and END in lines[lines.index(BEGIN) :]:
        start = lines.index(BEGIN)
        end = lines.index(END, start)
        return "\n".join([*lines[:start], block, *lines[end + 1 :]])
    return current + ("" if current.endswith("\n") else "\n") + block + "\n"


def ensure_gitignore(root: MemoryRoot) -> bool:
    """Write the tree's `.gitignore` if it lacks memoryd's block; return whether it wrote."""
    if not root.exists():
        return False
    path: Path = root.path / GITIGNORE
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    return write_if_changed(path, merge(current))
