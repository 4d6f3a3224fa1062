"""Atomic, private file writes and safe file names."""

from __future__ import annotations

import itertools
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from daemon.diskfull import raise_if_disk_full

FILE_MODE = 0o600
DIR_MODE = 0o700
TEMP_PREFIX = ".memoryd-tmp-"
_counter = itertools.count()


def ensure_dir(path: Path, mode: int = DIR_MODE) -> Path:
    """Create `path` and its missing parents with exactly `mode`, whatever the umask; return it.

    Folders that already exist are left alone: they may be the user's (a memory tree).
    """
    if path.is_dir():
        return path
    missing = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode)
        except FileExistsError:
            continue  # made by someone else meanwhile: theirs, not ours to chmod
        os.chmod(folder, mode)  # mkdir's mode passes through the umask; mkdir -p's ignores it
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty with FILE_MODE, or set an existing one to it; return it.

    For files another library creates with its own mode (SQLite: 0644 less the umask,
    and its -wal/-shm files copy the database's mode).
    """
    try:
        # An existing file is never opened here: closing any descriptor of a file drops
        # every POSIX lock this process holds on it, and SQLite's locks (another thread's
        # open connection) would silently go with it.
        os.chmod(path, FILE_MODE)
        return path
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


TIGHTENED_STAMP = ".private"  # in a state folder: a full walk found nothing it could not tighten


def tighten_private_tree(root: Path) -> list[str]:
    """Create `root` private, or take group and other access away from it and from
    everything in it (a state folder made by an older release or under a loose umask).

    Only for folders memoryd owns entirely. Symlinks are left alone. Returns the entries
    it could not change (owned by someone else), each with the reason.
    """
    ensure_dir(root)
    stamp = root / TIGHTENED_STAMP
    # Everything memoryd writes is private already: once a walk left nothing loose, a later
    # start only checks the folder itself (a walk of 50,000 transcripts cost ~20 % of a
    # `memoryd distill` with nothing new).
    if stat.S_IMODE(os.lstat(root).st_mode) & 0o077 == 0 and stamp.exists():
        return []
    refused = []
    for folder, _dirs, files in os.walk(root):
        for entry in (folder, *(os.path.join(folder, name) for name in files)):
            try:
                st = os.lstat(entry)
                if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                    os.chmod(entry, stat.S_IMODE(st.st_mode) & 0o700)
            except FileNotFoundError:
                continue  # removed meanwhile (another process's temp file)
            except PermissionError as exc:
                refused.append(f"{entry}: {exc.strerror}")
    if not refused:
        private_file(stamp)
    return refused


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE, durable: bool = True) -> None:
    """Write `data` to `path` via a temp file in the same folder and a rename.

    A reader (or a crash) sees either the old file or the new one, never a part.
    `durable=False` skips the fsync; the caller then syncs a whole batch at once
    (`sync_files`) before it records the writes as done.
    """
    # Unique per process and call; O_EXCL guards against anything else using the name.
    tmp = os.path.join(os.path.dirname(path), f"{TEMP_PREFIX}{os.getpid()}-{next(_counter)}")  # no Path per write
    try:
        fd = _open_temp(tmp, path, mode)
        # From here on every exit (an error, Ctrl-C between any two lines) removes the temp
        # file: the handler below covers the descriptor's whole life, not only the write.
        try:  # straight to the descriptor: one write of bytes in hand needs no buffered file object
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
            os.fchmod(fd, mode)  # whatever the umask took away
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        # Not swallowed: the temp file is removed and the error goes on (a full disk
        # as DiskFull, naming the file).
        Path(tmp).unlink(missing_ok=True)
        raise_if_disk_full(exc, path)
        if isinstance(exc, OSError) and exc.filename == tmp:
            # A read-only or foreign folder: name the file meant, not our temp file.
            raise type(exc)(exc.errno, f"{exc.strerror} (cannot write into {path.parent})", os.fspath(path)) from None
        raise


def _open_temp(tmp: str, path: Path, mode: int) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    try:
        return os.open(tmp, flags, mode)
    except FileNotFoundError:
        # The folder is missing: made only then, so a write into an existing one (a
        # backfill's every note) costs no stat of it.
        ensure_dir(path.parent)
        return os.open(tmp, flags, mode)
    except FileExistsError:
        # Left by a killed process that had our pid: nobody else can be writing it.
        os.unlink(tmp)
        return os.open(tmp, flags, mode)


def remove_stale_temps(folders: Iterable[Path]) -> list[Path]:
    """Delete the temp files a killed memoryd left in `folders` (their writer's pid is no
    longer running); return them. Another live process's temp files are left alone."""
    gone: list[Path] = []
    for folder in folders:
        try:
            names = [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIX)]
        except OSError:
            continue  # missing or unreadable: nothing of ours to clean there
        for name in names:
            pid = name[len(TEMP_PREFIX) :].partition("-")[0]
            if pid.isdigit() and not _running(int(pid)):
                try:
                    os.unlink(os.path.join(folder, name))
                except FileNotFoundError:
                    continue
                gone.append(folder / name)
    return gone


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE, durable: bool = True) -> None:
    """Write UTF-8 `text` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"), mode, durable)


def _find_syncfs() -> Callable[[int], int] | None:
    """Linux's syncfs(2): flush one file system, not every mount (a stale NFS mount
    would hang a global sync)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # on first use, not at import: every quick command imports this module (~3 ms)

    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


_UNKNOWN: Any = object()
_SYNCFS: Any = _UNKNOWN  # syncfs(2) or None, found on first use (`_syncfs`)


def _syncfs() -> Callable[[int], int] | None:
    global _SYNCFS
    if _SYNCFS is _UNKNOWN:
        _SYNCFS = _find_syncfs()
    return _SYNCFS


# Files on one file system from which one syncfs(2) is cheaper than an fsync of each and of
# their folders (a backfill's batch). Below it (a daemon's pass saves a note or two), an
# fsync each: a syncfs also waits for every other program's unwritten data on that disk
# (here: 5 ms for one note against 170 ms with 300 MB of someone else's writes pending).
SYNCFS_FROM = 32


def sync_files(paths: Iterable[str | Path]) -> None:
    """Make these (already written) files durable, and their renames: a large batch costs
    one syncfs per file system on Linux, a few files an fsync each and one per folder."""
    by_device: dict[int, dict[str, list[str]]] = {}  # device → folder → its files
    for folder, files in _by_folder(paths).items():
        try:
            device = os.stat(folder).st_dev
        except FileNotFoundError:
            continue  # a folder removed meanwhile holds nothing to sync
        by_device.setdefault(device, {})[folder] = files
    for folders in by_device.values():
        many = sum(map(len, folders.values())) >= SYNCFS_FROM
        if many and _syncfs() is not None and _sync_file_system(next(iter(folders))):
            continue
        _fsync_each(folders)


def _sync_file_system(folder: str) -> bool:
    """syncfs(2) of the file system holding `folder`; False when it failed (then: fsync each)."""
    syncfs = _syncfs()
    assert syncfs is not None
    try:
        fd = os.open(folder, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        return syncfs(fd) == 0
    finally:
        os.close(fd)


def _fsync_each(folders: dict[str, list[str]]) -> None:
    """fsync each file, then each of their folders (where the renames live); a file or
    folder deleted meanwhile is no error."""
    for path in [*(f for files in folders.values() for f in files), *folders]:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _by_folder(paths: Iterable[str | Path]) -> dict[str, list[str]]:
    """The paths by folder, as strings: a backfill's batch is thousands (no Path each)."""
    folders: dict[str, list[str]] = {}
    for path in map(os.fspath, paths):
        folders.setdefault(os.path.dirname(path), []).append(path)
    return folders


def write_if_changed(
    path: Path,
    text: str,
    mode: int = FILE_MODE,
    durable: bool = True,
    data: bytes | None = None,
    current: bytes | None = None,
) -> bool:
    """Write `text` only when the file's bytes differ; return whether it wrote.

    Never writing an unchanged file keeps watchers from looping on our own output.
    `data`: `text` encoded already; `current`: the file's bytes, read already (b"": no file).
    """
    data = text.encode("utf-8") if data is None else data
    if current is None:
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = None
    if current == data:
        return False
    atomic_write_bytes(path, data, mode, durable)
    return True


_UNSAFE = re.compile(r"[^\w.-]+", re.UNICODE)


def slugify(text: str, max_len: int = 80, fallback: str = "untitled") -> str:
    """Return a file-name-safe slug: no separators, dots-only names or control chars.

    Unicode letters (CJK included) are kept so titles stay recognisable.
    """
    if text.isascii() and text.isprintable():  # (most titles) NFKC leaves it as it is, and it holds no control character
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKC", text).lower()
        text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    slug = _UNSAFE.sub("-", text).strip("-._")
    slug = re.sub(r"-{2,}", "-", slug)
    # Bound by bytes too: a CJK title can exceed NAME_MAX (255 bytes) quickly.
    while len(slug) > max_len or len(slug.encode("utf-8")) > 180:
        slug = slug[:-1]
    slug = slug.rstrip("-._")
    return slug or fallback
