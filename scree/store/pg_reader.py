"""The PostgreSQL backend's reader (IndexReader, issue 31): one collection of a shared database, read.

Every call is one or a few round trips on one connection. A connection that drops (the server restarted, the network
went) fails that call with one line (IndexUnavailableError) and is made again on the next, so a serving reader
recovers by itself. What the collection is (its model, its size) is read once per change: each write bumps the
collection row's `version`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import psycopg

from scree.errors import IndexCorruptError, IndexMismatchError, IndexUnavailableError, ScreeError
from scree.store import pg_keywords
from scree.store.contract import FIRST_EMBED_FORMAT, REINDEX_HINT, IndexRecord, PathFilter
from scree.store.keywords import fts_match_terms
from scree.store.pg_connect import PgVector, connect, failure_line, where
from scree.store.pg_schema import READABLE_FROM, SCHEMA_VERSION, TEXT_CONFIG, current_version, refuse_newer
from scree.store.records import CHUNK_COLUMNS, FileState, StoredChunk

T = TypeVar("T")

HNSW_MIN_CHUNKS = 20_000  # from this many chunks a collection gets an HNSW index (pg_writer), searched through it
HNSW_EF_SEARCH = 200  # candidates HNSW keeps per query; recall against exact in bench.pg_store
MAX_KNN = 4096


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

    def __init__(
        self, url: str, name: str, folder: Path, conn: psycopg.Connection[Any] | None, *, checkout: bool = True
    ) -> None:
        self.url = url
        self.checkout = checkout  # `folder` is a checkout of the collection (False: a server without one)
        self.name = name
        self.folder = str(folder.resolve())
        self._conn = conn
        self._row: Row | None = None
        self._stats: pg_keywords.Stats | None = None
        self._hnsw: tuple[int, bool] | None = None  # (version, the collection has its HNSW index)

    @classmethod
    def open(cls, url: str, name: str, folder: Path, *, checkout: bool = True) -> Self:
        reader = cls(url, name, folder, connect(url), checkout=checkout)
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
            if current_version(conn) == 0:
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
        return self._row

    def _now(self) -> Row | None:
        """The collection row, read again when its version moved (one small query)."""
        row = self._row
        if row is None:
            return self._read_row()
        version = self._call(
            lambda conn: conn.execute("select version from scree_collections where id = %s", (row.id,)).fetchone()
        )
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
        return not self.checkout

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
        return {str(r[0]): FileState(str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in rows}

    def file_state(self, path: str) -> FileState | None:
        collection = self._id()
        if collection is None:
            return None
        r = self._call(
            lambda conn: conn.execute(
                "select path, sha256, mtime_ns, size from scree_files where collection = %s and path = %s",
                (collection, path),
            ).fetchone()
        )
        return None if r is None else FileState(str(r[0]), str(r[1]), int(r[2]), int(r[3]))

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
        collection = self._id()
        if collection is None:
            return 0, 0
        r = self._call(
            lambda conn: conn.execute(
                "select (select count(*) from scree_files where collection = %s), "
                "(select count(*) from scree_chunks where collection = %s)",
                (collection, collection),
            ).fetchone()
        )
        return (int(r[0]), int(r[1])) if r else (0, 0)

    def file_count(self) -> int:
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
        self, query: str, limit: int, within: PathFilter | None = None, *, floor_alone: bool = True
    ) -> list[list[tuple[int, float]]]:
        """The word list (bm25 over the tsvector, pg_keywords) and, with CJK text in the query, the CJK pairs'
        list after it, as the SQLite backend gives them."""
        row = self._now()
        if limit <= 0 or row is None:
            return []
        if self._stats is None or self._stats.version != row.version:
            self._stats = self._call(lambda conn: pg_keywords.load_stats(conn, row.id, row.version))
        stats = self._stats
        terms = fts_match_terms(query)
        paths = self._paths_within(within)
        lists: list[list[tuple[int, float]]] = []
        if terms:
            lists.append(
                self._call(
                    lambda conn: pg_keywords.word_matches(
                        conn, row.id, stats, terms, limit, paths, floor_alone=floor_alone
                    )
                )
            )
        cjk = self._call(lambda conn: pg_keywords.cjk_matches(conn, row.id, stats, query, limit, paths))
        if cjk is not None:
            lists.append(cjk)
        return lists

    def stems(self, text: str) -> list[str]:
        """`text` as the keyword index sees it (lower case, accents folded, English stems), in order."""
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
        collection = self._id()
        if collection is None:
            return []
        rows = self._call(
            lambda conn: conn.execute(
                f"select {CHUNK_COLUMNS} from scree_chunks where collection = %s and left(text, 64) = left(%s, 64) "
                "and text = %s order by path, ordinal",
                (collection, text, text),
            ).fetchall()
        )
        return [StoredChunk.of_row(r) for r in rows]


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
    with conn.transaction():
        conn.execute(f"set local hnsw.ef_search = {max(HNSW_EF_SEARCH, min(limit, 1000))}")
        rows = conn.execute(
            f"select id, embedding::vector({int(dims)}) <=> %b::vector({int(dims)}) as d from scree_chunks "
            f"where collection = {int(collection)} order by d limit %s",
            (PgVector(vector), limit),
        ).fetchall()
    return _distances(rows)
