"""The indexes on this machine (R-F2's `<data home>/indexes/<name>-<hash>/`): list them, remove them, and adopt a
moved checkout's index so its rows are reused instead of embedded again."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scree import replies
from scree.commands.progress import size_text
from scree.config import Settings
from scree.content.files import FileContent, read_markdown
from scree.content.ignore import IgnorePolicy
from scree.errors import ScreeError
from scree.index.lock import WriterLock, lock_holder
from scree.logs import get_logger
from scree.paths import ensure_private_dir, write_root_file
from scree.store import Store
from scree.store.connection import connect
from scree.store.schema import META_FOLDER

log = get_logger(__name__)

DB_NAME, LOCK_NAME, ROOT_NAME = "index.db", "writer.lock", "root"
DB_SUFFIXES = ("", "-wal", "-shm")  # the db file and SQLite's companions, moved together
ADOPT_MIN_SHARE = 0.5  # a moved checkout is adopted when at least half its files are in the old index unchanged


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """One index folder as `scree index list` shows it."""

    directory: Path
    folder: str  # from its `root` file ("" when it has none)
    size_bytes: int
    model: str | None = None
    files: int = 0
    chunks: int = 0
    last_sync: str | None = None
    writer_pid: int | None = None
    problem: str | None = None  # the index could not be read

    @property
    def folder_exists(self) -> bool:
        return bool(self.folder) and Path(self.folder).is_dir()


@dataclass(frozen=True, slots=True)
class Adopted:
    """A moved checkout's index taken over: where it was, and how many of the new folder's files it already held."""

    old_folder: str
    matched: int
    files: int


def indexes_dir(data_home: Path) -> Path:
    return data_home / "indexes"


def _size(directory: Path) -> int:
    total = 0
    for entry in directory.iterdir():
        try:
            total += entry.lstat().st_size
        except OSError:
            continue
    return total


def _root_of(directory: Path) -> str:
    try:
        return (directory / ROOT_NAME).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def describe(directory: Path) -> IndexInfo:
    """What one index folder holds, read-only; an unreadable index is described with its problem, never raised."""
    folder = _root_of(directory)
    size = _size(directory)
    pid = lock_holder(directory / LOCK_NAME)
    if not (directory / DB_NAME).is_file():
        return IndexInfo(directory, folder, size, writer_pid=pid, problem="no index.db")
    try:
        with Store.open(directory / DB_NAME, Path(folder or directory), readonly=True) as store:
            model = store.model()
            files, chunks = store.counts()
            return IndexInfo(
                directory,
                folder,
                size,
                model=model[0] if model else None,
                files=files,
                chunks=chunks,
                last_sync=store.last_sync(),
                writer_pid=pid,
            )
    except ScreeError as exc:
        return IndexInfo(directory, folder, size, writer_pid=pid, problem=" ".join(str(exc).split()))


def list_indexes(data_home: Path) -> list[IndexInfo]:
    """Every index folder under the data home, by folder path."""
    base = indexes_dir(data_home)
    if not base.is_dir():
        return []
    found = [describe(entry) for entry in base.iterdir() if entry.is_dir() and not entry.is_symlink()]
    return sorted(found, key=lambda info: (info.folder, info.directory.name))


def _same_place(a: str, b: Path) -> bool:
    return bool(a) and os.path.normpath(a) == os.path.normpath(b)


def find_index(data_home: Path, folder: Path) -> IndexInfo:
    """The index made for `folder` (which may be gone), or a one-line error naming how to see the others."""
    wanted = folder.resolve() if folder.exists() else Path(os.path.abspath(folder))
    for info in list_indexes(data_home):
        if _same_place(info.folder, wanted):
            return info
    raise ScreeError(f'no index for {wanted} on this machine ("scree index list" shows them)')


def remove_index(info: IndexInfo) -> None:
    """Delete one index folder; refused while a scree process holds its writer lock."""
    lock = WriterLock(info.directory / LOCK_NAME)
    if not lock.try_acquire():
        raise ScreeError(
            f"the index of {info.folder or info.directory} is in use by another scree process (pid "
            f"{lock.holder_pid() or 'unknown'}); stop it first"
        )
    try:
        shutil.rmtree(info.directory)
    finally:
        lock.release()


def remove_indexes(data_home: Path, folder: Path | None) -> list[str]:
    """`scree index remove FOLDER` (or, with None, `--missing`: every index whose folder is gone); a line for each
    index removed, or one saying there was none."""
    targets = (
        [find_index(data_home, folder)]
        if folder is not None
        else [info for info in list_indexes(data_home) if not info.folder_exists]
    )
    said = []
    for info in targets:
        remove_index(info)
        said.append(replies.index_removed(info.folder or str(info.directory), size_text(info.size_bytes)))
    return said or [replies.NO_MISSING_INDEX]


# --- adopting a moved checkout (a new index whose content an orphaned one already holds) ---


def _orphans(settings: Settings) -> Iterator[Path]:
    """Index folders beside this one whose folder no longer exists, with a db to take."""
    base = settings.index_dir.parent
    for entry in sorted(base.iterdir()) if base.is_dir() else ():
        if entry == settings.index_dir or not entry.is_dir() or entry.is_symlink():
            continue
        root = _root_of(entry)
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
        old_folder = _root_of(directory)
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
        for suffix in DB_SUFFIXES:
            source = directory / (DB_NAME + suffix)
            if source.exists():
                os.replace(source, settings.index_dir / (DB_NAME + suffix))
        conn = connect(str(settings.db_path), readonly=False)
        try:
            conn.execute("update meta set value = ? where key = ?", (str(settings.folder.resolve()), META_FOLDER))
        finally:
            conn.close()
        write_root_file(settings.index_dir, settings.folder)
        shutil.rmtree(directory)
    finally:
        lock.release()
    log.debug("moved index", old=old_folder, source=str(directory), target=str(settings.index_dir))
    return True


# --- what `scree index list` prints ---


def as_json(info: IndexInfo) -> dict[str, object]:
    return {
        "folder": info.folder or None,
        "folder_exists": info.folder_exists,
        "index": str(info.directory),
        "size_bytes": info.size_bytes,
        "model": info.model,
        "files": info.files,
        "chunks": info.chunks,
        "last_sync": info.last_sync,
        "writer_pid": info.writer_pid,
        "problem": info.problem,
    }


def state_of(info: IndexInfo) -> str:
    if info.problem is not None:
        return f"unreadable: {info.problem}"
    if not info.folder_exists:
        return "folder missing"
    if info.writer_pid is not None:
        return f"kept current by pid {info.writer_pid}"
    return "ok"


def render_list(infos: list[IndexInfo], base: Path) -> str:
    """A table of the indexes, then one line with their total size and where they are."""
    if not infos:
        return f"No indexes in {base}."
    header = ("FOLDER", "SIZE", "MODEL", "FILES", "CHUNKS", "LAST SYNC", "STATE")
    rows = [
        (
            info.folder or f"? ({info.directory.name})",
            size_text(info.size_bytes),
            info.model or "-",
            str(info.files),
            str(info.chunks),
            info.last_sync or "-",
            state_of(info),
        )
        for info in infos
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in (header, *rows)
    ]
    total = sum(info.size_bytes for info in infos)
    lines.append(f"{len(infos)} {'index' if len(infos) == 1 else 'indexes'}, {size_text(total)} in {base}")
    return "\n".join(lines)
