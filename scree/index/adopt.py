"""Adopting a moved checkout (R-F2, R-E7): a new folder whose files an orphaned index (its folder gone) already
holds unchanged takes that index over, so its rows are reused instead of embedded again."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scree.config import Settings
from scree.content.files import FileContent, read_markdown
from scree.content.ignore import IgnorePolicy
from scree.errors import ScreeError
from scree.index.folder import DB_NAME, LOCK_NAME, db_files, read_root, write_root_file
from scree.index.lock import WriterLock
from scree.logs import get_logger
from scree.paths import ensure_private_dir
from scree.store import Store

log = get_logger(__name__)

ADOPT_MIN_SHARE = 0.5  # a moved checkout is adopted when at least half its files are in the old index unchanged


@dataclass(frozen=True, slots=True)
class Adopted:
    """A moved checkout's index taken over: where it was, and how many of the new folder's files it already held."""

    old_folder: str
    matched: int
    files: int


def _orphans(settings: Settings) -> Iterator[Path]:
    """Index folders beside this one whose folder no longer exists, with a db to take."""
    base = settings.index_dir.parent
    for entry in sorted(base.iterdir()) if base.is_dir() else ():
        if entry == settings.index_dir or not entry.is_dir() or entry.is_symlink():
            continue
        root = read_root(entry)
        if root and not Path(root).exists() and (entry / DB_NAME).is_file():
            yield entry


def _indexed_hashes(directory: Path, folder: str) -> dict[str, str]:
    try:
        with Store.open(directory / DB_NAME, Path(folder), readonly=True) as store:
            return {path: state.sha256 for path, state in store.files().items()}
    except ScreeError:
        return {}


def _matching(settings: Settings, paths: list[str], indexed: dict[str, str]) -> int:
    """How many of `paths` the index holds with the same content (by SHA-256, as the sync compares them)."""
    matched = 0
    for path in paths:
        if path not in indexed:
            continue
        content = read_markdown(settings.folder, path, settings.max_file_bytes)
        if isinstance(content, FileContent) and content.sha256 == indexed[path]:
            matched += 1
    return matched


def adopt_moved_index(settings: Settings) -> Adopted | None:
    """When this folder has no index yet and an index whose folder is gone holds most of its files unchanged, move
    that index here (db file, folder recorded in it, `root`), so the sync that follows reuses its rows and embeds
    only what differs. Nothing happens with --db, with an existing index, or when no orphan matches."""
    if settings.custom_db or settings.db_path.exists():
        return None
    orphans = list(_orphans(settings))
    if not orphans:
        return None
    paths = list(IgnorePolicy(settings.folder, settings.extensions).walk())
    need = max(1, int(len(paths) * ADOPT_MIN_SHARE + 0.999))
    best: tuple[int, Path, str] | None = None
    for directory in orphans:
        old_folder = read_root(directory)
        indexed = _indexed_hashes(directory, old_folder)
        if sum(1 for path in paths if path in indexed) < need:  # by path first: no reading for an unrelated index
            continue
        matched = _matching(settings, paths, indexed)
        if matched >= need and (best is None or matched > best[0]):
            best = (matched, directory, old_folder)
    if best is None:
        return None
    matched, directory, old_folder = best
    if not _move_index(directory, old_folder, settings):
        return None
    log.warning("reusing the index of a moved folder", old=old_folder, unchanged=matched, files=len(paths))
    return Adopted(old_folder, matched, len(paths))


def _move_index(directory: Path, old_folder: str, settings: Settings) -> bool:
    """Move the orphan's db into this folder's index directory and record the new folder in it; False when another
    process holds the orphan's lock (it is still in use: leave it)."""
    lock = WriterLock(directory / LOCK_NAME)
    if not lock.try_acquire():
        return False
    try:
        ensure_private_dir(settings.index_dir)
        for source in db_files(directory / DB_NAME):
            if source.exists():
                os.replace(source, settings.index_dir / source.name)
        with Store.open(settings.db_path, Path(old_folder)) as store:
            store.move_to(settings.folder)
        write_root_file(settings.index_dir, settings.folder)
        shutil.rmtree(directory)
    finally:
        lock.release()
    log.debug("moved index", old=old_folder, source=str(directory), target=str(settings.index_dir))
    return True
