"""Reading a note's bytes safely (R-I2, R-I3): no blocking, no following symlinks, no swapped files, no crashes.

Every component of the path is opened with O_NOFOLLOW relative to its parent (openat), so neither the file nor
any folder above it may be a symlink, even one pointing inside the folder: the walk never follows symlinks
either. The file itself is lstat'ed, opened with O_NONBLOCK (a FIFO named x.md cannot stall the writer), then
fstat'ed; it is used only when it is a regular file and the same (device, inode) the lstat saw.

A file is binary when its first 8000 bytes hold a NUL byte: git's own test (buffer_is_binary), so what git
shows as text is what scree indexes. Front matter opt-out is not decided here (scree.content.chunking does that).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BINARY_SNIFF_BYTES = 8000  # R-I2: git's FIRST_FEW_BYTES
READ_CHUNK_BYTES = 1 << 20
SWAP_RETRIES = 2  # an editor's atomic save can land between lstat and open: look once more
UTF8_BOM = b"\xef\xbb\xbf"

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_FILE_FLAGS = os.O_RDONLY | _O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC  # R-I3
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_MISSING_ERRNOS = (errno.ENOENT, errno.ENOTDIR)

NOT_RELATIVE = "not a relative path inside the folder"
SYMLINKED_FOLDER = "a folder in its path is a symlink"
SYMLINK = "symlink"
NOT_REGULAR = "not a regular file"
BINARY = "binary (NUL bytes)"
SWAPPED = "replaced while being opened"
PATH_TOO_LONG = "path longer than the system allows (PATH_MAX, {limit} bytes)"
NAME_TOO_LONG = "file name too long for the system (ENAMETOOLONG)"
SHOWN_NAME_CHARS = 160  # a skipped line or log line names a longer path by its head and tail: one readable line
SHOWN_HEAD_CHARS = 60


@dataclass(frozen=True, slots=True)
class FileContent:
    """A note's text, decoded and normalised, with facts about the raw bytes it came from."""

    text: str  # decoded UTF-8 with invalid bytes replaced, BOM dropped, CRLF/CR normalised to LF
    sha256: str  # of the raw bytes
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that exists but is not indexed, and why (said in logs and reindex replies).

    `unreadable`: an OSError stopped the read (permissions, too many open files, an I/O error). Such a file is not
    known to be gone, so it keeps its old rows and counts as failed (R-I1), never as deleted.
    """

    reason: str
    unreadable: bool = False


BAD_NAME = "file name is not valid UTF-8"


def name_is_valid(rel: str) -> bool:
    """False for a name the OS gave with undecodable bytes (surrogate escapes): R-I1 skips it, never a crash."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(rel: str) -> str:
    """A name as a person may read it: undecodable bytes shown as \\xNN escapes, so printing it never fails."""
    if name_is_valid(rel):
        return rel
    try:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that no file name byte stands for
        return rel.encode("utf-8", "backslashreplace").decode("utf-8")


def shown_short(rel: str) -> str:
    """shown_name, cut in the middle when it is too long for one line; the tail, which holds the file name, is kept."""
    shown = shown_name(rel)
    if len(shown) <= SHOWN_NAME_CHARS:
        return shown
    tail = SHOWN_NAME_CHARS - SHOWN_HEAD_CHARS - 1
    return f"{shown[:SHOWN_HEAD_CHARS]}…{shown[-tail:]}"


@lru_cache(maxsize=8)
def _path_max(root: str) -> int | None:
    """The longest path the system takes in one call, NUL included (4096 on Linux); None where it has no such limit."""
    try:
        return os.pathconf(root, "PC_PATH_MAX")
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows), or no limit known for this file system
        return None


def path_too_long(root: Path, rel: str) -> str | None:
    """R-I1: why root/rel is refused when its full path is over PATH_MAX, else None. The walk and the reads reach
    such a file one name at a time, but a search re-checks a hit's file by its path (ENAMETOOLONG), so it was
    indexed and never found: it is skipped with a reason like an unshowable name, a property of the name and not a
    read failure (which would fail every sync, and every rebuild, for good)."""
    limit = _path_max(str(root))
    if limit is None or len(os.fsencode(os.path.join(root, rel))) < limit:
        return None
    return PATH_TOO_LONG.format(limit=limit)


def scandir_by_names(root: str, rel_dir: str) -> os._ScandirIterator[str]:
    """os.scandir of a folder whose full path is over PATH_MAX (ENAMETOOLONG), opened one name at a time from the
    root instead (openat, no symlink followed), so the files below it can still be named. The iterator reads a
    copy of the descriptor (scandir dups it), so this one is closed at once."""
    fd = _open_folder(root, rel_dir)
    try:
        return os.scandir(fd)
    finally:
        os.close(fd)


def _open_folder(root: str, rel_dir: str) -> int:
    fd = os.open(root, _DIR_FLAGS & ~_O_NOFOLLOW)  # the root itself may sit below a symlink
    try:
        for name in rel_dir.split("/"):
            previous, fd = fd, os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(previous)  # after fd holds the new one: an interrupt between them never closes one twice
    except BaseException:
        os.close(fd)
        raise
    return fd


def stat_file(root: Path, rel: str) -> os.stat_result | None:
    """lstat of root/rel: None when it is missing or cannot be looked at."""
    try:
        return os.lstat(os.path.join(root, rel))
    except (OSError, ValueError):
        return None


def read_markdown(root: Path, rel: str, max_bytes: int) -> FileContent | Skipped | None:
    """The text of root/rel, a Skipped with the reason it is refused, or None when the file does not exist."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(part in ("", ".", "..") or "\0" in part for part in parts):
        return Skipped(NOT_RELATIVE)
    if os.open not in os.supports_dir_fd:
        return _read_by_path(root, parts, max_bytes)
    try:
        dir_fd = os.open(root, _DIR_FLAGS & ~_O_NOFOLLOW)  # the root itself may sit below a symlink
    except OSError as exc:
        return None if exc.errno in _MISSING_ERRNOS else _cannot_read(exc)
    try:
        for name in parts[:-1]:
            try:
                next_fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                return _folder_error(exc, dir_fd, name)
            # the finally closes dir_fd: it holds the new folder before the old one is closed, so a Ctrl-C between
            # the two (KeyboardInterrupt at any bytecode) never closes a descriptor twice (EBADF replaced the
            # interrupt: "scree: Bad file descriptor", exit 1), nor one another thread has opened since
            previous, dir_fd = dir_fd, next_fd
            os.close(previous)
        return _read_in(parts[-1], dir_fd, max_bytes)
    finally:
        os.close(dir_fd)


def _read_by_path(root: Path, parts: list[str], max_bytes: int) -> FileContent | Skipped | None:
    """Where os.open takes no dir_fd (Windows): the folders must resolve to themselves, then the same checks."""
    folder = os.path.join(root, *parts[:-1])
    if not os.path.isdir(folder):
        return None
    if os.path.realpath(folder) != os.path.join(os.path.realpath(root), *parts[:-1]):
        return Skipped(SYMLINKED_FOLDER)
    return _read_in(os.path.join(folder, parts[-1]), None, max_bytes)


def _cannot_read(exc: OSError) -> Skipped:
    if exc.errno == errno.ENAMETOOLONG:  # a name over NAME_MAX (or a path over PATH_MAX): no such file can exist
        return Skipped(NAME_TOO_LONG)
    return Skipped(f"cannot read: {os.strerror(exc.errno) if exc.errno else exc}", unreadable=True)


def _folder_error(exc: OSError, dir_fd: int, name: str) -> Skipped | None:
    """What opening one folder of the path failed on: missing, a symlink, or something else."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return Skipped(SYMLINKED_FOLDER)
    return None if exc.errno in _MISSING_ERRNOS else _cannot_read(exc)


def _read_in(name: str, dir_fd: int | None, max_bytes: int) -> FileContent | Skipped | None:
    """lstat, open without following or blocking, fstat, compare, read: the R-I3 sequence."""
    for _ in range(SWAP_RETRIES):
        try:
            seen = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            return None if exc.errno in _MISSING_ERRNOS else _cannot_read(exc)
        if stat.S_ISLNK(seen.st_mode):
            return Skipped(SYMLINK)
        if not stat.S_ISREG(seen.st_mode):
            return Skipped(NOT_REGULAR)
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in _MISSING_ERRNOS or exc.errno == errno.ELOOP:
                continue  # gone or swapped for a symlink since the lstat: look again
            return _cannot_read(exc)
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino) or not stat.S_ISREG(opened.st_mode):
                continue
            return _read_open(fd, opened, max_bytes)
        finally:
            os.close(fd)
    return Skipped(SWAPPED)


def _read_open(fd: int, opened: os.stat_result, max_bytes: int) -> FileContent | Skipped:
    """Read at most max_bytes + 1 bytes; over the cap, binary, or the decoded text."""
    too_big = Skipped(f"larger than SCREE_MAX_FILE_BYTES ({max_bytes} bytes)")  # R-I2
    if opened.st_size > max_bytes:
        return too_big
    chunks: list[bytes] = []
    remaining = max_bytes + 1
    try:
        while remaining > 0:
            chunk = os.read(fd, min(remaining, READ_CHUNK_BYTES))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        return _cannot_read(exc)
    raw = b"".join(chunks)
    if len(raw) > max_bytes:
        return too_big
    if b"\0" in raw[:BINARY_SNIFF_BYTES]:
        return Skipped(BINARY)
    return FileContent(
        text=decode_text(raw),
        sha256=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        mtime_ns=opened.st_mtime_ns,
    )


def decode_text(raw: bytes) -> str:
    """UTF-8 with invalid bytes replaced (never an error), a leading BOM dropped, CRLF and CR made LF."""
    text = raw.removeprefix(UTF8_BOM).decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")
