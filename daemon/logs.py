"""structlog set-up: JSON lines to a rotated file, readable lines on stderr.

Every event passes the secret scrubber before it reaches any handler. The second half
reads the file back for `memoryd logs`: parse, filter, render, follow across rotation.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import re
import sys
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import structlog

from daemon.files import ensure_dir
from daemon.scrub import redact
from daemon.timefmt import DURATION_HELP, parse_duration

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _scrub_event(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Redact secrets from every string in the event (keys stay as they are)."""
    for key, value in event.items():
        if isinstance(value, str):
            event[key] = redact(value)
        elif isinstance(value, (list, tuple, dict)):
            text = repr(value)
            clean = redact(text)
            if clean != text:
                event[key] = clean
    return event


_SHARED: list[Any] = [
    structlog.contextvars.merge_contextvars,
    # stdlib records (the memory modules log without structlog, to keep `recall` light)
    # carry their fields in `extra=`; this lifts them into the event.
    structlog.stdlib.ExtraAdder(),
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,
    _scrub_event,
]


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Every log file it opens (the first, and each new one after a rotation) is 0600,
    whatever the umask: a log holds session titles and paths."""

    def _open(self) -> Any:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        os.fchmod(fd, 0o600)
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)  # noqa: SIM115 - the handler closes it


def setup_logging(
    level: str = "info",
    log_file: Path | None = None,
    max_bytes: int = 5_000_000,
    backups: int = 3,
    stderr: bool = True,
) -> None:
    """Configure structlog + stdlib logging; safe to call again (e.g. on SIGHUP)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    root.setLevel(_LEVELS[level])

    json_formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.processors.JSONRenderer(ensure_ascii=False)],
    )
    if log_file is not None:
        ensure_dir(log_file.parent)
        file_handler = _PrivateRotatingFileHandler(log_file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        file_handler.setFormatter(json_formatter)
        root.addHandler(file_handler)
    if stderr:
        console = logging.StreamHandler(sys.stderr)
        if sys.stderr.isatty():
            console.setFormatter(
                structlog.stdlib.ProcessorFormatter(
                    foreign_pre_chain=_SHARED,
                    processors=[
                        structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                        structlog.dev.ConsoleRenderer(colors=True),
                    ],
                )
            )
        else:
            console.setFormatter(json_formatter)
        root.addHandler(console)
    # Libraries that chatter at INFO (httpx per request).
    for name in ("httpx", "httpcore", "watchdog"):
        logging.getLogger(name).setLevel(max(logging.WARNING, _LEVELS[level]))

    structlog.configure(
        # Drop events below the level before any processor (the scrubber) runs on them.
        processors=[structlog.stdlib.filter_by_level, *_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "memoryd") -> Any:
    return structlog.get_logger(name)


# ---- reading the log back (`memoryd logs`) ----

LEVEL_RANK = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
_STANDARD_KEYS = ("timestamp", "level", "event")
_BARE = re.compile(r"[^\s\"'=]+")


@dataclass(frozen=True)
class LogEntry:
    """One line of the log file: its JSON record, or None when the line is not JSON."""

    line: str
    record: dict[str, Any] | None

    @property
    def time(self) -> datetime | None:
        """The record's timestamp (aware), or None when absent or unreadable."""
        if self.record is None or not isinstance(self.record.get("timestamp"), str):
            return None
        try:
            stamp = datetime.fromisoformat(self.record["timestamp"])
        except ValueError:
            return None
        return stamp if stamp.tzinfo else stamp.astimezone()

    @property
    def level(self) -> str | None:
        value = self.record.get("level") if self.record else None
        return value.lower() if isinstance(value, str) else None


@dataclass(frozen=True)
class FilePosition:
    """Where reading stopped: which file (inode) and how far into it."""

    inode: int
    offset: int


def parse_log_line(line: str) -> LogEntry:
    """Return the entry for one line; anything that is not a JSON object keeps only its text."""
    line = line.rstrip("\r\n")
    try:
        record = json.loads(line)
    except ValueError:
        return LogEntry(line, None)
    return LogEntry(line, record if isinstance(record, dict) else None)


def parse_since(text: str, now: datetime) -> datetime:
    """Return the moment `text` names: a duration back from `now` (10m, 1h30m, 2d) or an ISO time.

    A time without a zone is local time. Raises ValueError with a usable message.
    """
    duration = parse_duration(text)
    if duration is not None:
        return now - duration
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a time: use {DURATION_HELP}, "
            "or an ISO date/time like 2025-01-31 or 2025-01-31T14:00"
        ) from None
    return moment if moment.tzinfo else moment.astimezone()


def entry_matches(entry: LogEntry, since: datetime | None = None, min_level: str | None = None) -> bool:
    """True when the entry passes the filters; lines they cannot judge (not JSON) always pass."""
    if since is not None:
        moment = entry.time
        if moment is not None and moment < since:
            return False
    if min_level is not None:
        level = entry.level
        if level in LEVEL_RANK and LEVEL_RANK[level] < LEVEL_RANK[min_level]:
            return False
    return True


def _show_value(value: Any) -> str:
    if isinstance(value, str):
        return value if _BARE.fullmatch(value) else json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, default=str)


def format_entry(entry: LogEntry, tz: tzinfo | None = None) -> str:
    """Return the entry as `time LEVEL event key=value…` (time in `tz`, default local)."""
    record = entry.record
    if record is None:
        return entry.line
    moment = entry.time
    when = moment.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S") if moment else "-" * 19
    level = (entry.level or "-").upper()
    parts = [when, f"{level:<7}", str(record.get("event", ""))]
    extra = {k: v for k, v in record.items() if k not in _STANDARD_KEYS and k != "exception"}
    parts.extend(f"{key}={_show_value(value)}" for key, value in extra.items())
    text = " ".join(p for p in parts if p)
    exception = record.get("exception")
    if exception:
        # Tracebacks keep their own lines, indented under the event they belong to.
        text += "\n" + "\n".join("    " + line for line in str(exception).rstrip().splitlines())
    return text


def log_files(path: Path) -> list[Path]:
    """Return the log and its rotated backups that exist, oldest first."""
    backups = []
    for candidate in path.parent.glob(path.name + ".*"):
        suffix = candidate.name[len(path.name) + 1 :]
        if suffix.isdigit():
            backups.append((int(suffix), candidate))
    # RotatingFileHandler: memoryd.log.1 is the newest backup, .N the oldest.
    ordered = [p for _, p in sorted(backups, reverse=True)]
    return [*ordered, path] if path.exists() else ordered


def _read_lines(path: Path) -> tuple[list[str], int, int] | None:
    """Return (complete lines, bytes consumed, inode) of a file; None when it vanished."""
    try:
        with path.open("rb") as handle:
            data = handle.read()
            inode = os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return None
    # A trailing line without its newline is still being written: leave it to follow.
    end = data.rfind(b"\n") + 1
    lines = data[:end].decode("utf-8", "replace").splitlines()
    return lines, end, inode


def read_log(
    path: Path,
    since: datetime | None = None,
    min_level: str | None = None,
    last: int | None = None,
) -> tuple[list[LogEntry], FilePosition | None]:
    """Return the matching entries (oldest first, at most `last`) and where the current file ended.

    Rotated backups are read only as far back as needed: for `last` entries, or back
    to `since` (a backup last written before `since` holds nothing newer).
    """
    found: list[list[LogEntry]] = []
    count = 0
    position: FilePosition | None = None
    for file in reversed(log_files(path)):
        # The current file is always read: following starts where it ends.
        if file != path and last is not None and count >= last:
            break
        if file != path and since is not None:
            try:
                if datetime.fromtimestamp(file.stat().st_mtime).astimezone() < since:
                    break
            except FileNotFoundError:
                continue
        read = _read_lines(file)
        if read is None:
            continue
        lines, consumed, inode = read
        if file == path:
            position = FilePosition(inode, consumed)
        matches = [e for e in map(parse_log_line, lines) if entry_matches(e, since, min_level)]
        found.append(matches)
        count += len(matches)
    entries = [entry for chunk in reversed(found) for entry in chunk]
    if last is not None:
        entries = entries[-last:] if last else []
    return entries, position


class _LogTail:
    """One log file read in whole lines; `pending` holds the last line until it ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: Any = None
        self.pending = b""

    def reopen(self) -> None:
        try:
            self.handle = self.path.open("rb")
        except FileNotFoundError:
            self.handle = None

    def start_at(self, start: FilePosition | None) -> None:
        """Open the file at `start` (None: at its end)."""
        self.reopen()
        if self.handle is None:
            return
        status = os.fstat(self.handle.fileno())
        if start is None:
            self.handle.seek(status.st_size)
        elif status.st_ino == start.inode and start.offset <= status.st_size:
            self.handle.seek(start.offset)
        # Otherwise the file was replaced or truncated since `start`: read it all.

    def drain(self) -> Iterator[str]:
        while self.handle is not None and (chunk := self.handle.read(65536)):
            self.pending += chunk
            *complete, self.pending = self.pending.split(b"\n")
            for raw in complete:
                yield raw.decode("utf-8", "replace").rstrip("\r")

    def flush_partial(self) -> Iterator[str]:
        if self.pending:
            yield self.pending.decode("utf-8", "replace")
            self.pending = b""

    def follow_file(self) -> Generator[str, None, bool]:
        """Catch up with a file created, rotated or truncated since the last read; yield what
        the old one still held. Returns whether there is anything new to read at once."""
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            current = None  # between a rotation's rename and the new file
        if self.handle is None:
            if current is None:
                return False
            self.reopen()
        elif current is not None and current.st_ino != os.fstat(self.handle.fileno()).st_ino:
            # Rotated: what the writer put in the old file before the rename is read first.
            yield from self.drain()
            yield from self.flush_partial()
            self.handle.close()
            self.reopen()
        elif current is not None and current.st_size < self.handle.tell():
            yield from self.flush_partial()
            self.handle.seek(0)
        else:
            return False
        return True

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def follow_log(
    path: Path,
    start: FilePosition | None = None,
    stop: Callable[[], bool] = lambda: False,
    poll_s: float = 0.25,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """Yield lines appended to `path` from `start` on (None: from its end), like `tail -F`.

    Survives rotation (the file renamed and recreated: the old one is drained first),
    truncation (read again from the top) and a briefly missing file. Ends when `stop()`.
    """
    tail = _LogTail(path)
    try:
        tail.start_at(start)
        while not stop():
            before = len(tail.pending)
            produced = False
            for line in tail.drain():
                produced = True
                yield line
            if produced or len(tail.pending) != before:
                continue
            if not (yield from tail.follow_file()):
                sleep(poll_s)
    finally:
        tail.close()
