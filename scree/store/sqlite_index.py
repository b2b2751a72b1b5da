"""The SQLite backend's file and connection layer: one apsw connection to an index file, its transactions, its meta
and what the index is (model, tables, size), read once per change of the file. Readers and writers build on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

import apsw

from scree.errors import IndexWriteError
from scree.store import searches
from scree.store.connection import empty_index, open_index
from scree.store.schema import META_DIMS, META_MODEL, VECTOR_BITS_TABLE, binary_quantizable, has_vector_table
from scree.store.sqlite_files import tighten_modes


def write_failure(db_path: Path, exc: apsw.Error) -> IndexWriteError:
    """The one line for a write the disk refused; the transaction is rolled back, so nothing is half written."""
    why = "the disk is full (or the file size limit was reached)" if isinstance(exc, apsw.FullError) else "I/O error"
    return IndexWriteError(f"cannot write the index {db_path}: {why}; nothing was lost, free some space and retry")


@dataclass(frozen=True, slots=True)
class Facts:
    """What the index is at one data_version: its model and its vector tables (every write needs them)."""

    version: int
    model: tuple[str, int] | None
    vectors: bool  # a vec0 table: a keyword-only index (0 dims) or one with no model yet has none
    sign_bits: bool  # sign bits beside the vectors: dims a multiple of 8
    vector_blocks: bool  # vec0's shadow tables, where the two-stage search reads candidates' vectors


@dataclass(frozen=True, slots=True)
class Size:
    """How big the index is at one data_version: only queries ask, so a writer's transactions never count rows."""

    version: int
    chunks: int
    two_stage: bool  # more sign-bit rows than an exact scan serves within the latency bar (searches.py)


class SqliteIndex:
    """An index file, open. Subclasses say what may be done with it: SqliteReader reads, SqliteWriter writes.

    A read-only open of a database that does not exist yet (or is still blank) gives an empty in-memory index
    with `exists` False: model() is None and every search returns [], so a search can say "no index yet".
    Open it again once a writer has built the index.
    """

    READONLY = True  # how open() opens the file

    def __init__(self, conn: apsw.Connection, db_path: Path, folder: str, *, readonly: bool, exists: bool) -> None:
        self._conn = conn
        self.db_path = db_path
        self.folder = folder
        self.readonly = readonly
        self._exists = exists
        self._modes_checked = False
        self._facts: Facts | None = None  # read again when another connection committed, or after our own writes
        self._size: Size | None = None  # likewise, for queries

    @classmethod
    def open(cls, db_path: Path, folder: Path) -> Self:
        """Open the index at `db_path` for `folder` (R-F2, R-F3): read-only for a reader; a writer's open creates
        and migrates it."""
        folder_text = str(folder.resolve())
        conn = open_index(db_path, folder_text, readonly=cls.READONLY)
        if conn is None:
            return cls(empty_index(folder_text), db_path, folder_text, readonly=True, exists=False)
        return cls(conn, db_path, folder_text, readonly=cls.READONLY, exists=True)

    @property
    def exists(self) -> bool:
        return self._exists

    @property
    def where(self) -> str:
        return str(self.db_path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- transactions and small helpers ---

    def _pragma_int(self, name: str) -> int:
        row = self._conn.execute(f"pragma {name}").fetchone()
        return int(row[0]) if row is not None and isinstance(row[0], int) else 0

    def _forget(self) -> None:
        """Our own commits do not move data_version: what was read of the index is read again."""
        self._facts = self._size = None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction; `begin immediate` takes the write lock up front so it cannot deadlock later."""
        if self.readonly:
            raise RuntimeError(f"index {self.db_path} is open read-only")
        try:
            self._conn.execute("begin immediate")
            try:
                yield
                self._conn.execute("commit")
            except BaseException:
                if not self._conn.get_autocommit():
                    self._conn.execute("rollback")
                raise
        except (apsw.FullError, apsw.IOError) as exc:  # issue 13: one line, and the rollback kept the old rows
            raise write_failure(self.db_path, exc) from None
        finally:
            self._forget()
        if not self._modes_checked:
            tighten_modes(self.db_path)
            self._modes_checked = True

    def _now(self) -> Facts:
        """What the index is now: read once per data_version (which moves when another connection commits), so a
        query runs its searches and no bookkeeping of its own."""
        row = self._conn.execute("pragma data_version").fetchone()
        version = int(row[0]) if row is not None else 0
        facts = self._facts
        if facts is None or facts.version != version:
            facts = self._facts = self._read_facts(version)
        return facts

    def _read_facts(self, version: int) -> Facts:
        identity, dims = self.get_meta(META_MODEL), self.get_meta(META_DIMS)
        model = None if identity is None or dims is None else (identity, int(dims))
        vectors = has_vector_table(self._conn)
        sign_bits = vectors and model is not None and binary_quantizable(model[1])
        return Facts(version, model, vectors, sign_bits, vectors and searches.has_vector_blocks(self._conn))

    def _sized(self) -> Size:
        """How many chunks, and whether a vector query takes two stages; counted once per data_version."""
        facts = self._now()
        size = self._size
        if size is None or size.version != facts.version:
            row = self._conn.execute("select count(*) from chunks").fetchone()
            chunks = int(row[0]) if row is not None else 0
            two_stage = False
            if facts.sign_bits and chunks > searches.EXACT_SEARCH_MAX_CHUNKS:
                bits = self._conn.execute(f"select count(*) from {VECTOR_BITS_TABLE}").fetchone()
                two_stage = bits is not None and int(bits[0]) > searches.EXACT_SEARCH_MAX_CHUNKS
            size = self._size = Size(facts.version, chunks, two_stage)
        return size

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("select value from meta where key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
