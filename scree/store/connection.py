"""Opening an index file: the private file, the apsw connection with sqlite-vec and its pragmas, the schema checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import apsw

from scree.content.cjk import apart_from_cjk, cjk_index_text
from scree.content.formats import keyword_text
from scree.errors import IndexCorruptError, IndexMismatchError
from scree.paths import FILE_MODE, ensure_private_dir
from scree.store.extension import vec0_path
from scree.store.schema import (
    CJK_FUNCTION,
    KEYWORD_FUNCTION,
    KEYWORD_HEADING_FUNCTION,
    META_FOLDER,
    SCHEMA_VERSION,
    NotAnIndexError,
    current_version,
    migrate,
)
from scree.store.sqlite_files import WAL, tighten_modes, wal_of

BUSY_TIMEOUT_MS = 5000  # R-S1: wait this long for another process's write lock before failing
WAL_AUTOCHECKPOINT_PAGES = 1000  # R-S1: bounded autocheckpoint (4 MB of 4 KB pages)
JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024  # a checkpointed WAL is truncated back to this
# Reading vectors through mmap instead of the page cache: at 10k chunks 11 ms -> 7 ms a query (bench.store_search).
MMAP_BYTES = 512 * 1024 * 1024
WRITER_CACHE_KIB = 512  # SQLite's default is 2000 KiB
BULK_CACHE_KIB = 8192  # while a whole folder is synced (SqliteWriter.bulk_cache): 4-16 MiB alike, 512 KiB slower


def _cjk_pairs(*args: Any) -> str:
    """SQL scree_cjk_pairs(text): what the CJK keyword table indexes for a chunk's text (its triggers call it)."""
    return cjk_index_text(args[0]) if isinstance(args[0], str) else ""


def _keyword_text(*args: Any) -> str:
    """SQL scree_keyword_text(path, text): what the word index weighs of a chunk (formats.keyword_text)."""
    path, text = args
    return keyword_text(path, text) if isinstance(path, str) and isinstance(text, str) else (text or "")


def _keyword_heading(*args: Any) -> str:
    """SQL scree_keyword_heading(heading): what the word index weighs of a chunk's heading (cjk.apart_from_cjk)."""
    return apart_from_cjk(args[0]) if isinstance(args[0], str) else ""


def register_functions(conn: apsw.Connection) -> None:
    """The SQL functions the index's triggers and views call: every connection to an index registers them."""
    conn.create_scalar_function(CJK_FUNCTION, _cjk_pairs, 1, deterministic=True)
    conn.create_scalar_function(KEYWORD_FUNCTION, _keyword_text, 2, deterministic=True)
    conn.create_scalar_function(KEYWORD_HEADING_FUNCTION, _keyword_heading, 1, deterministic=True)


def connect(target: str, readonly: bool, *, immutable: bool = False) -> apsw.Connection:
    """A connection to `target` (a path or ":memory:") with sqlite-vec loaded and the writer's or a reader's pragmas.

    `immutable` (read-only only) opens the file as SQLite's `immutable=1` URI: no -shm, no locks, no change
    detection, which is how a WAL index on a read-only file system can be read at all (see open_index)."""
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    if immutable:
        flags |= apsw.SQLITE_OPEN_URI
        target = f"{Path(target).absolute().as_uri()}?immutable=1"
    conn = apsw.Connection(target, flags=flags)
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(vec0_path())
        conn.enable_load_extension(False)
        register_functions(conn)
        if not readonly:
            conn.execute("pragma journal_mode = wal").fetchall()
            conn.execute("pragma synchronous = normal").fetchall()
            conn.execute(f"pragma wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}").fetchall()
            conn.execute(f"pragma journal_size_limit = {JOURNAL_SIZE_LIMIT_BYTES}").fetchall()
            # the writer reads little (hashes, cached vectors): a small page cache keeps its idle RSS down (§10)
            conn.execute(f"pragma cache_size = -{WRITER_CACHE_KIB}").fetchall()
        else:
            # readers only: mapped pages count in RSS, so the writer's memory would grow with the index (R-S3)
            conn.execute(f"pragma mmap_size = {MMAP_BYTES}").fetchall()
    except BaseException:
        conn.close()
        raise
    return conn


def create_private_file(db_path: Path) -> None:
    """Make the db's folder (0700, only when missing: an existing one may be the user's own) and the file (0600)."""
    if not db_path.parent.exists():
        ensure_private_dir(db_path.parent)
    if not db_path.exists():
        os.close(os.open(db_path, os.O_WRONLY | os.O_CREAT, FILE_MODE))


def open_index(db_path: Path, folder: str, *, readonly: bool) -> apsw.Connection | None:
    """Open (and unless `readonly`, create and migrate) the index at `db_path` for `folder` (R-F2, R-F3).

    None when a read-only open finds no index yet: no file, an empty one, or one still blank.
    """
    if readonly and (not db_path.exists() or db_path.stat().st_size == 0):
        return None
    if not readonly:
        try:
            create_private_file(db_path)
        except OSError as exc:
            raise IndexCorruptError(f"cannot create index {db_path}: {exc.strerror or exc}") from exc
    try:
        conn, blank = _open_and_prepare(db_path, folder, readonly=readonly, immutable=False)
    except apsw.CantOpenError as exc:
        if readonly and not writable_folder(db_path) and wal_of(db_path).exists():
            raise IndexCorruptError(
                f"cannot open index {db_path}: its folder is read-only and holds an unfinished write-ahead log "
                f"({db_path.name}{WAL}); run any scree command where the index can be written once to fold it in"
            ) from exc
        if not (readonly and unwritable_snapshot(db_path)):
            raise IndexCorruptError(f"cannot open index {db_path}: {exc}") from exc
        try:  # a complete index on a read-only file system or in a folder this user cannot write (issue 25)
            conn, blank = _open_and_prepare(db_path, folder, readonly=True, immutable=True)
        except apsw.Error as again:
            raise IndexCorruptError(f"cannot open index {db_path} (read-only, immutable): {again}") from again
    except apsw.Error as exc:
        raise IndexCorruptError(f"cannot open index {db_path}: {exc}") from exc
    if blank:
        conn.close()
        return None
    return conn


def _open_and_prepare(db_path: Path, folder: str, *, readonly: bool, immutable: bool) -> tuple[apsw.Connection, bool]:
    """connect + _prepare, closing the connection when the checks fail; (connection, blank)."""
    conn = connect(str(db_path), readonly, immutable=immutable)
    try:
        return conn, _prepare(conn, db_path, folder, readonly=readonly)
    except BaseException:
        conn.close()
        raise


def unwritable_snapshot(db_path: Path) -> bool:
    """May the index at `db_path` be read as an immutable snapshot? Yes when its folder cannot be written (a
    read-only mount such as a container's `:ro` volume, where even root cannot write, or a folder this user may not
    write), so SQLite cannot make the -shm file a WAL reader needs, and no -wal file is there: with none, every
    committed page is in the main file and no writer is at work on it (a writer keeps its -wal while open)."""
    return not writable_folder(db_path) and not wal_of(db_path).exists()


def writable_folder(db_path: Path) -> bool:
    """Can this process make files beside `db_path`? Not on a read-only mount, even as root (statvfs says so, and
    access(2) answers EROFS), nor in a folder the user lacks write permission on."""
    folder = db_path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return False
    except OSError:
        pass
    return os.access(folder, os.W_OK)


def empty_index(folder: str) -> apsw.Connection:
    """An in-memory index with the current schema and no rows, recorded as `folder`'s: what a search sees before
    a writer has built the real one."""
    conn = connect(":memory:", readonly=False)
    migrate(conn)
    conn.execute("insert into meta(key, value) values (?, ?)", (META_FOLDER, folder))
    return conn


def _prepare(conn: apsw.Connection, db_path: Path, folder: str, *, readonly: bool) -> bool:
    """Check the schema version (migrating when writable) and the folder; True for a blank read-only file."""
    version = current_version(conn)
    if version < 0:
        raise IndexCorruptError(f"{db_path} is not a scree index (it holds other tables); use another -db")
    if version > SCHEMA_VERSION:
        raise IndexCorruptError(
            f"index {db_path} was written by a newer scree (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade scree"
        )
    if readonly:
        if version == 0:
            return True
        if version < SCHEMA_VERSION:
            raise IndexCorruptError(
                f"index {db_path} has schema version {version}, this scree needs {SCHEMA_VERSION}: "
                "run any writing command (e.g. `scree reindex`) to upgrade it"
            )
    else:
        try:
            migrate(conn)
        except NotAnIndexError as exc:
            raise IndexCorruptError(f"{db_path} is not a scree index ({exc}); use another -db") from exc
        conn.execute("insert or ignore into meta(key, value) values (?, ?)", (META_FOLDER, folder))
        tighten_modes(db_path)
    row = conn.execute("select value from meta where key = ?", (META_FOLDER,)).fetchone()
    if row is not None and str(row[0]) != folder:
        raise IndexMismatchError(
            f"index {db_path} belongs to folder {row[0]}, not {folder}; use another -db (SCREE_DB) or remove that index"
        )
    return False
