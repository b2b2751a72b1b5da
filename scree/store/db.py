"""The Store: one apsw connection to a folder's index, its writes (one transaction per call) and its queries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import apsw

from scree.chunking import EMBED_FORMAT
from scree.errors import IndexMismatchError
from scree.store import file_rows, searches
from scree.store.connection import BULK_CACHE_KIB, WRITER_CACHE_KIB, empty_index, open_index, tighten_modes
from scree.store.integrity import check_integrity
from scree.store.keywords import fts_match_expression
from scree.store.records import FileState, NewChunk, StoredChunk
from scree.store.schema import (
    FTS_TOKENIZER_ARGS,
    TEXT_START_EXPR,
    VECTOR_TABLE,
    binary_quantizable,
    has_vector_table,
    vector_table_ddl,
)

# Re-exported: tests/test_store.py and bench.store_search import these from here.
from scree.store.searches import EXACT_SEARCH_MAX_CHUNKS as EXACT_SEARCH_MAX_CHUNKS
from scree.store.searches import OVERSAMPLE as OVERSAMPLE

SQL_BATCH = 500  # ids or hashes per `in (...)` list
REINDEX_HINT = "run `scree reindex -all` to rebuild it"
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


def _placeholders(count: int) -> str:
    return ",".join("?" * count)


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
        self._stemmer: Any = None  # the FTS5 tokenizer, made on first use by stems()

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

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- transactions and small helpers ---

    @contextmanager
    def bulk_cache(self) -> Iterator[None]:
        """While a whole folder is synced: once rows are written, a larger page cache (the chunk, FTS and vector
        B-tree pages stay cached: a fifth less CPU); after, the small one again with its memory freed. A sync that
        writes nothing (a watching writer's catch-up) never grows it, so the writer idles small (SPEC §10)."""
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
        self._conn.execute("begin immediate")
        try:
            yield
            self._conn.execute("commit")
        except BaseException:
            if not self._conn.get_autocommit():
                self._conn.execute("rollback")
            raise
        if not self._modes_checked:
            tighten_modes(self.db_path)
            self._modes_checked = True

    def _has_vector_table(self) -> bool:
        return has_vector_table(self._conn)

    def _vector_tables(self) -> tuple[bool, bool]:
        """Whether the index has (a vec0 table, sign bits): a keyword-only index has neither, odd dims no bits."""
        if not self._has_vector_table():
            return False, False
        recorded = self.model()
        return True, recorded is not None and binary_quantizable(recorded[1])

    # --- meta and model (R-F3) ---

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("select value from meta where key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction():
            self._conn.execute("insert or replace into meta(key, value) values (?, ?)", (key, value))

    def model(self) -> tuple[str, int] | None:
        """(model identity, dimensions) the index was built with; None for a new index."""
        identity, dims = self.get_meta("model"), self.get_meta("dims")
        if identity is None or dims is None:
            return None
        return identity, int(dims)

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
                f"now {EMBED_FORMAT}: headings without anchors); {REINDEX_HINT}"
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
            self._conn.execute("delete from meta where key in ('last_sync', 'first_sync_done')")
            self._record_model(identity, dims)

    def _record_model(self, identity: str, dims: int) -> None:
        self._conn.executemany(
            "insert or replace into meta(key, value) values (?, ?)",
            [("model", identity), ("dims", str(dims)), (EMBED_FORMAT_KEY, EMBED_FORMAT)],
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

    def replace_file(self, state: FileState, chunks: Sequence[NewChunk]) -> None:
        """R-S2: swap a file's old rows for these, in one transaction (fully old or fully new after a kill)."""
        self.replace_files([(state, chunks)])

    def replace_files(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> None:
        """replace_file for many files in one transaction: batched small files cost one commit, not one each."""
        self._check_vectors(items)
        if self._bulk_wanted and not self._bulk_on:
            self._conn.execute(f"pragma cache_size = -{BULK_CACHE_KIB}").fetchall()
            self._bulk_on = True
        with self._transaction():
            vectors, sign_bits = self._vector_tables()
            for state, chunks in items:
                file_rows.write_file(self._conn, state, chunks, vectors=vectors, sign_bits=sign_bits)

    def delete_files(self, paths: Iterable[str]) -> int:
        """Remove these files' rows in one transaction; returns how many files the index held."""
        with self._transaction():
            vectors = self._has_vector_table()
            return sum(file_rows.delete_file(self._conn, path, vectors=vectors) for path in dict.fromkeys(paths))

    # --- queries ---

    def _searchable(self, vector: bytes, limit: int) -> int | None:
        """The index's dimensions when a vector query can run (a model, a vec0 table, limit > 0), else None."""
        recorded = self.model()
        if limit <= 0 or recorded is None or not self._has_vector_table():
            return None
        if len(vector) != recorded[1] * 4:
            raise IndexMismatchError(
                f"the query vector has {len(vector) // 4} dims, the index has {recorded[1]}; {REINDEX_HINT}"
            )
        return recorded[1]

    def vector_search(self, vector: bytes, limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the `limit` nearest chunks (at most 4096), nearest first.

        Exact up to EXACT_SEARCH_MAX_CHUNKS chunks; above that, two_stage_vector_search.
        """
        dims = self._searchable(vector, limit)
        if dims is None:
            return []
        if binary_quantizable(dims) and searches.needs_two_stage(self._conn):
            return self.two_stage_vector_search(vector, limit)
        return self.exact_vector_search(vector, limit)

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
        return searches.two_stage_nearest(self._conn, vector, limit)

    def binary_candidates(self, vector: bytes, count: int) -> list[int]:
        """Stage 1 of two_stage_vector_search alone: ids of the `count` chunks nearest by Hamming distance."""
        dims = self._searchable(vector, count)
        if dims is None or not binary_quantizable(dims):
            return []
        return searches.sign_bit_candidates(self._conn, vector, count)

    def keyword_search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) by FTS5 bm25 over heading and text, best first; score is -bm25 (higher is better)."""
        expression = fts_match_expression(query)
        if expression is None or limit <= 0:
            return []
        return searches.keyword_matches(self._conn, expression, limit)

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
        if not self._has_vector_table():
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

    def counts(self) -> tuple[int, int]:
        """(files, chunks) in the index."""
        row = self._conn.execute("select (select count(*) from files), (select count(*) from chunks)").fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def integrity_check(self) -> str:
        """Return "ok", or the first problem found: SQLite's own check, the keyword index, vectors or bits astray."""
        vectors, sign_bits = self._vector_tables()
        return check_integrity(self._conn, readonly=self.readonly, vectors=vectors, sign_bits=sign_bits)
