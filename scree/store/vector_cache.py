"""The machine-wide vector cache's SQLite file (issue 24, R-E7 across indexes): lookups, writes and LRU eviction.

One apsw connection to `<data home>/vectors/vectors.db`: WAL, a busy timeout and one IMMEDIATE transaction per write,
so writers of different indexes share it safely, and a writer killed at any moment leaves it consistent (SQLite's
journal). Errors are raised to the caller (writer_proc.machine_vectors decides to rebuild or to bypass), never
swallowed here. Keys and eviction amounts come from vector_cache_policy; this module only runs the SQL.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import apsw

from scree.paths import FILE_MODE, ensure_private_dir
from scree.store.sqlite_files import db_files
from scree.store.vector_cache_policy import rows_to_evict

CACHE_VERSION = 1  # pragma user_version of a cache this scree made; any other is rebuilt
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
    used integer not null
);
create index if not exists vectors_used on vectors(used);
"""


class NotACacheError(Exception):
    """The file is a SQLite database, but not a vector cache this scree can use."""


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
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            found = conn.execute("pragma user_version").fetchall()[0][0]
            version = found if isinstance(found, int) else -1
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
            conn.execute("select id, key, vector, used from vectors limit 0").fetchall()  # the shape this expects
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

    def get(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored vector of each key the cache holds (a read: no write lock, no wait on writers)."""
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), LOOKUP_BATCH):
            batch = keys[start : start + LOOKUP_BATCH]
            marks = ",".join("?" * len(batch))
            for key, vector in self._conn.execute(f"select key, vector from vectors where key in ({marks})", batch):
                found[bytes(key)] = bytes(vector)
        return found

    def put(self, items: Iterable[tuple[bytes, bytes]], touched: Iterable[bytes], bound: int) -> int:
        """In one transaction: store `items` (key, vector), mark `touched` keys as just used, and evict the least
        recently used rows when the file is over its high-water mark (vector_cache_policy); the rows evicted."""
        now = time.time_ns()
        self._conn.execute("begin immediate")  # the write lock first: no deadlock between two upgrading readers
        try:
            self._conn.executemany(
                "insert into vectors(key, vector, used) values (?, ?, ?) on conflict(key) do update set used = ?",
                ((key, vector, now, now) for key, vector in items),
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
