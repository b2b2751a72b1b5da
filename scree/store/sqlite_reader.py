"""The SQLite backend's reader (IndexReader): meta, files, vector and keyword searches over an index file."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from scree.errors import IndexMismatchError, ScreeError
from scree.logs import get_logger
from scree.store import searches
from scree.store.contract import (
    EMBED_FORMAT_KEY,
    FIRST_EMBED_FORMAT,
    REINDEX_HINT,
    IndexRecord,
    KeywordMatch,
    PathFilter,
)
from scree.store.integrity import check_integrity
from scree.store.keywords import (
    SplitQuery,
    fts5_expression,
    fts5_term,
    split_query,
    wide_split,
)
from scree.store.records import CHUNK_COLUMNS, FileState, StoredChunk
from scree.store.schema import (
    CJK_TABLE,
    FTS_TOKENIZER_ARGS,
    META_FIRST_SYNC_DONE,
    META_LAST_ERROR,
    META_LAST_SYNC,
    TEXT_START_EXPR,
    binary_quantizable,
)
from scree.store.sign_bits import SignBits
from scree.store.sqlite_index import SqliteIndex

log = get_logger(__name__)

SQL_BATCH = 500  # ids or hashes per `in (...)` list
MAX_COUNTED_TERMS = 4096  # terms whose matches a reader remembers between two changes of the index


def rows_in(conn: apsw.Connection, sql: str, keys: Iterable[Any]) -> Iterator[Any]:
    """The rows of `sql`, whose `{keys}` is an `in (...)` list, for `keys`: each key once, SQL_BATCH a statement."""
    for batch in batches(dict.fromkeys(keys)):
        yield from conn.execute(sql.format(keys=placeholders(len(batch))), batch)


def batches(values: Iterable[Any]) -> Iterator[list[Any]]:
    """`values` in lists of SQL_BATCH, for `in (...)` lists."""
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) == SQL_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def placeholders(count: int) -> str:
    return ",".join("?" * count)


class SqliteReader(SqliteIndex):
    """A folder's index file, opened to read (IndexReader). Open with SqliteReader.open(db_path, folder)."""

    def __init__(self, conn: apsw.Connection, db_path: Path, folder: str, *, readonly: bool, exists: bool) -> None:
        super().__init__(conn, db_path, folder, readonly=readonly, exists=exists)
        self._sign_bits: tuple[int, SignBits] | None = None  # (data_version, every chunk's sign bits) when two-stage
        self._term_hits: tuple[int, int, dict[str, int]] | None = None  # (data_version, rows, rows per term)
        self._stemmer: Any = None  # the FTS5 tokenizer, made on first use by stems()
        self._filters: dict[str, PathFilter] = {}  # the path filters of the searches running now, by SQL token
        self._tokens = itertools.count(1)
        conn.create_scalar_function(searches.SCOPE_FUNCTION, self._in_filter, 2, deterministic=True)

    @classmethod
    def record_of(cls, db_path: Path, folder: Path) -> IndexRecord:
        """What the index at `db_path` records of its progress: whether a first sync finished, how many files it
        holds; nothing when it cannot be read (or is not there). The reader's note reads it while no writer has
        reported yet, and while a first sync runs, so its count keeps up with what a search finds (R-M5)."""
        if not db_path.exists():
            return IndexRecord()
        try:
            with SqliteReader.open(db_path, folder) as reader:
                return IndexRecord(reader.is_complete(), reader.counts()[0])
        except (ScreeError, apsw.Error):  # a busy, locked or damaged file reads as no record, as the docstring says
            return IndexRecord()

    def _forget(self) -> None:
        super()._forget()
        self._sign_bits = self._term_hits = None

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

    @property
    def shared(self) -> bool:
        return False

    def stored_text(self, path: str) -> tuple[str, bytes, int] | None:
        return None  # a local index reads its folder

    # --- its record (R-S1, R-L0, R-F3) ---

    def is_complete(self) -> bool:
        """Whether a sync of the whole folder has finished with nothing deferred (R-M5: the index is complete)."""
        return self.get_meta(META_FIRST_SYNC_DONE) == "1"

    def last_sync(self) -> str | None:
        """When the last sync of the whole folder ended (UTC, ISO 8601), None before the first."""
        return self.get_meta(META_LAST_SYNC)

    def last_error(self) -> str | None:
        """R-L0: the outage the last sync ended in, or None when the last complete sync had none."""
        return self.get_meta(META_LAST_ERROR) or None

    def model(self) -> tuple[str, int] | None:
        """(model identity, dimensions) the index was built with; None for a new index."""
        return self._now().model

    def embed_format(self) -> str:
        """Which version of the embedded text (chunking.EMBED_FORMAT) the index's vectors and headings were made
        from; an index made before the version was recorded holds the first."""
        return self.get_meta(EMBED_FORMAT_KEY) or FIRST_EMBED_FORMAT

    # --- files ---

    def paths(self) -> Iterator[str]:
        """Every indexed path, streamed: a full sync checks them without holding a row object per file."""
        for row in self._conn.execute("select path from files"):
            yield str(row[0])

    def files(self) -> dict[str, FileState]:
        rows = self._conn.execute("select path, sha256, mtime_ns, size from files")
        return {state.path: state for state in map(FileState.of_row, rows)}

    def file_state(self, path: str) -> FileState | None:
        return self.file_states([path]).get(path)

    def file_states(self, paths: Iterable[str]) -> dict[str, FileState]:
        rows = rows_in(self._conn, "select path, sha256, mtime_ns, size from files where path in ({keys})", paths)
        return {state.path: state for state in map(FileState.of_row, rows)}

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

    # --- vector search ---

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

    # --- keyword search ---

    def keyword_lists(
        self, match: KeywordMatch, limit: int, within: PathFilter | None = None, *, floor_alone: bool = True
    ) -> list[list[tuple[int, float]]]:
        """One ranked list per keyword index `match` reaches: (chunk id, score) by FTS5 bm25 over heading and
        text, best first; score is -bm25 (higher is better). With `within`, only chunks of the files it keeps.

        `floor_alone` False: on an index of SPLIT_MIN_ROWS chunks or more, chunks that match only words found in
        half of the chunks or more (FTS5 weighs those 1e-6) are left out, as a hybrid search has its vector list
        to rank them, where FTS5 would rank every row they match (keywords.split_query).

        The word index's list when `match` has terms; with CJK pairs, the CJK table's list of them after it
        (scree.content.cjk); with symbols no tokenizer keeps (emoji), the chunks holding them
        (searches.symbol_matches) last; none for a match with none of these. Fusing them is the search's decision
        (scree.search.ranking)."""
        if limit <= 0:
            return []
        terms = [fts5_term(term) for term in match.terms]  # quoted here, for FTS5: the match holds plain words
        pairs, symbols = fts5_expression(match.cjk_pairs), list(match.symbols)
        with self._filtered(within) as token:
            lists = [self._word_matches(terms, limit, token, floor_alone)] if terms else []
            if pairs is not None:
                lists.append(searches.keyword_matches(self._conn, pairs, limit, token, table=CJK_TABLE))
            if symbols:
                lists.append(searches.symbol_matches(self._conn, symbols, limit, token))
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
        counted once per change of the index (a word in every chunk is a scan of its postings)."""
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

    def stems_of(self, texts: Iterable[str]) -> dict[str, list[str]]:
        return {text: self.stems(text) for text in dict.fromkeys(texts)}  # in-process: no round trips

    # --- chunks ---

    def chunks_by_ids(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids that still exist."""
        rows = rows_in(self._conn, f"select {CHUNK_COLUMNS} from chunks where id in ({{keys}})", ids)
        return {chunk.id: chunk for chunk in map(StoredChunk.of_row, rows)}

    def chunks_for_path(self, path: str) -> list[StoredChunk]:
        rows = self._conn.execute(f"select {CHUNK_COLUMNS} from chunks where path = ? order by ordinal", (path,))
        return [StoredChunk.of_row(row) for row in rows]

    def chunks_with_texts(self, texts: Iterable[str]) -> dict[str, list[StoredChunk]]:
        return {text: self.chunks_with_text(text) for text in dict.fromkeys(texts)}  # in-process: no round trips

    def chunks_with_text(self, text: str) -> list[StoredChunk]:
        """R-M4: every chunk whose text is exactly `text` (in any file), by path then ordinal."""
        rows = self._conn.execute(
            f"select {CHUNK_COLUMNS} from chunks where {TEXT_START_EXPR} = substr(?1, 1, 64) and text = ?1 "
            "order by path, ordinal",
            (text,),
        )
        return list(map(StoredChunk.of_row, rows))
