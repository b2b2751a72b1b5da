"""Adopting a moved checkout (R-F2, R-E7): a new folder whose files an orphaned index (its folder gone) already
holds unchanged takes that index over, so its rows are reused instead of embedded again.

An index holds a folder's text, so adoption asks for more than a shared file: the orphan must have been made by
the model this folder's index would record, most of the new folder's files and most of the orphan's must be the
same content, and only the rows of those files are kept, so no other text of the old folder is ever served here,
not even as a stale hit before the first sync."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scree.config import Settings
from scree.content.files import FileContent, read_markdown
from scree.content.ignore import IgnorePolicy
from scree.embedders.kinds import expected_identity
from scree.errors import ScreeError
from scree.index.folder import DB_NAME, LOCK_NAME, read_root, write_root_file
from scree.index.lock import WriterLock
from scree.logs import get_logger
from scree.paths import ensure_private_dir
from scree.store import SqliteReader, SqliteWriter
from scree.store.sqlite_files import db_files

log = get_logger(__name__)

ADOPT_MIN_SHARE = 0.6  # of the new folder's files, and of the orphan's, that must be the same content


@dataclass(frozen=True, slots=True)
class Adopted:
    """A moved checkout's index taken over: where it was, and how many of the new folder's files it already held."""

    old_folder: str
    matched: int
    files: int


@dataclass(frozen=True, slots=True)
class _Orphan:
    """An index folder whose folder is gone, as adoption weighs it."""

    directory: Path
    folder: str
    model: tuple[str, int] | None
    hashes: dict[str, str]  # path -> SHA-256 of the content it indexed


def _orphans(settings: Settings) -> Iterator[Path]:
    """Index folders beside this one whose folder no longer exists, with a db to take."""
    base = settings.index_dir.parent
    for entry in sorted(base.iterdir()) if base.is_dir() else ():
        if entry == settings.index_dir or not entry.is_dir() or entry.is_symlink():
            continue
        root = read_root(entry)
        if root and not Path(root).exists() and (entry / DB_NAME).is_file():
            yield entry


def _read_orphan(directory: Path) -> _Orphan | None:
    folder = read_root(directory)
    try:
        with SqliteReader.open(directory / DB_NAME, Path(folder)) as store:
            hashes = {path: state.sha256 for path, state in store.files().items()}
            return _Orphan(directory, folder, store.model(), hashes)
    except ScreeError:
        return None


def _matching(settings: Settings, paths: list[str], indexed: dict[str, str]) -> list[str]:
    """The `paths` the index holds with the same content (by SHA-256, as the sync compares them)."""
    matched = []
    for path in paths:
        if path not in indexed:
            continue
        content = read_markdown(settings.folder, path, settings.max_file_bytes)
        if isinstance(content, FileContent) and content.sha256 == indexed[path]:
            matched.append(path)
    return matched


def enough_in_common(matched: int, files: int, indexed: int) -> bool:
    """Pure: whether `matched` unchanged files make a moved checkout of a folder of `files` files and an index of
    `indexed`: most of each, so a small folder sharing one file never takes a large index over, nor the reverse."""
    return matched >= 1 and matched >= ADOPT_MIN_SHARE * files and matched >= ADOPT_MIN_SHARE * indexed


def adopt_moved_index(settings: Settings) -> Adopted | None:
    """When this folder has no index yet and an index whose folder is gone was made by the same model and holds
    most of its files unchanged (enough_in_common), move that index here (db file, folder recorded in it, `root`)
    with only those files' rows, so the sync that follows reuses them and embeds only what differs. Nothing happens
    with --db, with an existing index, or when no orphan qualifies."""
    if settings.custom_db or settings.db_path.exists():
        return None
    directories = list(_orphans(settings))
    if not directories:
        return None
    paths = list(IgnorePolicy(settings.folder, settings.extensions).walk())
    model = expected_identity(settings)
    best: tuple[list[str], _Orphan] | None = None
    for directory in directories:
        orphan = _read_orphan(directory)
        if orphan is None or orphan.model != model:
            continue
        named = sum(1 for path in paths if path in orphan.hashes)  # by path first: no reading for an unrelated index
        if not enough_in_common(named, len(paths), len(orphan.hashes)):
            continue
        matched = _matching(settings, paths, orphan.hashes)
        if enough_in_common(len(matched), len(paths), len(orphan.hashes)) and (
            best is None or len(matched) > len(best[0])
        ):
            best = (matched, orphan)
    if best is None:
        return None
    matched, orphan = best
    if not _move_index(orphan, set(matched), settings):
        return None
    log.warning("reusing the index of a moved folder", old=orphan.folder, unchanged=len(matched), files=len(paths))
    return Adopted(orphan.folder, len(matched), len(paths))


def _move_index(orphan: _Orphan, keep: set[str], settings: Settings) -> bool:
    """Move the orphan's db into this folder's index directory, drop the rows of every file but `keep`, and record
    the new folder in it; False when another process holds the orphan's lock (it is still in use: leave it)."""
    lock = WriterLock(orphan.directory / LOCK_NAME)
    if not lock.try_acquire():
        return False
    try:
        ensure_private_dir(settings.index_dir)
        for source in db_files(orphan.directory / DB_NAME):
            if source.exists():
                os.replace(source, settings.index_dir / source.name)
        with SqliteWriter.open(settings.db_path, Path(orphan.folder)) as store:
            store.delete_files(path for path in orphan.hashes if path not in keep)
            store.move_to(settings.folder)
        write_root_file(settings.index_dir, settings.folder)
        shutil.rmtree(orphan.directory)
    finally:
        lock.release()
    log.debug("moved index", old=orphan.folder, source=str(orphan.directory), target=str(settings.index_dir))
    return True
