"""SQLite's file set: an index (or cache) file and the companions SQLite keeps beside it, named in this one place."""

from __future__ import annotations

import os
from pathlib import Path

from scree.paths import FILE_MODE

WAL, SHM, JOURNAL = "-wal", "-shm", "-journal"
COMPANIONS = (WAL, SHM, JOURNAL)  # moved, removed and kept private with their db


def companion(db_path: Path, suffix: str) -> Path:
    return db_path.with_name(db_path.name + suffix)


def db_files(db_path: Path) -> list[Path]:
    """The db file and the companions SQLite may keep beside it."""
    return [db_path, *(companion(db_path, suffix) for suffix in COMPANIONS)]


def wal_of(db_path: Path) -> Path:
    """The write-ahead log of the db at `db_path` (there while a connection has it open, or after a crash)."""
    return companion(db_path, WAL)


def size_on_disk(db_path: Path) -> int:
    """Bytes the db takes now: the file and its companions (0 when there is none)."""
    total = 0
    for file in db_files(db_path):
        try:
            total += file.stat().st_size
        except OSError:
            continue
    return total


def remove_db(db_path: Path) -> None:
    """Delete the db and its companions; a missing one is fine."""
    for file in db_files(db_path):
        try:
            os.unlink(file)
        except FileNotFoundError:
            continue


def tighten_modes(db_path: Path) -> None:
    """Keep the db and its companions 0600 (R-F2); SQLite copies the db's mode, this makes sure."""
    for path in db_files(db_path):
        try:
            if path.stat().st_mode & 0o777 != FILE_MODE:
                os.chmod(path, FILE_MODE)
        except (FileNotFoundError, PermissionError):
            continue
