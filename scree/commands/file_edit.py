"""What `scree init` and its AGENTS.md/CLAUDE.md block share when they edit a file in a repository."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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
