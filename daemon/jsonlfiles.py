"""Agents' own JSONL transcripts as a session source: read-only, incremental, edit-aware.

Claude Code and Codex CLI write one JSON object per line, one file per session, and a
resumed session appends to its file. `JsonlSource` is what both readers share: the agent's
package says which files there are and what their records mean; this module reads them.

- A file is read by byte offset: what was read is not read again while the file only
  grows. A file that shrank or was replaced (another inode) is read again from its start.
- Only complete lines are read: a line still being written waits for the next look.
- A bad line never stops a file: malformed JSON, a truncated line, one over `MAX_LINE`
  bytes (skipped in chunks, never held in memory) is logged once, naming the file and the
  byte offset, and the rest of the file is read.
- Change detection is a listing of the files with their (inode, size, mtime): a pass's
  cursor is that listing, and the sessions that moved are those whose files differ.
- The source is only ever read: a deleted file drops its session from the listing (its
  note stays: capture never deletes a note for a session the source no longer has).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.logs import get_logger
from daemon.source import SessionInfo, SessionRows

MAX_LINE = 4 * 1024 * 1024  # a line over this is skipped (an agent's blobs are 13-57 KB)
_SKIP_CHUNK = 1 << 16
SETTLED_NS = 5_000_000_000  # a file unmodified this long is not being written: its partial last line is truncated
CACHED_FILES = 128  # files whose records stay in memory between passes
Stat = tuple[int, int, int, int]  # device, inode, size, mtime_ns


def stat_of(path: Path) -> Stat | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class ReadResult:
    records: list[Any]
    offset: int  # where the next read starts: after the last complete line
    problems: list[tuple[int, str]]  # (byte offset, what is wrong)


def read_records(path: Path, start: int, keep: Callable[[dict], Any], settled: bool, max_line: int = MAX_LINE) -> ReadResult:
    """The kept records of `path`'s complete lines from byte `start` on.

    `keep(record)` turns a JSON object into what is kept of it (None: nothing). `settled`:
    the file is no longer written, so a last line without its newline is truncated (named
    as such) rather than still being written.
    """
    out = ReadResult([], start, [])
    with path.open("rb") as handle:
        handle.seek(start)
        while True:
            line = handle.readline(max_line + 1)
            if not line:
                break
            at = out.offset
            if len(line) > max_line:
                rest, ended = _skip_line(handle)
                size = len(line) + rest
                if not ended:
                    break  # a huge line still being written: looked at again when it ends
                out.offset += size
                out.problems.append((at, f"a line of {size / 1e6:.1f} MB, over the {max_line / 1e6:.0f} MB limit; skipped"))
                continue
            if not line.endswith(b"\n"):
                value = _parse(line)
                if value is None:
                    if settled:
                        out.problems.append((at, "a truncated last line (no newline, not valid JSON); not read"))
                    break  # still being written: the next look reads it whole
                out.offset += len(line)
                _keep(out, keep, value, at)
                break
            out.offset += len(line)
            if not line.strip():
                continue
            value = _parse(line)
            if value is None:
                out.problems.append((at, "a line that is not a JSON object (malformed or truncated); skipped"))
                continue
            _keep(out, keep, value, at)
    return out


def _skip_line(handle: Any) -> tuple[int, bool]:
    """Read past the rest of a long line; return the bytes skipped and whether it ended."""
    skipped = 0
    while True:
        chunk = handle.readline(_SKIP_CHUNK)
        skipped += len(chunk)
        if not chunk:
            return skipped, False
        if chunk.endswith(b"\n"):
            return skipped, True


def _parse(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:  # JSONDecodeError, and UnicodeDecodeError for bytes that are not UTF-8
        return None
    return value if isinstance(value, dict) else None


def _keep(out: ReadResult, keep: Callable[[dict], Any], value: dict, at: int) -> None:
    try:
        kept = keep(value)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a record of a shape this reader does not know
        out.problems.append((at, f"a record this reader cannot use ({type(exc).__name__}: {exc}); skipped"))
        return
    if kept is not None:
        out.records.append(kept)


@dataclass
class _Tail:
    identity: tuple[int, int]  # device, inode
    offset: int = 0
    records: list[Any] = field(default_factory=list)


class Tails:
    """Each file's kept records read so far, read on from where the last read stopped."""

    def __init__(self, keep: Callable[[dict], Any], agent: str, size: int = CACHED_FILES) -> None:
        self.keep = keep
        self.agent = agent
        self.size = size
        self._tails: OrderedDict[Path, _Tail] = OrderedDict()
        self._logged: set[tuple[Path, int, str]] = set()
        self.log = get_logger("memoryd.source")

    def read(self, path: Path) -> list[Any]:
        """Every kept record of `path` (an empty list when it is gone)."""
        stat = stat_of(path)
        if stat is None:
            self._tails.pop(path, None)
            return []
        tail = self._tails.pop(path, None)
        if tail is None or tail.identity != stat[:2] or stat[2] < tail.offset:
            tail = _Tail(stat[:2])  # new, replaced or rewritten shorter: from the start
        if stat[2] > tail.offset:
            settled = time.time_ns() - stat[3] > SETTLED_NS
            try:
                got = read_records(path, tail.offset, self.keep, settled)
            except OSError as exc:
                self._once(path, -1, f"cannot be read ({exc.strerror or exc}); tried again next pass")
                return tail.records
            tail.records.extend(got.records)
            tail.offset = got.offset
            for at, what in got.problems:
                self._once(path, at, what)
        self._tails[path] = tail
        while len(self._tails) > self.size:
            self._tails.popitem(last=False)
        return tail.records

    def _once(self, path: Path, at: int, what: str) -> None:
        key = (path, at, what)
        if key not in self._logged:
            self._logged.add(key)
            self.log.warning("source.bad_line", agent=self.agent, file=str(path), byte=at, detail=what)


@dataclass(frozen=True)
class SessionFile:
    """A file of an agent's store: the session it belongs to, and whether it is that
    session's own transcript (a Claude Code subagent's file only moves its parent)."""

    session_id: str
    main: bool = True


class JsonlSource:
    """A folder of an agent's JSONL session files as a `SessionSource` (see the module doc).

    An agent's reader says which files there are (`listing`), what it keeps of a record
    (`record_keeper`, applied once per line as it is read) and what the kept records of one file
    make (`info_of`, `rows_of`)."""

    agent = ""
    record_keeper: Callable[[dict], Any] = staticmethod(lambda record: None)  # what is kept of one line
    version_pattern = re.compile(rb"$^")  # the agent's version in a file
    version_at_end = True  # found in the file's last bytes (else its first)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tails = Tails(self.keep, self.agent)
        self._infos: dict[Path, tuple[Stat, SessionInfo | None]] = {}
        self._main: dict[str, Path] = {}
        self.log = get_logger("memoryd.source")
        self._gone_logged: set[str] = set()

    @property
    def agents(self) -> tuple[str, ...]:
        return (self.agent,)

    # -- what an agent's reader says ----------------------------------------------------

    def listing(self) -> dict[Path, SessionFile]:
        raise NotImplementedError

    def keep(self, record: dict) -> Any:
        return self.record_keeper(record)

    def version(self) -> str | None:
        """The agent's version that wrote the newest session (each file names it)."""
        newest = self.newest_file()
        return version_in(newest, self.version_pattern, tail=self.version_at_end) if newest else None

    def info_of(self, path: Path, session_id: str, records: list[Any], stat: Stat) -> SessionInfo | None:
        raise NotImplementedError

    def rows_of(self, info: SessionInfo, records: list[Any]) -> SessionRows:
        raise NotImplementedError

    # -- the source interface ---------------------------------------------------------

    def _scan(self) -> tuple[dict[Path, SessionFile], dict[str, Stat]]:
        files = self.listing()
        stats = {str(p): s for p in files if (s := stat_of(p)) is not None}
        self._main = {f.session_id: p for p, f in files.items() if f.main and str(p) in stats}
        return files, stats

    def cursor(self) -> str:
        _, stats = self._scan()
        return json.dumps({"root": str(self.path), "files": stats}, sort_keys=True, separators=(",", ":"))

    def changed_since(self, cursor: str) -> set[str]:
        """Sessions whose files are new or differ from the cursor's listing (all of them for
        no cursor, or one of another folder); a file gone since is logged once."""
        files, stats = self._scan()
        try:
            marks = json.loads(cursor) if cursor else None
        except ValueError:
            marks = None
        if not isinstance(marks, dict) or marks.get("root") != str(self.path) or not isinstance(marks.get("files"), dict):
            return {f.session_id for p, f in files.items() if str(p) in stats}
        before = {k: tuple(v) for k, v in marks["files"].items() if isinstance(v, list)}
        for gone in sorted(before.keys() - stats.keys()):
            if gone not in self._gone_logged:
                self._gone_logged.add(gone)
                self.log.info("source.file_gone", agent=self.agent, file=gone, hint="its note, if any, is kept")
        return {f.session_id for p, f in files.items() if str(p) in stats and before.get(str(p)) != stats[str(p)]}

    def sessions(self, ids: Sequence[str] | None = None) -> list[SessionInfo]:
        """Sessions (all, or these ids) oldest first by (time_created, id)."""
        self._scan()
        wanted = self._main if ids is None else {i: self._main[i] for i in ids if i in self._main}
        found = [info for sid, path in wanted.items() if (info := self._info(path, sid)) is not None]
        return sorted(found, key=lambda s: (s.time_created, s.id))

    def _info(self, path: Path, session_id: str) -> SessionInfo | None:
        stat = stat_of(path)
        if stat is None:
            return None
        cached = self._infos.get(path)
        if cached is not None and cached[0] == stat:
            return cached[1]
        info = self.info_of(path, session_id, self.tails.read(path), stat)
        self._infos[path] = (stat, info)
        return info

    def session_rows(self, session: SessionInfo) -> SessionRows:
        path = self._main.get(session.id)
        if path is None:
            self._scan()
            path = self._main.get(session.id)
        if path is None:
            raise KeyError(f"{self.agent} session {session.id}: its file is gone from {self.path}")
        return self.rows_of(session, self.tails.read(path))

    def session_count(self) -> int:
        """Sessions in the store (files of sessions, subagents aside)."""
        self._scan()
        return len(self._main)

    def newest_file(self) -> Path | None:
        _, stats = self._scan()
        return Path(max(stats, key=lambda p: stats[p][3])) if stats else None

    def newest_update(self) -> int | None:
        _, stats = self._scan()
        return max((s[3] // 1_000_000 for s in stats.values()), default=None)

    def data_version(self) -> int:
        """A number that changes when any file of the store changes (a hash of the listing)."""
        _, stats = self._scan()
        digest = hashlib.blake2b(repr(sorted(stats.items())).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big")

    def close(self) -> None:
        self._infos.clear()

    def opener(self) -> Callable[[], JsonlSource]:
        return functools.partial(type(self), self.path)


def walk_files(root: Path, pattern: str) -> Iterator[Path]:
    """Files under `root` matching `pattern` (a glob), sorted; nothing when `root` is absent."""
    if not root.is_dir():
        return iter(())
    return iter(sorted(root.glob(pattern)))


def version_in(path: Path, pattern: re.Pattern[bytes], tail: bool, window: int = 65536) -> str | None:
    """The first match of `pattern` in the first (or, `tail`, the last) `window` bytes of `path`."""
    try:
        with path.open("rb") as handle:
            if tail:
                handle.seek(max(0, path.stat().st_size - window))
            found = pattern.search(handle.read(window))
    except OSError:
        return None
    return found.group(1).decode("utf-8", "replace") if found else None
