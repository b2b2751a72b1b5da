"""The indexes on this machine (R-F2's `<data home>/indexes/<name>-<hash>/`): describe, list and remove them."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from scree import replies
from scree.errors import ScreeError
from scree.index.folder import DB_NAME, LOCK_NAME, indexes_dir, read_root, vector_cache_path
from scree.index.lock import WriterLock, lock_holder
from scree.store import SqliteReader
from scree.store.vector_cache import remove_cache_files, size_on_disk


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


def _size(directory: Path) -> int:
    total = 0
    for entry in directory.iterdir():
        try:
            total += entry.lstat().st_size
        except OSError:
            continue
    return total


def describe(directory: Path) -> IndexInfo:
    """What one index folder holds, read-only; an unreadable index is described with its problem, never raised."""
    folder = read_root(directory)
    size = _size(directory)
    pid = lock_holder(directory / LOCK_NAME)
    if not (directory / DB_NAME).is_file():
        return IndexInfo(directory, folder, size, writer_pid=pid, problem="no index.db")
    try:
        with SqliteReader.open(directory / DB_NAME, Path(folder or directory)) as store:
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


@dataclass(frozen=True, slots=True)
class Removal:
    """What `scree index remove` did: lines for stdout, and one line for each index it could not remove."""

    said: list[str]
    refused: list[str]


def remove_indexes(data_home: Path, folder: Path | None) -> Removal:
    """`scree index remove FOLDER` (or, with None, `--missing`: every index whose folder is gone); a line for each
    index removed, or one saying there was none.

    With --missing (issue 25) an index folder without a `root` file is skipped, said so: nothing tells which folder
    it was made for, so nothing says that folder is gone. One in use is refused and the rest still removed."""
    if folder is not None:
        info = find_index(data_home, folder)
        remove_index(info)  # one index named: its refusal is the command's error
        return Removal([replies.index_removed(info.folder, replies.size_text(info.size_bytes))], [])
    said: list[str] = []
    refused: list[str] = []
    removed = 0
    for info in list_indexes(data_home):
        if not info.folder:
            said.append(replies.index_without_root(str(info.directory)))
            continue
        if info.folder_exists:
            continue
        try:
            remove_index(info)
        except ScreeError as exc:
            refused.append(str(exc))
            continue
        removed += 1
        said.append(replies.index_removed(info.folder, replies.size_text(info.size_bytes)))
    if not removed and not refused:
        said.append(replies.NO_MISSING_INDEX)
    return Removal(said, refused)


@dataclass(frozen=True, slots=True)
class VectorCacheInfo:
    """The machine-wide vector cache every index shares (issue 24), as `scree index list` shows it."""

    path: Path
    size_bytes: int
    bound_mb: float  # SCREE_VECTOR_CACHE_MB; 0: off

    def line(self) -> str:
        if self.bound_mb <= 0:
            return f"Vector cache: off (SCREE_VECTOR_CACHE_MB=0), {replies.size_text(self.size_bytes)} in {self.path}"
        return f"Vector cache: {replies.size_text(self.size_bytes)} of at most {self.bound_mb:g} MB in {self.path}"


def describe_vector_cache(data_home: Path, bound_mb: float) -> VectorCacheInfo:
    path = vector_cache_path(data_home)
    return VectorCacheInfo(path, size_on_disk(path), bound_mb)


def remove_vector_cache(data_home: Path) -> str:
    """`scree index remove --vectors`: delete the cache. A writer that has it open keeps its own (deleted) copy until
    its sync ends; the next sync makes a new one, so this never needs the writers stopped."""
    info = describe_vector_cache(data_home, 0)
    if not info.path.exists():
        return replies.no_vector_cache(str(info.path))
    remove_cache_files(info.path)
    return replies.vector_cache_removed(str(info.path), replies.size_text(info.size_bytes))


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
            replies.size_text(info.size_bytes),
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
    lines.append(f"{len(infos)} {'index' if len(infos) == 1 else 'indexes'}, {replies.size_text(total)} in {base}")
    return "\n".join(lines)
