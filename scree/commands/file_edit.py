"""What `scree init` and its AGENTS.md/CLAUDE.md block share when they edit a file in a repository: the folder's
lock and the one-step replace."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
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


def replace_file(
    real: Path,
    payload: bytes,
    original: os.stat_result | None,
    folder_fd: int | None,
    still_as_read: Callable[[], None] | None = None,
) -> None:
    """Replace `real` in one step (a reader never sees half a file, a crash leaves the old or the new one): a temp
    file in the same folder with the original's mode (and owner, where scree may set it), fsynced, then renamed over
    it. `still_as_read` runs at the last moment before the rename and raises to keep the file as it is (the temp
    file goes either way)."""
    mode = NEW_FILE_MODE if original is None else stat.S_IMODE(original.st_mode)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write in {real.parent}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if original is not None and hasattr(os, "fchown") and original.st_uid != os.geteuid():
                with suppress(OSError):  # only root may give a file away; otherwise it becomes the user's
                    os.fchown(handle.fileno(), original.st_uid, original.st_gid)
            os.chmod(tmp, mode)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if still_as_read is not None:
            still_as_read()
        os.replace(tmp, real)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ConfigError(f"cannot write {real}: {exc.strerror}") from None
    except BaseException:  # what still_as_read raised, too
        Path(tmp).unlink(missing_ok=True)
        raise
    if folder_fd is not None:
        with suppress(OSError):  # the rename made durable; some file systems cannot fsync a folder
            os.fsync(folder_fd)
