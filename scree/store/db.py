"""The Store: one apsw connection to a folder's index, how it is opened to write, its meta, its writes (one
transaction per call) and its queries; what the index is (model, tables, size) is read once per change of the file."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import apsw

from scree.content.chunking import EMBED_FORMAT
from scree.errors import IndexMismatchError, IndexWriteError, ScreeError
from scree.logs import get_logger
from scree.store import searches, writes
from scree.store.connection import BULK_CACHE_KIB, WRITER_CACHE_KIB, empty_index, open_index, tighten_modes
from scree.store.integrity import check_integrity
from scree.store.keywords import SplitQuery, cjk_match_expression, fts_match_terms, split_query, wide_split
from scree.store.records import FileState, NewChunk, StoredChunk
from scree.store.schema import (
    CJK_TABLE,
    FTS_TOKENIZER_ARGS,
    META_DIMS,
    META_FIRST_SYNC_DONE,
    META_FOLDER,
    META_LAST_ERROR,
    META_LAST_SYNC,
    META_MODEL,
    TEXT_START_EXPR,
    VECTOR_BITS_TABLE,
    VECTOR_TABLE,
    binary_quantizable,
    has_vector_table,
    vector_table_ddl,
)
from scree.store.sign_bits import SignBits

if TYPE_CHECKING:
    from scree.embedders.base import Embedder

log = get_logger(__name__)

PathFilter = Callable[[str], bool]  # which files a search may return, by relative path (R-M10's scope)

SQL_BATCH = 500  # ids or hashes per `in (...)` list
MAX_COUNTED_TERMS = 4096  # terms whose matches a Store remembers between two changes of the index
REINDEX_HINT = "run `scree reindex --all` to rebuild it"
EMBED_FORMAT_KEY = "embed_format"
FIRST_EMBED_FORMAT = "1"  # what an index without the meta row was made with

_CHUNK_COLUMNS = "id, path, ordinal, heading, text, start_line, end_line, text_hash"


def _chunk(row: Sequence[Any]) -> StoredChunk:
    return StoredChunk(
        id=int(row[0]),
        path=str(row[1]),
        ordinal=int(row[2]),
        heading=str(row[3]),
        text=str(row[4]),
        start_line=int(row[5]),
        end_line=int(row[6]),
        text_hash=str(row[7]),
    )


def _batches(values: Iterable[Any]) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) == SQL_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def write_failure(db_path: Path, exc: apsw.Error) -> IndexWriteError:
    """The one line for a write the disk refused; the transaction is rolled back, so nothing is half written."""
    why = "the disk is full (or the file size limit was reached)" if isinstance(exc, apsw.FullError) else "I/O error"
    return IndexWriteError(f"cannot write the index {db_path}: {why}; nothing was lost, free some space and retry")


def _placeholders(count: int) -> str:
    return ",".join("?" * count)


RECLAIM_SHARE = 0.25  # vacuum once a quarter of the file's pages are free ...
RECLAIM_MIN_BYTES = 1 << 20  # ... and they come to a MiB at least: smaller indexes are not worth the rewrite


@dataclass(frozen=True, slots=True)
class IndexRecord:
    """An index's own word on its progress (Store.record_of)."""

    complete: bool = False  # a first sync of the whole folder finished
    files: int = 0


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the index is at one data_version: its model and its vector tables (every write needs them)."""

    version: int
    model: tuple[str, int] | None
    vectors: bool  # a vec0 table: a keyword-only index (0 dims) or one with no model yet has none
    sign_bits: bool  # sign bits beside the vectors: dims a multiple of 8
    vector_blocks: bool  # vec0's shadow tables, where the two-stage search reads candidates' vectors


@dataclass(frozen=True, slots=True)
class _Size:
    """How big the index is at one data_version: only queries ask, so a writer's transactions never count rows."""

    version: int
    chunks: int
    two_stage: bool  # more sign-bit rows than an exact scan serves within the latency bar (searches.py)


class Store:
    """A folder's index. Open with Store.open(); use as a context manager or call close().

    A read-only open of a database that does not exist yet (or is still blank) gives an empty in-memory store
    with `exists` False: model() is None and every search returns [], so a search can say "no index yet".
    Open it again once a writer has built the index.
    """

    def __init__(self, conn: apsw.Connection, db_path: Path, folder: str, *, readonly: bool, exists: bool) -> None:
        self._conn = conn
        self.db_path = db_path
        self.folder = folder
        self.readonly = readonly
        self.exists = exists
        self._modes_checked = False
        self._bulk_wanted = self._bulk_on = False  # bulk_cache(): asked for, and in effect
        self._facts: _Facts | None = None  # read again when another connection committed, or after our own writes
        self._size: _Size | None = None  # likewise, for queries
        self._sign_bits: tuple[int, SignBits] | None = None  # (data_version, every chunk's sign bits) when two-stage
        self._term_hits: tuple[int, int, dict[str, int]] | None = None  # (data_version, rows, rows per term)
        self._stemmer: Any = None  # the FTS5 tokenizer, made on first use by stems()
        self._filters: dict[str, PathFilter] = {}  # the path filters of the searches running now, by SQL token
        self._tokens = itertools.count(1)
        conn.create_scalar_function(searches.SCOPE_FUNCTION, self._in_filter, 2, deterministic=True)

    def _in_filter(self, *args: Any) -> int:
        """SQL scree_in_scope(token, path): 1 when the filter the running search registered as `token` keeps the
        file at `path` (R-M10)."""
        token, path = args
        within = self._filters.get(token) if isinstance(token, str) else None
        return 1 if within is not None and isinstance(path, str) and within(path) else 0

    @contextmanager
    def _filtered(self, within: PathFilter | None) -> Iterator[str | None]:
        """The SQL token of `within` while one search runs (None without a filter)."""
        if within is None:
            yield None
            return
        token = str(next(self._tokens))
        self._filters[token] = within
        try:
            yield token
        finally:
            del self._filters[token]

    # --- opening ---

    @classmethod
    def open(cls, db_path: Path, folder: Path, *, readonly: bool = False) -> Store:
        """Open (and unless `readonly`, create and migrate) the index at `db_path` for `folder` (R-F2, R-F3)."""
        folder_text = str(folder.resolve())
        conn = open_index(db_path, folder_text, readonly=readonly)
        if conn is None:
            return cls._empty(db_path, folder_text)
        return cls(conn, db_path, folder_text, readonly=readonly, exists=True)

    @classmethod
    def _empty(cls, db_path: Path, folder: str) -> Store:
        return cls(empty_index(folder), db_path, folder, readonly=True, exists=False)

    @classmethod
    def record_of(cls, db_path: Path, folder: Path) -> IndexRecord:
        """What the index at `db_path` records of its progress: whether a first sync finished, how many files it
        holds; nothing when it cannot be read (or is not there). The reader's note reads it while no writer has
        reported yet, and while a first sync runs, so its count keeps up with what a search finds (R-M5)."""
        if not db_path.exists():
            return IndexRecord()
        try:
            with cls.open(db_path, folder, readonly=True) as store:
                return IndexRecord(store.is_complete(), store.counts()[0])
        except (ScreeError, apsw.Error):  # a busy, locked or damaged file reads as no record, as the docstring says
            return IndexRecord()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def reclaim_space(self) -> bool:
        """Give the pages of removed files back to the file system (issue 25: the index never shrank): a VACUUM
        when free pages are at least RECLAIM_SHARE of the file and RECLAIM_MIN_BYTES, then a truncating checkpoint.
        Runs between syncs (a VACUUM cannot run inside a transaction); a reader's snapshot only delays the shrink.
        True when it vacuumed."""
        if self.readonly:
            return False
        pages, free, page_size = (self._pragma_int(name) for name in ("page_count", "freelist_count", "page_size"))
        if pages == 0 or free < pages * RECLAIM_SHARE or free * page_size < RECLAIM_MIN_BYTES:
            return False
        try:
            self._conn.execute("vacuum")
            self._conn.execute("pragma wal_checkpoint(truncate)").fetchall()
        except apsw.BusyError:  # another connection mid-transaction: the next sync that removes files tries again
            return False
        except (apsw.FullError, apsw.IOError) as exc:  # no room for the copy VACUUM writes: one line (issue 13)
            raise write_failure(self.db_path, exc) from None
        finally:
            self._facts = self._size = None
        return True

    # --- transactions and small helpers ---

    def _pragma_int(self, name: str) -> int:
        row = self._conn.execute(f"pragma {name}").fetchone()
        return int(row[0]) if row is not None and isinstance(row[0], int) else 0

    @contextmanager
    def bulk_cache(self) -> Iterator[None]:
        """While a whole folder is synced: once rows are written, a larger page cache (the chunk, FTS and vector
        B-tree pages stay cached: a fifth less CPU); after, the small one again with its memory freed. A sync that
        writes nothing (a watching writer's catch-up) never grows it, so the writer idles small (SPEC §10); the
        pages it read are freed too (a catch-up of 10,000 notes filled the small cache: 0.5 MB of an idle writer)."""
        self._bulk_wanted = True
        try:
            yield
        finally:
            self._bulk_wanted = False
            if self._bulk_on:
                self._bulk_on = False
                self._conn.execute(f"pragma cache_size = -{WRITER_CACHE_KIB}").fetchall()
            self._conn.execute("pragma shrink_memory").fetchall()

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
            self._facts = self._size = None  # our own commits do not move data_version
            self._sign_bits = self._term_hits = None
        if not self._modes_checked:
            tighten_modes(self.db_path)
            self._modes_checked = True

    def _now(self) -> _Facts:
        """What the index is now: read once per data_version (which moves when another connection commits), so a
        query runs its searches and no bookkeeping of its own."""
        row = self._conn.execute("pragma data_version").fetchone()
        version = int(row[0]) if row is not None else 0
        facts = self._facts
        if facts is None or facts.version != version:
            facts = self._facts = self._read_facts(version)
        return facts

    def _read_facts(self, version: int) -> _Facts:
        identity, dims = self.get_meta(META_MODEL), self.get_meta(META_DIMS)
        model = None if identity is None or dims is None else (identity, int(dims))
        vectors = has_vector_table(self._conn)
        sign_bits = vectors and model is not None and binary_quantizable(model[1])
        return _Facts(version, model, vectors, sign_bits, vectors and searches.has_vector_blocks(self._conn))

    def _sized(self) -> _Size:
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
            size = self._size = _Size(facts.version, chunks, two_stage)
        return size

    # --- meta (R-S1, R-L0) ---

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("select value from meta where key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def move_to(self, folder: Path) -> None:
        """Record that this index is now `folder`'s (a moved checkout adopted it: scree.index.adopt); it is not
        complete for that folder until a sync of it finishes (R-M5)."""
        folder_text = str(folder.resolve())
        with self._transaction():
            self._conn.execute("update meta set value = ? where key = ?", (folder_text, META_FOLDER))
            self._conn.execute("delete from meta where key = ?", (META_FIRST_SYNC_DONE,))
        self.folder = folder_text

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction():
            self._conn.execute("insert or replace into meta(key, value) values (?, ?)", (key, value))

    def is_complete(self) -> bool:
        """Whether a sync of the whole folder has finished with nothing deferred (R-M5: the index is complete)."""
        return self.get_meta(META_FIRST_SYNC_DONE) == "1"

    def last_sync(self) -> str | None:
        """When the last sync of the whole folder ended (UTC, ISO 8601), None before the first."""
        return self.get_meta(META_LAST_SYNC)

    def record_full_sync(self, *, complete: bool) -> None:
        """A sync of the whole folder ended now; `complete`: nothing was deferred, so the first sync is done."""
        with self._transaction():
            if complete:
                self._conn.execute("insert or replace into meta(key, value) values (?, '1')", (META_FIRST_SYNC_DONE,))
            self._conn.execute(
                "insert or replace into meta(key, value) values (?, ?)",
                (META_LAST_SYNC, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            )

    def last_error(self) -> str | None:
        """R-L0: the outage the last sync ended in, or None when the last complete sync had none."""
        return self.get_meta(META_LAST_ERROR) or None

    def record_last_error(self, error: str) -> None:
        """R-L0: the outage a sync ended in ("" once one ran through); one read, and a write only when it changed."""
        if (self.get_meta(META_LAST_ERROR) or "") != error:
            self.set_meta(META_LAST_ERROR, error)

    # --- model (R-F3) ---

    def model(self) -> tuple[str, int] | None:
        """(model identity, dimensions) the index was built with; None for a new index."""
        return self._now().model

    def prepare(self, embedder: Embedder) -> None:
        """Record the embedder on a new index, or refuse one made by another model (R-F3); a keyword-only index
        has no vectors to lose, so once a model exists it is rebuilt with vectors."""
        from scree.embedders.base import KEYWORD_ONLY

        recorded = self.model()
        if recorded is None:
            self.set_model(embedder.identity, embedder.dims)
        elif recorded[0] == KEYWORD_ONLY and embedder.identity != KEYWORD_ONLY:
            log.info("keyword-only index gets vectors now", model=embedder.identity)
            self.reset(embedder.identity, embedder.dims)
        else:
            self.check_model(embedder.identity, embedder.dims)

    def _mismatch(self, recorded: tuple[str, int], identity: str, dims: int) -> IndexMismatchError:
        return IndexMismatchError(
            f"index {self.db_path} was built with model {recorded[0]} ({recorded[1]} dims), not {identity} "
            f"({dims} dims); {REINDEX_HINT}"
        )

    def embed_format(self) -> str:
        """Which version of the embedded text (chunking.EMBED_FORMAT) the index's vectors and headings were made
        from; an index made before the version was recorded holds the first."""
        return self.get_meta(EMBED_FORMAT_KEY) or FIRST_EMBED_FORMAT

    def check_model(self, identity: str, dims: int) -> None:
        """Raise IndexMismatchError when the index records another model, dimension count or embedded-text format:
        new rows beside old ones would mix vectors of two kinds of text (R-F3)."""
        recorded = self.model()
        if recorded is not None and recorded != (identity, dims):
            raise self._mismatch(recorded, identity, dims)
        if recorded is not None and self.embed_format() != EMBED_FORMAT:
            raise IndexMismatchError(
                f"index {self.db_path} was built by an older scree (embedded text format {self.embed_format()}, "
                f"now {EMBED_FORMAT}: headings without anchors, links without targets, code blocks cut to their first "
                f"lines); {REINDEX_HINT}"
            )

    def set_model(self, identity: str, dims: int) -> None:
        """Record the model of a new index and create its vector table; the same model again is a no-op."""
        ddl = vector_table_ddl(dims) if dims else None  # 0 dims: a keyword-only index has no vector table
        with self._transaction():
            recorded = self.model()
            if recorded is not None:
                if recorded != (identity, dims):
                    raise self._mismatch(recorded, identity, dims)
                return
            self._conn.execute(f"drop table if exists {VECTOR_TABLE}")
            if ddl:
                self._conn.execute(ddl)
            self._record_model(identity, dims)

    def reset(self, identity: str, dims: int) -> None:
        """`reindex -all`: drop every file, chunk, vector and keyword row and start over with this model.

        last_sync and first_sync_done go too: the index is empty until the rebuild's sync finishes.
        """
        ddl = vector_table_ddl(dims) if dims else None
        with self._transaction():
            self._conn.execute("delete from chunks")
            self._conn.execute("delete from files")
            self._conn.execute(f"drop table if exists {VECTOR_TABLE}")
            if ddl:
                self._conn.execute(ddl)
            self._conn.execute("delete from meta where key in (?, ?)", (META_LAST_SYNC, META_FIRST_SYNC_DONE))
            self._record_model(identity, dims)

    def replace_with(self, other: Store) -> None:
        """`reindex -all`: make this index an exact copy of `other` (built beside it) in one step, through SQLite's
        backup: a reader sees the old index or the new one, and a failure part way leaves the old one whole."""
        try:
            with self._conn.backup("main", other._conn, "main") as backup:
                while not backup.step(-1):
                    pass
        except (apsw.FullError, apsw.IOError) as exc:
            raise write_failure(self.db_path, exc) from None

    def _record_model(self, identity: str, dims: int) -> None:
        self._conn.executemany(
            "insert or replace into meta(key, value) values (?, ?)",
            [(META_MODEL, identity), (META_DIMS, str(dims)), (EMBED_FORMAT_KEY, EMBED_FORMAT)],
        )

    # --- files ---

    def paths(self) -> Iterator[str]:
        """Every indexed path, streamed: a full sync checks them without holding a row object per file."""
        for row in self._conn.execute("select path from files"):
            yield str(row[0])

    def files(self) -> dict[str, FileState]:
        rows = self._conn.execute("select path, sha256, mtime_ns, size from files")
        return {str(row[0]): FileState(str(row[0]), str(row[1]), int(row[2]), int(row[3])) for row in rows}

    def file_state(self, path: str) -> FileState | None:
        row = self._conn.execute("select path, sha256, mtime_ns, size from files where path = ?", (path,)).fetchone()
        return None if row is None else FileState(str(row[0]), str(row[1]), int(row[2]), int(row[3]))

    def touch_file(self, state: FileState) -> None:
        """The content hash is unchanged: record the new mtime and size only."""
        with self._transaction():
            self._conn.execute(
                "update files set mtime_ns = ?, size = ? where path = ?", (state.mtime_ns, state.size, state.path)
            )

    # --- writes (R-S2) ---

    def _check_vectors(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> None:
        if not any(chunks for _state, chunks in items):
            return
        recorded = self.model()
        if recorded is None:
            raise RuntimeError("set_model() must record the model before chunks are written")
        want = recorded[1] * 4
        for state, chunks in items:
            for chunk in chunks:
                if len(chunk.vector) != want:
                    raise IndexMismatchError(
                        f"a vector for {state.path} has {len(chunk.vector) // 4} dims, the index has "
                        f"{recorded[1]}; {REINDEX_HINT}"
                    )

    def _grow_cache_if_bulk(self) -> None:
        """Under bulk_cache(), the larger page cache from the first rows written on."""
        if self._bulk_wanted and not self._bulk_on:
            self._conn.execute(f"pragma cache_size = -{BULK_CACHE_KIB}").fetchall()
            self._bulk_on = True

    def replace_files(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> None:
        """R-S2: swap each file's old rows for these, all in one transaction (each file fully old or fully new after a
        kill); batched small files cost one commit, not one each."""
        self._check_vectors(items)
        self._grow_cache_if_bulk()
        with self._transaction():
            facts = self._now()
            writes.write_files(self._conn, items, vectors=facts.vectors, sign_bits=facts.sign_bits)

    @contextmanager
    def file_in_parts(self, state: FileState) -> Iterator[Callable[[Sequence[NewChunk]], None]]:
        """R-S2 for a file too large to hold whole: its old rows go and its new ones are added part by part through
        the function this yields, all in one transaction, committed when the block ends and rolled back (old rows
        kept) when it raises."""
        self._grow_cache_if_bulk()
        with self._transaction():
            facts = self._now()
            old_ids = writes.start_file(self._conn, state)

            def add(chunks: Sequence[NewChunk]) -> None:
                self._check_vectors([(state, chunks)])
                writes.add_chunks(self._conn, [(state.path, c) for c in chunks], facts.vectors, facts.sign_bits)

            yield add
            writes.end_file(self._conn, old_ids, vectors=facts.vectors)

    def delete_files(self, paths: Iterable[str]) -> int:
        """Remove these files' rows in one transaction; returns how many files the index held."""
        with self._transaction():
            vectors = self._now().vectors
            return sum(writes.delete_file(self._conn, path, vectors=vectors) for path in dict.fromkeys(paths))

    # --- queries ---

    def _searchable(self, vector: bytes, limit: int) -> int | None:
        """The index's dimensions when a vector query can run (a model, a vec0 table, limit > 0), else None."""
        facts = self._now()
        recorded = facts.model
        if limit <= 0 or recorded is None or not facts.vectors:
            return None
        if len(vector) != recorded[1] * 4:
            raise IndexMismatchError(
                f"the query vector has {len(vector) // 4} dims, the index has {recorded[1]}; {REINDEX_HINT}"
            )
        return recorded[1]

    def vector_search(self, vector: bytes, limit: int, within: PathFilter | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the `limit` nearest chunks (at most 4096), nearest first.

        Exact up to EXACT_SEARCH_MAX_CHUNKS chunks; above that, two_stage_vector_search. With `within`, the nearest
        chunks of the files it keeps, found exactly.
        """
        dims = self._searchable(vector, limit)
        if dims is None:
            return []
        if within is not None:
            with self._filtered(within) as token:
                return searches.exact_nearest(self._conn, vector, limit, token)
        if binary_quantizable(dims) and self._sized().two_stage:
            return self._two_stage(vector, limit)
        return searches.exact_nearest(self._conn, vector, limit)

    def _two_stage(self, vector: bytes, limit: int) -> list[tuple[int, float]]:
        """The two-stage search from memory (searches.two_stage_from_memory) where vec0's blocks can be read."""
        bits = self._bits() if self._now().vector_blocks else None
        if bits is None or not bits.located:
            return searches.two_stage_nearest(self._conn, vector, limit)
        return searches.two_stage_from_memory(self._conn, vector, limit, bits)

    def _bits(self) -> SignBits:
        """Every chunk's sign bits (and where vec0 keeps each vector, if it keeps them as sqlite-vec 0.1 does), read
        again when another connection committed (or after our own writes)."""
        version = self._now().version
        if self._sign_bits is None or self._sign_bits[0] != version:
            bits = SignBits.load(self._conn, places=self._now().vector_blocks)
            if bits.located:
                held = (bits.blocks >= 0).nonzero()[0]
                probe = [int(held[0]), int(held[-1])] if len(held) else []
                if not searches.places_hold_vectors(
                    self._conn,
                    bits.ids[probe].tolist(),
                    bits.blocks[probe].tolist(),
                    bits.offsets[probe].tolist(),
                ):
                    log.warning("vec0 keeps its vectors in a layout this scree does not read; searching in SQL")
                    bits = SignBits.load(self._conn, places=False)
            self._sign_bits = (version, bits)
        return self._sign_bits[1]

    def exact_vector_search(self, vector: bytes, limit: int) -> list[tuple[int, float]]:
        """vector_search by a full scan of the vec0 table, whatever the index size."""
        if self._searchable(vector, limit) is None:
            return []
        return searches.exact_nearest(self._conn, vector, limit)

    def two_stage_vector_search(self, vector: bytes, limit: int) -> list[tuple[int, float]]:
        """vector_search over the OVERSAMPLE x limit chunks nearest by sign bits, ranked by exact cosine distance.

        The distances are exact; a true neighbour whose sign bits differ a lot from the query's can be missed.
        """
        dims = self._searchable(vector, limit)
        if dims is None or not binary_quantizable(dims):
            return self.exact_vector_search(vector, limit)
        return self._two_stage(vector, limit)

    def binary_candidates(self, vector: bytes, count: int) -> list[int]:
        """Stage 1 of two_stage_vector_search alone: ids of the `count` chunks nearest by Hamming distance."""
        dims = self._searchable(vector, count)
        if dims is None or not binary_quantizable(dims):
            return []
        return self._bits().nearest(searches.query_bits(self._conn, vector), count)

    def keyword_lists(
        self, query: str, limit: int, within: PathFilter | None = None, *, floor_alone: bool = True
    ) -> list[list[tuple[int, float]]]:
        """One ranked list per keyword index the query reaches: (chunk id, score) by FTS5 bm25 over heading and
        text, best first; score is -bm25 (higher is better). With `within`, only chunks of the files it keeps.

        `floor_alone` False: on an index of SPLIT_MIN_ROWS chunks or more, chunks that match only words found in
        half of the chunks or more (FTS5 weighs those 1e-6) are left out, as a hybrid search has its vector list
        to rank them; ranking them all cost 70-100 ms at 100k chunks (keywords.split_query).

        The word index's list when the query has words; with CJK text in it, the CJK table's list of its character
        pairs after it (scree.store.keywords); none for a query with neither. Fusing them is the search's decision
        (scree.search.ranking)."""
        if limit <= 0:
            return []
        terms, pairs = fts_match_terms(query), cjk_match_expression(query)
        with self._filtered(within) as token:
            lists = [self._word_matches(terms, limit, token, floor_alone)] if terms else []
            if pairs is not None:
                lists.append(searches.keyword_matches(self._conn, pairs, limit, token, table=CJK_TABLE))
            return lists

    def _word_matches(
        self, terms: list[str], limit: int, token: str | None, floor_alone: bool
    ) -> list[tuple[int, float]]:
        """The OR-query of `terms` over the word index; split (keywords.split_query) where that ranks fewer rows:
        first setting apart its most frequent words, then only its floor-weight ones, then not at all."""
        for split in self._splits(terms, limit):
            found, whole = searches.split_matches(self._conn, split, limit, token)
            if whole or (split.floor_only and not floor_alone):
                return found
        return searches.keyword_matches(self._conn, " OR ".join(terms), limit, token)

    def _splits(self, terms: list[str], limit: int) -> list[SplitQuery]:
        """The splits worth trying of a large index's OR-query of `terms`, widest first; what each term matches is
        counted once per change of the index (a word in every chunk: 4 ms at 100k)."""
        version = self._now().version
        if self._term_hits is None or self._term_hits[0] != version:
            self._term_hits = (version, searches.keyword_rows(self._conn), {})
        _, rows, hits = self._term_hits
        if rows < searches.SPLIT_MIN_ROWS:
            return []
        if len(hits) > MAX_COUNTED_TERMS:
            hits.clear()
        for term in terms:
            if term not in hits:
                hits[term] = searches.term_hits(self._conn, term)
        counts = [hits[term] for term in terms]
        splits = [wide_split(terms, counts, rows, limit), split_query(terms, counts, rows)]
        return [split for split in splits if split is not None]

    def stems(self, text: str) -> list[str]:
        """`text` as the keyword index's tokenizer sees it (lower case, accents folded, Porter stems), in order."""
        if self._stemmer is None:
            self._stemmer = self._conn.fts5_tokenizer(*FTS_TOKENIZER_ARGS)
        tokens = self._stemmer(
            text.encode("utf-8", "replace"),
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=False,
            include_colocated=False,
        )
        return [str(token) for token in tokens]

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """R-E7: a stored vector for each text hash the index already has (any chunk with that hash)."""
        found: dict[str, bytes] = {}
        if not self._now().vectors:
            return found
        for batch in _batches(dict.fromkeys(hashes)):
            rows = self._conn.execute(
                f"select text_hash, min(id) from chunks where text_hash in ({_placeholders(len(batch))}) "
                "group by text_hash",
                batch,
            ).fetchall()
            for text_hash, chunk_id in rows:
                row = self._conn.execute(
                    f"select embedding from {VECTOR_TABLE} where chunk_id = ?", (chunk_id,)
                ).fetchone()
                if row is not None:
                    found[str(text_hash)] = bytes(row[0])
        return found

    def chunks_by_ids(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids that still exist."""
        found: dict[int, StoredChunk] = {}
        for batch in _batches(dict.fromkeys(ids)):
            rows = self._conn.execute(
                f"select {_CHUNK_COLUMNS} from chunks where id in ({_placeholders(len(batch))})", batch
            )
            found.update((chunk.id, chunk) for chunk in map(_chunk, rows))
        return found

    def chunks_for_path(self, path: str) -> list[StoredChunk]:
        rows = self._conn.execute(f"select {_CHUNK_COLUMNS} from chunks where path = ? order by ordinal", (path,))
        return [_chunk(row) for row in rows]

    def chunks_with_text(self, text: str) -> list[StoredChunk]:
        """R-M4: every chunk whose text is exactly `text` (in any file), by path then ordinal."""
        rows = self._conn.execute(
            f"select {_CHUNK_COLUMNS} from chunks where {TEXT_START_EXPR} = substr(?1, 1, 64) and text = ?1 "
            "order by path, ordinal",
            (text,),
        )
        return list(map(_chunk, rows))

    def is_empty(self) -> bool:
        """No chunks at all: a search has nothing to find (and calls no embeddings API, R-M2)."""
        return self._sized().chunks == 0

    def file_count(self) -> int:
        """Files in the index: counts() without counting every chunk (1 ms a query at 100k chunks)."""
        row = self._conn.execute("select count(*) from files").fetchone()
        return int(row[0]) if row is not None else 0

    def counts(self) -> tuple[int, int]:
        """(files, chunks) in the index."""
        row = self._conn.execute("select (select count(*) from files), (select count(*) from chunks)").fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def integrity_check(self) -> str:
        """Return "ok", or the first problem found: SQLite's own check, the keyword index, vectors or bits astray."""
        facts = self._now()
        return check_integrity(self._conn, readonly=self.readonly, vectors=facts.vectors, sign_bits=facts.sign_bits)
