"""What memoryd gave each agent session through its hooks, kept so that a session's block
stays byte-identical across its turns (a resume, a compaction, a restarted daemon).

One small JSON file per session in `<state>/hooks/` (0600, written atomically): the block
its SessionStart got, and whether its first prompt was answered. Both the daemon and the
hook's no-daemon fallback read and write it.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from daemon.files import atomic_write_text, ensure_dir

FOLDER = "hooks"


def _file(state_dir: Path, agent: str, session: str) -> Path:
    key = hashlib.sha256(f"{agent}\0{session}".encode()).hexdigest()[:32]  # any id makes a safe name
    return state_dir / FOLDER / f"{agent}-{key}.json"


def load(state_dir: Path, agent: str, session: str) -> dict[str, Any]:
    """The session's record ({} when none, or unreadable: then it starts afresh)."""
    try:
        data = json.loads(_file(state_dir, agent, session).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(state_dir: Path, agent: str, session: str, record: dict[str, Any]) -> None:
    ensure_dir(state_dir / FOLDER)
    record = {**record, "agent": agent, "session": session, "at": int(time.time() * 1000)}
    atomic_write_text(_file(state_dir, agent, session), json.dumps(record, ensure_ascii=False), durable=False)


def _dir_file(state_dir: Path, agent: str, directory: str) -> Path:
    key = hashlib.sha256(f"{agent}\0dir\0{directory}".encode()).hexdigest()[:32]
    return state_dir / FOLDER / f"{agent}-dir-{key}.json"


def save_for_folder(state_dir: Path, agent: str, directory: str, block: str) -> None:
    """The newest block given to a session in `directory`: what a new session there gets
    when no daemon answers (building one costs a search index's worth of imports)."""
    ensure_dir(state_dir / FOLDER)
    atomic_write_text(_dir_file(state_dir, agent, directory), json.dumps({"block": block}), durable=False)


def load_for_folder(state_dir: Path, agent: str, directory: str) -> str | None:
    try:
        block = json.loads(_dir_file(state_dir, agent, directory).read_text(encoding="utf-8")).get("block")
    except (OSError, ValueError, AttributeError):
        return None
    return block if isinstance(block, str) else None


def last_injection(state_dir: Path, agent: str) -> int | None:
    """Epoch ms of the newest block given to a session of `agent` (for `memoryd status`)."""
    folder = state_dir / FOLDER
    times = [p.stat().st_mtime for p in folder.glob(f"{agent}-*.json") if "-dir-" not in p.name] if folder.is_dir() else []
    return int(max(times) * 1000) if times else None

