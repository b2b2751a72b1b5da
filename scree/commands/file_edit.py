"""What `scree init` and its AGENTS.md/CLAUDE.md block share when they edit a file in a repository: the folder's
lock and the one-step replace."""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path

from scree.errors import ConfigError


@contextmanager
def locked_folder(folder: Path) -> Iterator[int | None]:
    """An exclusive flock on `folder` (a config file's own), held while scree reads, merges and replaces the file,
    so concurrent inits, or editors taking the same lock, each see the others' edits; yields the folder's descriptor
    (to fsync the rename), or None on Windows, where scree takes no lock. The folder, not a lock file: no file is
    left beside a config that is committed."""
    if sys.platform == "win32":
        yield None
        return
    import fcntl

    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise ConfigError(f"cannot open {folder} to lock it: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # releases the lock


NEW_FILE_MODE = 0o644  # a committed file, readable by all: it names no path and holds no secret


# Reading a file scree may replace: never blocking (a FIFO cannot hold scree), never through a link, bytes as written
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def read_regular(real: Path, target: Path, not_regular: ConfigError) -> tuple[bytes, os.stat_result] | None:
    """The bytes and status of the file at `real` (named `target` in messages); None when there is none; the
    refusal `not_regular` for anything else than a regular file, checked on the opened file too (opened without
    blocking and without following a link, so a FIFO or a swapped name cannot hold scree)."""
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):
            raise not_regular
        fd = os.open(real, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc.strerror}") from None
    try:
        status = os.fstat(fd)  # what was opened, should the name have been swapped since the stat
        if not stat.S_ISREG(status.st_mode):
            raise not_regular
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(), status
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc.strerror}") from None
    finally:
        os.close(fd)


class ChangedMeanwhile(Exception):
    """Another program replaced the file between scree's read and its replace; it is left as that program wrote it."""


def replace_file(real: Path, payload: bytes, original: os.stat_result | None, folder_fd: int | None) -> None:
    """Replace `real` in one step (a reader never sees half a file, a crash leaves the old or the new one): a temp
    file in the same folder with the original's mode (and owner, where scree may set it), fsynced, then renamed over
    it."""
    with _temp_copy(real, payload, original) as tmp:
        os.replace(tmp, real)
    _sync_folder(folder_fd)


def replace_if_unchanged(
    real: Path, payload: bytes, original: os.stat_result | None, folder_fd: int | None, as_read: bytes | None
) -> None:
    """replace_file, unless `real` no longer holds `as_read` (None: it was absent): ChangedMeanwhile then, and the
    other program's file stays. For a program that edits the file without scree's folder lock (issue 34): on Linux
    the swap is one renameat2 call, RENAME_EXCHANGE, which leaves the file it displaced at the temp name; if that is
    not what scree read, another write landed in between and a second exchange puts it back, so nothing of it is
    lost. Where the call or the flag is missing, the file is read again just before the rename (a window of a few
    microseconds stays)."""
    with _temp_copy(real, payload, original) as tmp:
        if as_read is None:
            if not _rename2(tmp, real, RENAME_NOREPLACE):
                if not _holds(real, None):
                    raise ChangedMeanwhile
                os.replace(tmp, real)
        elif not _rename2(tmp, real, RENAME_EXCHANGE):
            if not _holds(real, as_read):
                raise ChangedMeanwhile
            os.replace(tmp, real)
        elif not _holds(tmp, as_read):
            try:
                _rename2(tmp, real, RENAME_EXCHANGE)  # theirs back in place; scree's goes with the temp name
            except ChangedMeanwhile:  # and then deleted: theirs is the last word
                os.rename(tmp, real)
            raise ChangedMeanwhile
    _sync_folder(folder_fd)


@contextmanager
def _temp_copy(real: Path, payload: bytes, original: os.stat_result | None) -> Iterator[Path]:
    """`payload` in a fsynced temp file beside `real`, with the original's mode (and owner, where scree may set it);
    whatever is left at the temp name goes on the way out. An OSError is a ConfigError naming `real`."""
    mode = NEW_FILE_MODE if original is None else stat.S_IMODE(original.st_mode)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write in {real.parent}: {exc.strerror}") from None
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if original is not None and hasattr(os, "fchown") and original.st_uid != os.geteuid():
                with suppress(OSError):  # only root may give a file away; otherwise it becomes the user's
                    os.fchown(handle.fileno(), original.st_uid, original.st_gid)
            os.chmod(tmp, mode)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        yield tmp
    except OSError as exc:
        raise ConfigError(f"cannot write {real}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


def _sync_folder(folder_fd: int | None) -> None:
    if folder_fd is not None:
        with suppress(OSError):  # the rename made durable; some file systems cannot fsync a folder
            os.fsync(folder_fd)


def _holds(path: Path, expected: bytes | None) -> bool:
    """Whether `path` holds exactly `expected` (is absent, for None); unreadable counts as changed."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return expected is None
    except OSError:
        return False
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return expected is not None and handle.read() == expected
    except OSError:
        return False
    finally:
        os.close(fd)


RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2  # linux/fs.h
_AT_FDCWD = -100
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP}


@cache
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2 (glibc 2.28+, musl 1.2.3+), or None off Linux or where it is missing."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        call: Callable[..., int] = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    return call


def _rename2(src: Path, dst: Path, flags: int) -> bool:
    """renameat2(src, dst, flags): True when done, False where this system or file system cannot (the caller falls
    back). The file that should be there and is not (or is, for RENAME_NOREPLACE) is ChangedMeanwhile."""
    call = _renameat2()
    if call is None:
        return False
    import ctypes

    if call(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    if err in (errno.EEXIST, errno.ENOENT):
        raise ChangedMeanwhile
    raise OSError(err, os.strerror(err), str(dst))
