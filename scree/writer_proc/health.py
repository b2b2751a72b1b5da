"""The writer's health check (R-W4): the folder and the index file must stay the very ones it started with."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scree.errors import ScreeError


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """What makes a file the same file: its device and inode (a path can be removed and made again)."""

    device: int
    inode: int


def identity_of(path: Path) -> FileIdentity | None:
    """The identity of what `path` names now, or None when nothing is there (or it cannot be reached)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return FileIdentity(info.st_dev, info.st_ino)


def compare(what: str, path: Path, expected: FileIdentity, now: FileIdentity | None) -> str | None:
    """One line saying how `path` changed since the start, or None when it is still the same file (pure)."""
    if now is None:
        return f"the {what} {path} was removed or moved away"
    if now != expected:
        return f"the {what} {path} was replaced by another one"
    return None


class HealthCheck:
    """Remembers the folder and the index file as they were at the start; problem() says what changed since."""

    def __init__(self, folder: Path, db_path: Path | None) -> None:
        """`db_path` None: the index is in a database (issue 31), the folder alone is watched."""
        self.folder = folder
        self.db_path = db_path
        folder_id, db_id = identity_of(folder), identity_of(db_path if db_path is not None else folder)
        if folder_id is None:
            raise ScreeError(f"the folder {folder} does not exist")
        if db_id is None:
            raise ScreeError(f"the index {db_path} does not exist")
        self._folder_id = folder_id
        self._db_id = db_id

    def problem(self) -> str | None:
        """Why the writer must stop, in one line, or None while both are the ones it started with."""
        folder = compare("folder", self.folder, self._folder_id, identity_of(self.folder))
        if folder is not None or self.db_path is None:
            return folder
        return compare("index", self.db_path, self._db_id, identity_of(self.db_path))
