"""The PostgreSQL backend's reader (IndexReader, issue 31): one collection of a shared database, read.

Every call is one or a few round trips on one connection. A connection that drops (the server restarted, the network
went) fails that call with one line (IndexUnavailableError) and is made again on the next, so a serving reader
recovers by itself. What the collection is (its model, its size) is read once per change: each write bumps the
collection row's `version`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import psycopg

from scree.errors import IndexCorruptError, IndexMismatchError, IndexUnavailableError, ScreeError
from scree.store import pg_keywords, pg_symbols
from scree.store.contract import FIRST_EMBED_FORMAT, REINDEX_HINT, IndexRecord, KeywordMatch, PathFilter
from scree.store.pg_checkout import holds_files
from scree.store.pg_connect import PgVector, connect, failure_line, where
from scree.store.pg_schema import (
    POSTINGS_SCHEMA,
    READABLE_FROM,
    SCHEMA_VERSION,
    TEXT_CONFIG,
    current_version,
    refuse_newer,
)
from scree.store.records import CHUNK_COLUMNS, FileState, StoredChunk

T = TypeVar("T")

# From this many chunks a collection gets an HNSW index (pg_writer), searched through it. Measured (scree bench
# --database-url, 512-d clustered vectors, top 100, 2 shared cores at load 8-10, one run): exact p50/p95 3.3/13.0 ms
# at 2k chunks, 13.3/24.7 at 5k, 19.4/28.7 at 10k, 23.0/37.9 at 20k; HNSW 5.8/17.6, 8.3/13.5, 8.8/13.8, 5.2/9.6, its
# recall@10 against exact 1.0 at each; at 100k exact 127 ms, HNSW 12-26 ms (recall 0.99). Another run at load 4:
# exact p50 1.8 / 5.4 / 11.4 / 21.0 ms at 2k / 5k / 10k / 20k, HNSW 1.8 / 2.2 / 3.0 / 3.7, recall 1.0. The lines
# cross at about 2k; the index is built from 5k, where HNSW was faster at p50 and p95 in every run (its build: 1-4 s at
# 5k, 60-150 s at 100k).
HNSW_MIN_CHUNKS = 5_000
HNSW_EF_SEARCH = 200  # candidates HNSW keeps per query; recall against exact: scree.benchmarks.backends
MAX_KNN = 4096
FILE_COUNT_FRESH_S = 1.0  # file_count() may answer at a version read this recently (counts() reads it again)
STEMS_KEPT = 4096  # texts whose stems a reader keeps (the text search config is fixed by the schema)


def hnsw_name(collection: int) -> str:
    return f"scree_hnsw_{int(collection)}"


@dataclass(frozen=True, slots=True)
class Row:
    """A collection row as a reader needs it, at one version."""

    id: int
    version: int
    model: tuple[str, int] | None
    embed_format: str
    complete: bool
    meta: dict[str, Any]


class PgReader:
    """A collection in a PostgreSQL database, opened to read (IndexReader). Open with PgReader.open(url, name,
    folder); `exists` is False while the database or the collection holds no index yet."""

    def __init__(self, url: str, name: str, folder: Path, conn: psycopg.Connection[Any] | None) -> None:
        self.url = url
        self._checkout: bool | None = None  # `folder` holds the collection's files (pg_checkout); None: undecided
        self.name = name
        self.folder = str(folder.resolve())
        self._conn = conn
        self._row: Row | None = None
        self._stats: pg_keywords.Stats | None = None
        self._hnsw: tuple[int, bool] | None = None  # (version, the collection has its HNSW index)
        self._postings = True  # the schema has the keyword postings (POSTINGS_SCHEMA): read with each row
        self._counts: tuple[tuple[int, int], tuple[int, int]] | None = None  # ((id, version), (files, chunks))
        self._checked_at = 0.0  # time.monotonic() when the collection's version was last read
        self._stems: dict[str, list[str]] = {}
        self._stems_of_paths = False  # the indexed paths' stems were fetched at once (_prefetch_path_stems)

    @classmethod
    def open(cls, url: str, name: str, folder: Path) -> Self:
        reader = cls(url, name, folder, connect(url))
        try:
            reader._check_schema()
            reader._read_row()
        except BaseException:
            reader.close()
            raise
        return reader

    def _check_schema(self) -> None:
        version = current_version(self._db())
        refuse_newer(version, where(self.url))
        if 0 < version < READABLE_FROM:
            raise IndexCorruptError(
                f"the index database {where(self.url)} has schema {version}, this scree needs {SCHEMA_VERSION}: "
                "run the writer (`scree watch` or `scree reindex`) once to upgrade it"
            )

    @classmethod
    def record_of(cls, url: str, name: str, folder: Path) -> IndexRecord:
        try:
            with cls.open(url, name, folder) as reader:
                return IndexRecord(reader.is_complete(), reader.counts()[0])
        except ScreeError:
            return IndexRecord()

    # --- the connection ---

    def _db(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.url)
            self._row = None
        return self._conn

    def _call(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run `work` on the connection; a dropped connection is one line now and a new connection next time."""
        try:
            return work(self._db())
        except psycopg.OperationalError as exc:
            self._drop()
            raise IndexUnavailableError(failure_line(self.url, exc)) from None
        except psycopg.Error as exc:
            raise IndexUnavailableError(failure_line(self.url, exc, "read")) from None

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        self._row = None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def close(self) -> None:
        self._drop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- the collection row ---

    def _read_row(self) -> Row | None:
        def read(conn: psycopg.Connection[Any]) -> Row | None:
            schema = current_version(conn)
            self._postings = schema >= POSTINGS_SCHEMA
            if schema == 0:
                return None
            found = conn.execute(
                "select id, version, model, dims, embed_format, first_sync_done, meta "
                "from scree_collections where name = %s",
                (self.name,),
            ).fetchone()
            if found is None:
                return None
            model = None if found[2] is None or found[3] is None else (str(found[2]), int(found[3]))
            return Row(
                int(found[0]), int(found[1]), model, str(found[4] or FIRST_EMBED_FORMAT), bool(found[5]), found[6]
            )

        self._row = self._call(read)
        self._checked_at = time.monotonic()
        return self._row

    def _now(self) -> Row | None:
        """The collection row, read again when its version moved (one small query)."""
        row = self._row
        if row is None:
            return self._read_row()
        version = self._call(
            lambda conn: conn.execute("select version from scree_collections where id = %s", (row.id,)).fetchone()
        )
        self._checked_at = time.monotonic()
        if version is None or int(version[0]) != row.version:
            return self._read_row()
        return row

    @property
    def exists(self) -> bool:
        return self._row is not None or self._now() is not None

    @property
    def where(self) -> str:
        return f"collection {self.name} in {where(self.url)}"

    @property
    def shared(self) -> bool:
        """Whether this folder is no checkout of the collection (pg_checkout's one definition, as the writer lock
        decides it): asked once, when first needed, and kept; asked again while the collection holds no file."""
        if self._checkout is None:
            self._checkout = self._call(lambda conn: holds_files(conn, self.name, self.folder))
        return self._checkout is False

    def get_meta(self, key: str) -> str | None:
        row = self._now()
        value = row.meta.get(key) if row is not None else None
        return None if value is None else str(value)

    def model(self) -> tuple[str, int] | None:
        row = self._now()
        return row.model if row is not None else None

    def embed_format(self) -> str:
        row = self._now()
        return row.embed_format if row is not None else FIRST_EMBED_FORMAT

    def is_complete(self) -> bool:
        row = self._now()
        return row is not None and row.complete

    def last_sync(self) -> str | None:
        return self.get_meta("last_sync")

    def last_error(self) -> str | None:
        return self.get_meta("last_error") or None

    def writer(self) -> tuple[str | None, int | None]:
        """The host and pid the last writer recorded (issue 31: readers' notes name both)."""
        row = self._now()
        if row is None:
            return None, None
        found = self._call(
            lambda conn: conn.execute(
                "select writer_host, writer_pid from scree_collections where id = %s", (row.id,)
            ).fetchone()
        )
        return (found[0], found[1]) if found else (None, None)

    # --- files ---

    def _id(self) -> int | None:
        """The collection's id: the row read last when there is one (an id never changes while its collection lives,
        and every search reads the version through model() or is_complete() anyway; a collection removed since
        answers with no rows until then), else read now."""
        if self._row is not None:
            return self._row.id
        row = self._now()
        return row.id if row is not None else None

    def paths(self) -> Iterator[str]:
        collection = self._id()
        if collection is None:
            return iter(())
        rows = self._call(
            lambda conn: conn.execute("select path from scree_files where collection = %s", (collection,)).fetchall()
        )
        return (str(row[0]) for row in rows)

    def files(self) -> dict[str, FileState]:
        collection = self._id()
        if collection is None:
            return {}
        rows = self._call(
            lambda conn: conn.execute(
                "select path, sha256, mtime_ns, size from scree_files where collection = %s", (collection,)
            ).fetchall()
        )
        return {state.path: state for state in map(FileState.of_row, rows)}

    def file_state(self, path: str) -> FileState | None:
        return self.file_states([path]).get(path)

    def file_states(self, paths: Iterable[str]) -> dict[str, FileState]:
        collection = self._id()
        wanted = list(dict.fromkeys(paths))
        if collection is None or not wanted:
            return {}
        rows = self._call(
            lambda conn: conn.execute(
                "select path, sha256, mtime_ns, size from scree_files where collection = %s and path = any(%s)",
                (collection, wanted),
            ).fetchall()
        )
        return {state.path: state for state in map(FileState.of_row, rows)}

    def stored_text(self, path: str) -> tuple[str, bytes, int] | None:
        """(sha256, raw bytes, mtime_ns when indexed) of an indexed file as the writer stored it (issue 31: read_doc
        without a checkout)."""
        import zlib

        collection = self._id()
        if collection is None:
            return None
        r = self._call(
            lambda conn: conn.execute(
                "select sha256, body, mtime_ns from scree_files where collection = %s and path = %s",
                (collection, path),
            ).fetchone()
        )
        if r is None or r[1] is None:
            return None
        return str(r[0]), zlib.decompress(bytes(r[1])), int(r[2])

    def counts(self) -> tuple[int, int]:
        """(files, chunks), counted once per version of the collection: a search asks for them once per hit, and
        counting 100k chunks takes 40 ms."""
        row = self._now()
        if row is None:
            return 0, 0
        if self._counts is not None and self._counts[0] == (row.id, row.version):
            return self._counts[1]
        r = self._call(
            lambda conn: conn.execute(
                "select (select count(*) from scree_files where collection = %s), "
                "(select count(*) from scree_chunks where collection = %s)",
                (row.id, row.id),
            ).fetchone()
        )
        counts = (int(r[0]), int(r[1])) if r else (0, 0)
        self._counts = ((row.id, row.version), counts)
        return counts

    def file_count(self) -> int:
        """How many files the collection holds: counts() at the version this reader read last when it read it within
        FILE_COUNT_FRESH_S (every search reads it first, through model() or is_complete()), so the once-per-hit asks
        of a search cost no round trip each."""
        row = self._row
        if (
            row is not None
            and self._counts is not None
            and self._counts[0] == (row.id, row.version)
            and time.monotonic() - self._checked_at < FILE_COUNT_FRESH_S
        ):
            return self._counts[1][0]  # counted at the version this reader saw last, and saw within the second
        return self.counts()[0]

    def is_empty(self) -> bool:
        collection = self._id()
        if collection is None:
            return True
        r = self._call(
            lambda conn: conn.execute(
                "select exists(select 1 from scree_chunks where collection = %s)", (collection,)
            ).fetchone()
        )
        return not (r and r[0])

    def integrity_check(self) -> str:
        """ "ok", or the first problem: chunks whose vectors are missing or of other dimensions than the model's."""
        row = self._now()
        if row is None:
            return "ok"
        dims = row.model[1] if row.model else 0

        def check(conn: psycopg.Connection[Any]) -> str:
            found = conn.execute(
                "select count(*) filter (where embedding is null), "
                "count(*) filter (where embedding is not null and vector_dims(embedding) <> %s) "
                "from scree_chunks where collection = %s",
                (dims, row.id),
            ).fetchone()
            missing, other = (int(found[0]), int(found[1])) if found else (0, 0)
            if dims and missing:
                return f"vectors: {missing} chunks without a vector"
            if other or (not dims and found and int(found[0]) == 0 and self.counts()[1]):
                return f"vectors: {other} of other dimensions than the collection's {dims}"
            return "ok"

        return self._call(check)

    # --- searches ---

    def _paths_within(self, within: PathFilter | None) -> list[str] | None:
        return None if within is None else [path for path in self.paths() if within(path)]

    def vector_search(self, vector: bytes, limit: int, within: PathFilter | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine distance), nearest first: exact, or through the collection's HNSW index once it has one
        (HNSW_MIN_CHUNKS); with `within`, exact over the files it keeps."""
        row = self._now()
        if limit <= 0 or row is None or row.model is None or row.model[1] == 0:
            return []
        dims = row.model[1]
        if len(vector) != dims * 4:
            raise IndexMismatchError(
                f"the query vector has {len(vector) // 4} dims, the index has {dims}; {REINDEX_HINT}"
            )
        limit = min(limit, MAX_KNN)
        paths = self._paths_within(within)
        if paths is None and self._has_hnsw(row):
            return self._call(lambda conn: _approximate(conn, row.id, dims, vector, limit))
        return self._call(lambda conn: _exact(conn, row.id, vector, limit, paths))

    def exact_vector_search(self, vector: bytes, limit: int) -> list[tuple[int, float]]:
        row = self._now()
        if limit <= 0 or row is None or row.model is None or row.model[1] == 0:
            return []
        return self._call(lambda conn: _exact(conn, row.id, vector, min(limit, MAX_KNN), None))

    def _has_hnsw(self, row: Row) -> bool:
        if self._hnsw is None or self._hnsw[0] != row.version:
            found = self._call(lambda conn: conn.execute("select to_regclass(%s)", (hnsw_name(row.id),)).fetchone())
            self._hnsw = (row.version, bool(found and found[0] is not None))
        return self._hnsw[1]

    def keyword_lists(
        self, match: KeywordMatch, limit: int, within: PathFilter | None = None, *, floor_alone: bool = True
    ) -> list[list[tuple[int, float]]]:
        """The word list (bm25 over the tsvector, pg_keywords) and, with CJK pairs in `match`, the CJK pairs'
        list after it, as the SQLite backend gives them."""
        row = self._now()
        if limit <= 0 or row is None:
            return []
        if self._stats is None or self._stats.version != row.version:
            self._stats = self._call(lambda conn: pg_keywords.load_stats(conn, row.id, row.version))
        stats = self._stats
        terms = list(match.terms)
        paths = self._paths_within(within)
        lists: list[list[tuple[int, float]]] = []
        if terms:
            lists.append(
                self._call(
                    lambda conn: pg_keywords.word_matches(
                        conn, row.id, stats, terms, limit, paths, floor_alone=floor_alone, postings=self._postings
                    )
                )
            )
        cjk = self._call(lambda conn: pg_keywords.cjk_matches(conn, row.id, stats, match.cjk_pairs, limit, paths))
        if cjk is not None:
            lists.append(cjk)
        symbols = list(match.symbols)  # emoji and other symbols to_tsvector drops (issue 34)
        if symbols:
            lists.append(self._call(lambda conn: pg_symbols.symbol_matches(conn, row.id, symbols, limit, paths)))
        return lists

    def stems(self, text: str) -> list[str]:
        """`text` as the keyword index sees it (lower case, accents folded, English stems), in order. Kept per text
        (STEMS_KEPT): a search asks for its hits' path words, a round trip each."""
        found = self._stems.get(text)
        if found is None:
            if not self._stems_of_paths:
                self._stems_of_paths = True
                self._prefetch_path_stems()
                found = self._stems.get(text)
        if found is None:
            if len(self._stems) >= STEMS_KEPT:
                self._stems.clear()
            found = self._stems[text] = self._stems_now(text)
        return list(found)

    def _prefetch_path_stems(self) -> None:
        """The stems of every indexed path as the search asks for them (SearchEngine._terms_of_path: the path
        without its extension), in one round trip, where a new reader's first searches made one per hit."""
        paths = list(self.paths())
        if not paths or len(paths) > STEMS_KEPT // 2:
            return
        self._keep_stems(list(dict.fromkeys(p.rsplit(".", 1)[0] if "." in p.rsplit("/", 1)[-1] else p for p in paths)))

    def stems_of(self, texts: Iterable[str]) -> dict[str, list[str]]:
        wanted = list(dict.fromkeys(texts))
        missing = [text for text in wanted if text not in self._stems]
        found = {text: list(self._stems[text]) for text in wanted if text in self._stems}
        if missing:
            found.update(self._keep_stems(missing))
        return {text: found[text] for text in wanted}

    def _keep_stems(self, texts: list[str]) -> dict[str, list[str]]:
        """The stems of `texts` in one round trip, kept (STEMS_KEPT)."""
        rows = self._call(
            lambda conn: conn.execute(
                "select t, coalesce((select array_agg(u.lexeme order by p) from "
                f"unnest(to_tsvector('{TEXT_CONFIG}', t)) u, unnest(u.positions) p), '{{}}') "
                "from unnest(%s::text[]) t",
                (texts,),
            ).fetchall()
        )
        fetched = {str(r[0]): [str(x) for x in r[1]] for r in rows}
        if len(self._stems) + len(fetched) >= STEMS_KEPT:
            self._stems.clear()
        self._stems.update(fetched)
        return {text: list(stems) for text, stems in fetched.items()}

    def _stems_now(self, text: str) -> list[str]:
        rows = self._call(
            lambda conn: conn.execute(
                f"select u.lexeme, p from unnest(to_tsvector('{TEXT_CONFIG}', %s)) u, unnest(u.positions) p order by p",
                (text,),
            ).fetchall()
        )
        return [str(r[0]) for r in rows]

    def chunks_by_ids(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        collection = self._id()
        wanted = list(dict.fromkeys(int(i) for i in ids))
        if collection is None or not wanted:
            return {}
        rows = self._call(
            lambda conn: conn.execute(
                f"select {CHUNK_COLUMNS} from scree_chunks where collection = %s and id = any(%s)",
                (collection, wanted),
            ).fetchall()
        )
        return {chunk.id: chunk for chunk in map(StoredChunk.of_row, rows)}

    def chunks_for_path(self, path: str) -> list[StoredChunk]:
        collection = self._id()
        if collection is None:
            return []
        rows = self._call(
            lambda conn: conn.execute(
                f"select {CHUNK_COLUMNS} from scree_chunks where collection = %s and path = %s order by ordinal",
                (collection, path),
            ).fetchall()
        )
        return [StoredChunk.of_row(r) for r in rows]

    def chunks_with_text(self, text: str) -> list[StoredChunk]:
        return self.chunks_with_texts([text])[text]

    def chunks_with_texts(self, texts: Iterable[str]) -> dict[str, list[StoredChunk]]:
        wanted = list(dict.fromkeys(texts))
        found: dict[str, list[StoredChunk]] = {text: [] for text in wanted}
        collection = self._id()
        if collection is None or not wanted:
            return found
        rows = self._call(
            lambda conn: conn.execute(
                f"select {CHUNK_COLUMNS} from scree_chunks where collection = %s and left(text, 64) = any(%s) "
                "and text = any(%s) order by path, ordinal",
                (collection, sorted({text[:64] for text in wanted}), wanted),
            ).fetchall()
        )
        for chunk in map(StoredChunk.of_row, rows):
            found[chunk.text].append(chunk)
        return found


def _distances(rows: list[Any]) -> list[tuple[int, float]]:
    return [(int(r[0]), float(r[1])) for r in rows if r[1] is not None and not math.isnan(float(r[1]))]


def _exact(
    conn: psycopg.Connection[Any], collection: int, vector: bytes, limit: int, paths: list[str] | None
) -> list[tuple[int, float]]:
    scope = "and path = any(%(paths)s)" if paths is not None else ""
    rows = conn.execute(
        "select id, embedding <=> %(q)b as d from scree_chunks "
        f"where collection = %(c)s and embedding is not null {scope} order by d, id limit %(k)s",
        {"q": PgVector(vector), "c": collection, "paths": paths, "k": limit},
    ).fetchall()
    return _distances(rows)


def _approximate(
    conn: psycopg.Connection[Any], collection: int, dims: int, vector: bytes, limit: int
) -> list[tuple[int, float]]:
    """Through the collection's HNSW index: its partial expression index matches only this very SQL (the
    collection and dimensions written in, both integers of our own)."""
    with conn.pipeline(), conn.transaction():  # one round trip for the transaction, its settings and the query
        conn.execute(f"set local hnsw.ef_search = {max(HNSW_EF_SEARCH, min(limit, 1000))}")
        # the reader chose HNSW by measurement (HNSW_MIN_CHUNKS): the planner's guess, a sort of the collection's
        # rows when its cost model prices HNSW high, is not taken
        conn.execute("set local enable_seqscan = off")
        conn.execute("set local enable_sort = off")
        rows = conn.execute(
            f"select id, embedding::vector({int(dims)}) <=> %b::vector({int(dims)}) as d from scree_chunks "
            f"where collection = {int(collection)} order by d limit %s",
            (PgVector(vector), limit),
        ).fetchall()
    return _distances(rows)
