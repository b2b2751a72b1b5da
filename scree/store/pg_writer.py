"""The PostgreSQL backend's writer (IndexWriter, issue 31): one collection, written by the one process that holds
its advisory lock, every call one transaction, and every transaction FENCED.

The lock holder bumps the collection's `lock_generation` as it takes the lock (scree.index.pg_lock) and hands that
generation to its writer; each write transaction begins by bumping `version` only where the generation is still
that one. A writer whose lock is gone (its supervisor killed, its connection cut, a successor took over) finds no
row to bump, writes nothing, and stops with WriterFencedError: an orphan never writes beside its successor.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Self

import psycopg

from scree.content.chunking import EMBED_FORMAT
from scree.content.cjk import apart_from_cjk
from scree.content.formats import keyword_text
from scree.content.site_config import SITE_CONFIG_KEY
from scree.errors import IndexMismatchError, IndexUnavailableError, WriterFencedError
from scree.store.contract import REINDEX_HINT, AddChunks, IndexWriter, model_mismatch
from scree.store.pg_connect import WRITER_LOCK_KEY_SQL, PgVector, connect, failure_line, register_vector, where
from scree.store.pg_keywords import cjk_row_pairs
from scree.store.pg_reader import HNSW_MIN_CHUNKS, PgReader, hnsw_name
from scree.store.pg_schema import POSTING_SQL, TEXT_CONFIG, migrate
from scree.store.records import FileState, NewChunk

MAX_STORED_FILE_BYTES = 8 << 20  # a file's text is stored (compressed) for read_doc up to this size

# A transaction's new chunks are COPYed into a temporary table, then made rows by one statement: each row's tsvector
# and length by the server, and its keyword postings (pg_schema.M003) from that tsvector in the same statement.
# Against an INSERT per row with the tsvector made in it (psycopg's pipelined executemany), this is one round trip
# and one plan for a whole batch (first sync: see `scree bench --database-url`).
_STAGE_SQL = """
create temporary table if not exists scree_staged(
    ordinal integer, path text, heading text, text text, start_line integer, end_line integer, text_hash text,
    embedding vector, cjk text[], keywords text, heading_words text
) on commit delete rows
"""
_COPY_SQL = (
    "copy scree_staged(ordinal, path, heading, text, start_line, end_line, text_hash, embedding, cjk, keywords, "
    "heading_words) from stdin (format binary)"
)
_STAGED_TYPES = ["integer", "text", "text", "text", "integer", "integer", "text", "vector", "text[]", "text", "text"]
_INSERT_STAGED_SQL = f"""
with added as (
    insert into scree_chunks(collection, path, ordinal, heading, text, start_line, end_line, text_hash, embedding,
                             tsv, doc_len, cjk)
    select %(c)s, s.path, s.ordinal, s.heading, s.text, s.start_line, s.end_line, s.text_hash, s.embedding, t.tsv,
           (select coalesce(sum(cardinality(u.positions)), 0) from unnest(t.tsv) u), s.cjk
    from scree_staged s
    cross join lateral (
        select setweight(to_tsvector('{TEXT_CONFIG}', s.heading_words), 'A')
               || setweight(to_tsvector('{TEXT_CONFIG}', s.keywords), 'B') as tsv
    ) t
    returning id, collection, tsv, doc_len
)
insert into scree_postings(collection, lexeme, tf, doc_len, impact, chunk)
{POSTING_SQL} from added c cross join lateral unnest(c.tsv) u
"""


class PgWriter(PgReader):
    """A collection opened (created, migrated) to write; `generation`: the lock generation its lock holder took,
    None only for a writer that runs without a lock (tests of the store itself)."""

    def __init__(
        self, url: str, name: str, folder: Path, conn: psycopg.Connection[Any] | None, generation: int | None
    ) -> None:
        super().__init__(url, name, folder, conn)
        self.generation = generation
        self.hnsw_min_chunks = HNSW_MIN_CHUNKS  # the benches and tests lower it to build the index on small ones

    @classmethod
    def open_writer(cls, url: str, name: str, folder: Path, generation: int | None) -> Self:
        writer = cls(url, name, folder, connect(url), generation)
        try:
            conn = writer._db()
            try:
                migrate(conn, where(url))
                register_vector(conn)  # the migration may have just made the extension
                conn.execute(
                    "insert into scree_collections(name, meta) values (%s, %s) on conflict (name) do nothing",
                    (name, json.dumps({"folder": writer.folder})),
                )
            except psycopg.Error as exc:
                raise IndexUnavailableError(failure_line(url, exc, "prepare")) from None
            writer._read_row()
        except BaseException:
            writer.close()
            raise
        return writer

    # --- the fenced transaction ---

    @contextmanager
    def _write(self) -> Iterator[tuple[psycopg.Connection[Any], int]]:
        """One write transaction on this writer's collection, fenced by its lock generation."""
        try:
            conn = self._db()
            with conn.transaction():
                bumped = conn.execute(
                    "update scree_collections set version = version + 1 where name = %s "
                    "and (%s::bigint is null or lock_generation = %s) returning id",
                    (self.name, self.generation, self.generation),
                ).fetchone()
                if bumped is None:
                    raise WriterFencedError(
                        f"the writer lock of {self.where} was taken over by another scree process: this writer "
                        "stops without writing"
                    )
                if self.generation is not None and not self._lock_held(conn):  # the generation is still ours
                    raise WriterFencedError(
                        f"the writer lock of {self.where} went with its database connection (the server restarted "
                        "or cut it): this writer stops without writing until the lock is taken again"
                    )
                yield conn, int(bumped[0])
        except psycopg.OperationalError as exc:
            self._drop()
            raise IndexUnavailableError(failure_line(self.url, exc, "write")) from None
        except psycopg.Error as exc:
            raise IndexUnavailableError(failure_line(self.url, exc, "write")) from None
        finally:
            self._row = None
            self._stats = None
            self._counts = None  # this writer's own writes count at once

    def _lock_held(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether some session holds the collection's writer lock. With the generation still this writer's, that
        session is its own lock holder's (a successor bumps the generation as it takes the lock); nobody holding it
        means the lock went with its connection (the database restarted) and this writer is an orphan until its
        holder takes the lock again. The shared try succeeds only when no session holds the lock (it is the
        transaction's own, released at its end)."""
        row = conn.execute(f"select pg_try_advisory_xact_lock_shared(({WRITER_LOCK_KEY_SQL}))", (self.name,)).fetchone()
        return not (row and row[0])

    # --- meta ---

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as (conn, collection):
            conn.execute(
                "update scree_collections set meta = meta || jsonb_build_object(%s::text, %s::text) where id = %s",
                (key, value, collection),
            )

    def record_site_config(self, config: str) -> None:
        """Keep the site's config files with the collection (meta SITE_CONFIG_KEY), for readers without a checkout;
        written only when they changed, so an unchanged config bumps no version."""
        if self.get_meta(SITE_CONFIG_KEY) != config:
            self.set_meta(SITE_CONFIG_KEY, config)

    def record_docs_map(self, summary: str) -> None:
        """Keep the docs map (its JSON, as the map file holds it) with the collection, for readers on machines
        without the file; written only when it changed, so an unchanged map bumps no version."""
        collection = self._id()
        if collection is None:
            return
        stored = self._call(
            lambda conn: conn.execute(
                "select summary from scree_docs_maps where collection = %s", (collection,)
            ).fetchone()
        )
        if stored is not None and stored[0] == summary:
            return
        with self._write() as (conn, collection):
            conn.execute(
                "insert into scree_docs_maps(collection, summary) values (%s, %s) on conflict (collection) do "
                "update set summary = excluded.summary, updated = now()",
                (collection, summary),
            )

    def record_last_error(self, error: str) -> None:
        if (self.get_meta("last_error") or "") != error:
            self.set_meta("last_error", error)

    def move_to(self, folder: Path) -> None:
        """A collection is named by its checkout, not its folder: the new folder is only recorded."""
        self.folder = str(folder.resolve())
        self.set_meta("folder", self.folder)

    def record_full_sync(self, *, complete: bool) -> None:
        import time

        with self._write() as (conn, collection):
            conn.execute(
                "update scree_collections set first_sync_done = first_sync_done or %s, "
                "meta = meta || jsonb_build_object('last_sync', %s::text) where id = %s",
                (complete, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), collection),
            )
        self._analyze()
        self.ensure_hnsw()

    def _analyze(self) -> None:
        """Fresh planner statistics after a full sync (autovacuum gets there too, later); a role that may not is
        left to it. The connection is in autocommit: ANALYZE runs outside any transaction. Not the postings: the
        keyword search reads them by a plan fixed in its SQL (pg_keywords), and sampling them took seconds."""
        try:
            self._db().execute("analyze scree_chunks, scree_files")
        except psycopg.Error:
            pass

    def ensure_hnsw(self) -> None:
        """An HNSW index for a collection of `hnsw_min_chunks` chunks or more (built once, after a full sync; the
        bench calls it on a collection it kept from an earlier run)."""
        row = self._now()
        if row is None or row.model is None or row.model[1] == 0 or self._has_hnsw(row):
            return
        if self.counts()[1] < self.hnsw_min_chunks:
            return
        dims = int(row.model[1])
        with self._write() as (conn, collection):
            # a build takes about a minute at 100k chunks on 2 cores: past the statement timeout of the other work
            conn.execute("set local statement_timeout = 0")
            conn.execute("set local maintenance_work_mem = '256MB'")
            conn.execute(
                f"create index if not exists {hnsw_name(collection)} on scree_chunks "
                f"using hnsw ((embedding::vector({dims})) vector_cosine_ops) where collection = {int(collection)}"
            )
        self._hnsw = None

    # --- model ---

    def set_model(self, identity: str, dims: int) -> None:
        with self._write() as (conn, collection):
            found = conn.execute("select model, dims from scree_collections where id = %s", (collection,)).fetchone()
            if found is not None and found[0] is not None:
                if (str(found[0]), int(found[1])) != (identity, dims):
                    raise model_mismatch(self.where, (str(found[0]), int(found[1])), identity, dims)
                return
            conn.execute(
                "update scree_collections set model = %s, dims = %s, embed_format = %s where id = %s",
                (identity, dims, EMBED_FORMAT, collection),
            )

    def reset(self, identity: str, dims: int) -> None:
        with self._write() as (conn, collection):
            conn.execute("delete from scree_files where collection = %s", (collection,))
            conn.execute(f"drop index if exists {hnsw_name(collection)}")
            conn.execute(
                "update scree_collections set model = %s, dims = %s, embed_format = %s, first_sync_done = false, "
                "meta = meta - 'last_sync' where id = %s",
                (identity, dims, EMBED_FORMAT, collection),
            )
        self._hnsw = None

    def replace_with(self, other: IndexWriter) -> None:
        """`reindex --all`: the rows of `other` (a collection built beside this one) become this collection's, in
        one transaction: a reader sees the old rows or the new ones."""
        if not isinstance(other, PgWriter):
            raise TypeError("a PostgreSQL collection is replaced by another PostgreSQL collection only")
        with self._write() as (conn, collection):
            source = conn.execute(
                "select id, model, dims, embed_format, first_sync_done, meta from scree_collections where name = %s",
                (other.name,),
            ).fetchone()
            if source is None:
                return
            conn.execute("delete from scree_files where collection = %s", (collection,))
            conn.execute(f"drop index if exists {hnsw_name(collection)}")
            conn.execute("update scree_files set collection = %s where collection = %s", (collection, source[0]))
            conn.execute("update scree_postings set collection = %s where collection = %s", (collection, source[0]))
            conn.execute(
                "update scree_collections set model = %s, dims = %s, embed_format = %s, first_sync_done = %s, "
                "meta = %s where id = %s",
                (source[1], source[2], source[3], source[4], json.dumps(source[5]), collection),
            )
        self._hnsw = None
        self.ensure_hnsw()

    # --- files ---

    def touch_file(self, state: FileState) -> None:
        with self._write() as (conn, collection):
            conn.execute(
                "update scree_files set mtime_ns = %s, size = %s where collection = %s and path = %s",
                (state.mtime_ns, state.size, collection, state.path),
            )

    def _check_vectors(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> int:
        recorded = self.model()
        if not any(chunks for _state, chunks in items):
            return recorded[1] if recorded else 0
        if recorded is None:
            raise RuntimeError("set_model() must record the model before chunks are written")
        for state, chunks in items:
            for chunk in chunks:
                if len(chunk.vector) != recorded[1] * 4:
                    raise IndexMismatchError(
                        f"a vector for {state.path} has {len(chunk.vector) // 4} dims, the index has "
                        f"{recorded[1]}; {REINDEX_HINT}"
                    )
        return recorded[1]

    def _body(self, state: FileState) -> bytes | None:
        """The file's bytes, compressed, when they are still the ones hashed (else None: the next sync stores them)."""
        import hashlib

        try:
            path = Path(self.folder) / state.path
            if path.stat().st_size > MAX_STORED_FILE_BYTES:
                return None
            raw = path.read_bytes()
        except OSError:
            return None
        return zlib.compress(raw, 6) if hashlib.sha256(raw).hexdigest() == state.sha256 else None

    def _upsert_files(self, conn: psycopg.Connection[Any], collection: int, states: Sequence[FileState]) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(
                "insert into scree_files(collection, path, sha256, mtime_ns, size, body) "
                "values (%s, %s, %s, %s, %s, %s) "
                "on conflict (collection, path) do update set sha256 = excluded.sha256, mtime_ns = excluded.mtime_ns, "
                "size = excluded.size, body = excluded.body",
                [(collection, s.path, s.sha256, s.mtime_ns, s.size, self._body(s)) for s in states],
            )

    def _add_chunks(
        self, conn: psycopg.Connection[Any], collection: int, chunks: Sequence[tuple[str, NewChunk]], dims: int
    ) -> None:
        """Insert the chunks and their keyword postings: COPY into the staging table, then one INSERT ... SELECT
        (_INSERT_STAGED_SQL). Runs inside the caller's fenced transaction; the staging table empties at commit."""
        if not chunks:
            return
        conn.execute(_STAGE_SQL)
        with conn.cursor() as cursor:
            with cursor.copy(_COPY_SQL) as copy:
                copy.set_types(_STAGED_TYPES)
                for path, c in chunks:
                    copy.write_row(
                        (c.ordinal, path, c.heading, c.text, c.start_line, c.end_line, c.text_hash,
                         PgVector(c.vector) if dims else None, cjk_row_pairs(c.heading, c.text),
                         keyword_text(path, c.text),  # issue 34: an .mdx chunk's JSX tags weigh nothing
                         apart_from_cjk(c.heading))
                    )  # fmt: skip
            cursor.execute(_INSERT_STAGED_SQL, {"c": collection})
            cursor.execute("truncate scree_staged")  # file_in_parts adds more than once in one transaction

    def replace_files(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> None:
        dims = self._check_vectors(items)
        last = list({state.path: (state, chunks) for state, chunks in items}.values())
        with self._write() as (conn, collection):
            conn.execute(
                "delete from scree_chunks where collection = %s and path = any(%s)",
                (collection, [state.path for state, _ in last]),
            )
            self._upsert_files(conn, collection, [state for state, _ in last])
            self._add_chunks(conn, collection, [(state.path, c) for state, chunks in last for c in chunks], dims)

    @contextmanager
    def file_in_parts(self, state: FileState) -> Iterator[AddChunks]:
        with self._write() as (conn, collection):
            old = [
                int(r[0])
                for r in conn.execute(
                    "select id from scree_chunks where collection = %s and path = %s", (collection, state.path)
                ).fetchall()
            ]
            self._upsert_files(conn, collection, [state])

            def add(chunks: Sequence[NewChunk]) -> None:
                dims = self._check_vectors([(state, chunks)])
                self._add_chunks(conn, collection, [(state.path, c) for c in chunks], dims)

            yield add
            conn.execute("delete from scree_chunks where id = any(%s)", (old,))

    def delete_files(self, paths: Iterable[str]) -> int:
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return 0
        with self._write() as (conn, collection):
            cursor = conn.execute(
                "delete from scree_files where collection = %s and path = any(%s)", (collection, wanted)
            )
            return cursor.rowcount

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """R-E7 across the database: a vector for each text hash any collection made with this model and embedded
        text format already holds, so a branch's or another team's first sync embeds only what is new."""
        wanted = list(dict.fromkeys(hashes))
        row = self._now()
        if not wanted or row is None or row.model is None or row.model[1] == 0:
            return {}
        model, dims = row.model

        def look(conn: psycopg.Connection[Any]) -> dict[str, bytes]:
            with conn.cursor(binary=True) as cursor:
                cursor.execute(
                    "select distinct on (c.text_hash) c.text_hash, c.embedding from scree_chunks c "
                    "join scree_collections k on k.id = c.collection "
                    "where c.text_hash = any(%s) and k.model = %s and k.dims = %s and k.embed_format = %s "
                    "and c.embedding is not null",
                    (wanted, model, dims, row.embed_format),
                )
                return {str(r[0]): bytes(r[1]) for r in cursor.fetchall()}

        return self._call(look)

    def bulk_cache(self) -> AbstractContextManager[None]:
        return nullcontext()

    def reclaim_space(self) -> bool:
        return False  # the server's autovacuum does it


def drop_collection(url: str, name: str) -> int:
    """Delete a collection and every row of it (`scree index remove`, a finished rebuild); how many were removed."""
    from scree.store.pg_schema import current_version

    with connect(url) as conn:
        try:
            if current_version(conn) == 0:
                return 0
            found = conn.execute("select id from scree_collections where name = %s", (name,)).fetchone()
            if found is None:
                return 0
            with conn.transaction():
                conn.execute(f"drop index if exists {hnsw_name(int(found[0]))}")
                conn.execute("delete from scree_collections where id = %s", (found[0],))
            return 1
        except psycopg.Error as exc:
            raise IndexUnavailableError(failure_line(url, exc, "remove from")) from None
