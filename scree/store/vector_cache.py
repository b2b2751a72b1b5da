"""The machine-wide vector cache's SQLite file (issue 24, R-E7 across indexes): lookups, writes and LRU eviction.

One apsw connection to `<data home>/vectors/vectors-2.db`: WAL, a busy timeout and one IMMEDIATE transaction per write,
so writers of different indexes share it safely, and a writer killed at any moment leaves it consistent (SQLite's
journal). Errors are raised to the caller (writer_proc.machine_vectors decides to rebuild or to bypass), never
swallowed here. Keys, eviction amounts and the checks of a vector come from vector_cache_policy; this module only
runs the SQL.

Issue 34: every row carries a checksum of its key and vector, and get() hands out only rows that pass
vector_cache_policy.vector_fault (the others are named, for the caller to drop and embed again). The format's number
is in the file's name (index/folder.py), so two installed versions each keep their own file; a file whose format is
another's, or a symlink where the file or a companion should be, is NotOursError: used by nobody, deleted by nobody.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import apsw

from scree.paths import FILE_MODE, ensure_private_dir
from scree.store.sqlite_files import db_files
from scree.store.vector_cache_policy import row_checksum, rows_to_evict, vector_fault

CACHE_VERSION = 2  # pragma user_version of a cache this scree made, and the number in its file's name
BUSY_TIMEOUT_MS = 5000  # another writer's transaction is one batch of vectors: far shorter than this
WAL_AUTOCHECKPOINT_PAGES = 256  # 1 MB of 4 KB pages: the WAL stays small beside a bound of a few MB
JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024
CACHE_KIB = 512  # SQLite's page cache for this file: lookups are by key, the default 2000 KiB buys nothing
LOOKUP_BATCH = 500  # keys per select: under SQLite's variable limit

SCHEMA = """
create table if not exists vectors (
    id integer primary key,
    key blob not null unique,
    vector blob not null,
    checksum blob not null,
    used integer not null
);
create index if not exists vectors_used on vectors(used);
"""


class NotACacheError(Exception):
    """The file is a SQLite database, but not a vector cache at all: damaged, made again."""


class NotOursError(Exception):
    """A cache of another format (another scree version's), or a symlink where the cache should be: left alone."""


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def refuse_symlinks(path: Path) -> None:
    """NotOursError when the cache file or a companion is a symlink: SQLite would write through it into whatever it
    names (another application's database)."""
    for file in cache_files(path):
        if file.is_symlink():
            raise NotOursError(f"{file} is a symlink; scree writes its cache only into a file of its own")


def cache_files(path: Path) -> list[Path]:
    """The cache file and SQLite's companions beside it."""
    return db_files(path)


def size_on_disk(path: Path) -> int:
    """Bytes the cache takes now: the file and its WAL (0 when there is none)."""
    total = 0
    for file in cache_files(path):
        try:
            total += file.stat().st_size
        except OSError:
            continue
    return total


def remove_cache_files(path: Path) -> None:
    """Delete the cache and its companions (a corrupt cache, `scree index remove --vectors`)."""
    for file in cache_files(path):
        try:
            os.unlink(file)
        except FileNotFoundError:
            continue


class VectorCacheFile:
    """The open cache file. Not thread-safe: one per sync thread."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn

    @classmethod
    def open(cls, path: Path) -> VectorCacheFile:
        """Open or create the cache at `path` (folder 0700, files 0600); raises apsw.Error or NotACacheError."""
        if not path.parent.exists():  # an existing folder keeps its modes: one made read-only stays so (bypassed)
            ensure_private_dir(path.parent)
        refuse_symlinks(path)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | NOFOLLOW, FILE_MODE))
        except OSError as exc:
            if path.is_symlink():  # made between the check and the open
                raise NotOursError(f"{path} is a symlink; scree writes its cache only into a file of its own") from exc
            raise
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW)
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            found = conn.execute("pragma user_version").fetchall()[0][0]
            version = found if isinstance(found, int) else -1
            if version > CACHE_VERSION or 0 < version < CACHE_VERSION:
                raise NotOursError(f"cache format {version} (another scree version's); this scree uses {CACHE_VERSION}")
            if version not in (0, CACHE_VERSION):
                raise NotACacheError(f"cache version {version}, this scree makes {CACHE_VERSION}")
            # before the first table: freed pages can then be given back, so the file shrinks after an eviction
            conn.execute("pragma auto_vacuum = incremental").fetchall()
            conn.execute("pragma journal_mode = wal").fetchall()
            conn.execute("pragma synchronous = normal").fetchall()
            conn.execute(f"pragma cache_size = -{CACHE_KIB}").fetchall()
            conn.execute(f"pragma wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}").fetchall()
            conn.execute(f"pragma journal_size_limit = {JOURNAL_SIZE_LIMIT_BYTES}").fetchall()
            if version == 0:
                with conn:
                    conn.execute(SCHEMA)
                    conn.execute(f"pragma user_version = {CACHE_VERSION}")
            conn.execute("select id, key, vector, checksum, used from vectors limit 0").fetchall()  # the shape expected
        except BaseException:
            conn.close()
            raise
        for file in cache_files(path):
            try:
                if file.stat().st_mode & 0o777 != FILE_MODE:
                    os.chmod(file, FILE_MODE)
            except OSError:
                continue
        return cls(conn)

    @classmethod
    def open_readonly(cls, path: Path) -> VectorCacheFile:
        """Open an existing cache to read (`scree doctor`); raises apsw.Error, NotOursError or NotACacheError."""
        refuse_symlinks(path)
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_NOFOLLOW)
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            found = conn.execute("pragma user_version").fetchall()[0][0]
            if found != CACHE_VERSION:
                raise NotOursError(f"cache format {found}; this scree uses {CACHE_VERSION}")
            conn.execute("select id, key, vector, checksum, used from vectors limit 0").fetchall()
        except BaseException:
            conn.close()
            raise
        return cls(conn)

    def get(self, keys: Sequence[bytes], vector_bytes: int) -> tuple[dict[bytes, bytes], dict[bytes, str]]:
        """The stored vector of each key the cache holds whose row passes every check, and why each other row found
        failed (a read: no write lock, no wait on writers)."""
        found: dict[bytes, bytes] = {}
        bad: dict[bytes, str] = {}
        for start in range(0, len(keys), LOOKUP_BATCH):
            batch = keys[start : start + LOOKUP_BATCH]
            marks = ",".join("?" * len(batch))
            sql = f"select key, vector, checksum from vectors where key in ({marks})"
            for key, vector, checksum in self._conn.execute(sql, batch):
                key, vector = bytes(key), bytes(vector)
                fault = vector_fault(key, vector, bytes(checksum), vector_bytes)
                if fault is None:
                    found[key] = vector
                else:
                    bad[key] = fault
        return found, bad

    def sample(self, rows: int) -> tuple[int, int, dict[str, int]]:
        """`scree doctor`: (rows held, rows checked, how many of those failed, by reason), over a random sample."""
        total = self._number("select count(*) from vectors")
        sql = "select key, vector, checksum from vectors where id in (select id from vectors order by random() limit ?)"
        checked = 0
        faults: dict[str, int] = {}
        for key, vector, checksum in self._conn.execute(sql, (rows,)):
            checked += 1
            fault = vector_fault(bytes(key), bytes(vector), bytes(checksum))
            if fault is not None:
                faults[fault] = faults.get(fault, 0) + 1
        return total, checked, faults

    def put(
        self, items: Iterable[tuple[bytes, bytes]], touched: Iterable[bytes], bound: int, drop: Iterable[bytes] = ()
    ) -> int:
        """In one transaction: delete the `drop` keys (rows that failed their check), store `items` (key, vector;
        a row of the same key is replaced), mark `touched` keys as just used, and evict the least recently used rows
        when the file is over its high-water mark (vector_cache_policy); the rows evicted."""
        now = time.time_ns()
        self._conn.execute("begin immediate")  # the write lock first: no deadlock between two upgrading readers
        try:
            self._conn.executemany("delete from vectors where key = ?", ((key,) for key in drop))
            self._conn.executemany(
                "insert into vectors(key, vector, checksum, used) values (?, ?, ?, ?) on conflict(key) do update set"
                " vector = excluded.vector, checksum = excluded.checksum, used = excluded.used",
                ((key, vector, row_checksum(key, vector), now) for key, vector in items),
            )
            self._conn.executemany("update vectors set used = ? where key = ?", ((now, key) for key in touched))
            evicted = self._evict(bound)
        except BaseException:
            if not self._conn.getautocommit():
                self._conn.execute("rollback")
            raise
        self._conn.execute("commit")
        return evicted

    def _number(self, sql: str) -> int:
        value = self._conn.execute(sql).fetchall()[0][0]
        return value if isinstance(value, int) else 0

    def _used_bytes(self) -> int:
        """The file's pages in use (its size less the free pages an eviction left), in bytes."""
        pages = self._number("pragma page_count") - self._number("pragma freelist_count")
        return pages * self._number("pragma page_size")

    def _evict(self, bound: int) -> int:
        used = self._used_bytes()
        if used <= 0 or rows_to_evict(used, 1, bound) == 0:  # under the high-water mark: no count(*) needed
            return 0
        rows = self._number("select count(*) from vectors")
        evict = rows_to_evict(used, rows, bound)
        self._conn.execute("delete from vectors where id in (select id from vectors order by used limit ?)", (evict,))
        self._conn.execute("pragma incremental_vacuum").fetchall()
        return evict

    def stats(self) -> tuple[int, int]:
        """(rows, bytes of used pages), for tests and the bench."""
        return self._number("select count(*) from vectors"), self._used_bytes()

    def close(self) -> None:
        self._conn.close()
