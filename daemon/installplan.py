"""What an install or uninstall would do, said first (`--dry-run`), then done.

Every agent's installer plans into one `Plan`: files written (atomically, keeping their
mode), files removed, steps that go through the agent's own tools (Codex's app-server),
what is already as it should be, and what the user must do by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from daemon.files import atomic_write_text, ensure_dir


@dataclass
class Plan:
    writes: dict[Path, str] = field(default_factory=dict)  # path → new content
    removals: list[Path] = field(default_factory=list)
    steps: list[tuple[str, Callable[[], None]]] = field(default_factory=list)  # (what, do it), after the writes
    unchanged: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)  # what the user must do by hand
    steps_first: bool = False  # the steps read the files as they are now: run them before the writes

    def describe(self) -> list[str]:
        lines = [f"write {path}" for path in self.writes]
        lines += [f"remove {path}" for path in self.removals]
        lines += [what for what, _ in self.steps]
        lines += [f"unchanged: {what}" for what in self.unchanged]
        return lines + self.manual

    def apply(self) -> None:
        if self.steps_first:
            self._steps()
        for path, text in self.writes.items():
            mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
            ensure_dir(path.parent, 0o755)
            atomic_write_text(path, text, mode=mode)
        for path in self.removals:
            path.unlink(missing_ok=True)
        if not self.steps_first:
            self._steps()

    def _steps(self) -> None:
        for _, step in self.steps:
            step()

