"""What each session was given: the daemon's record of the blocks its socket served.

One JSON line per session and block (`given.jsonl` in the state folder, 0600): when, the
session, its folder, its first prompt (scrubbed), the block exactly as served and the ids
the ranking chose for the prompt. The viewer's "What a session was given" page reads it.

Recording never slows an answer: the socket thread only puts the answer on a queue; a
thread of its own scrubs the prompt and appends the line. The file is bounded: past
MAX_BYTES it moves to `given.jsonl.1` (the one before is dropped).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from daemon.files import FILE_MODE

GIVEN_FILE = "given.jsonl"
MAX_BYTES = 4 * 1024 * 1024
PROMPT_CHARS = 2000  # the start of a prompt is what the ranking reads
SEEN_KEPT = 1024  # (session, block) pairs already written: a plugin asks again at every step
QUEUE_MAX = 256  # a burst beyond this is dropped, never waited for

log = logging.getLogger("memoryd.given")


def given_path(state_dir: Path) -> Path:
    return state_dir / GIVEN_FILE


class GivenLog:
    """Appends a line per (session, block) on a thread of its own; `close()` drains and stops."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(QUEUE_MAX)
        self._seen: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._thread = threading.Thread(target=self._run, name="memoryd-given", daemon=True)
        self._thread.start()

    def record(self, session: str | None, directory: str | None, prompt: str, payload: dict[str, Any]) -> None:
        """Queue one served block (only blocks a session asked for: a session id and a block)."""
        if not session or not payload.get("block"):
            return
        entry = {
            "at": time.time(), "session": session, "dir": directory, "prompt": prompt,
            "block": payload["block"], "relevant": payload.get("relevant", []),
            "generation": payload.get("generation"), "tokens": payload.get("tokens"),
        }  # fmt: skip
        try:
            self._queue.put_nowait(entry)
        except queue.Full:
            log.warning("given.dropped", extra={"session_id": session})

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while (entry := self._queue.get()) is not None:
            key = (entry["session"], hash(entry["block"]))
            if key in self._seen:
                continue
            self._seen[key] = None
            while len(self._seen) > SEEN_KEPT:
                self._seen.popitem(last=False)
            try:
                self._append(entry)
            except OSError as exc:  # a full disk or a removed folder: the daemon goes on
                log.warning("given.unwritable", extra={"path": str(self.path), "error": str(exc)})

    def _append(self, entry: dict[str, Any]) -> None:
        from daemon.scrub import redact  # the prompt is the user's text: scrubbed before it is kept

        # Scrubbed whole, then cut: a cut first could leave half a credential unrecognised.
        entry["prompt"] = redact(entry["prompt"])[:PROMPT_CHARS]
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            if self.path.stat().st_size + len(line) > MAX_BYTES:
                os.replace(self.path, self.path.with_name(GIVEN_FILE + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
        try:
            os.write(fd, line)  # one write of one line: a reader never sees half of it
        finally:
            os.close(fd)


def read_given(state_dir: Path, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
    """The recorded blocks, newest first (`offset` of them skipped); bad lines are skipped."""
    entries: list[dict[str, Any]] = []
    path = given_path(state_dir)
    for name in (path, path.with_name(GIVEN_FILE + ".1")):
        try:
            lines = name.read_bytes().splitlines()
        except FileNotFoundError:
            continue
        for raw in reversed(lines):
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("block"), str):
                entries.append(entry)
            if len(entries) >= offset + limit:
                return entries[offset:]
    return entries[offset:]
