"""The SQLite backend's writer (IndexWriter): an index file opened to write, one transaction per call (R-S2)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import apsw

from scree.content.chunking import EMBED_FORMAT
from scree.errors import IndexMismatchError
from scree.store import writes
from scree.store.connection import BULK_CACHE_KIB, WRITER_CACHE_KIB
from scree.store.contract import EMBED_FORMAT_KEY, REINDEX_HINT, AddChunks, IndexWriter, model_mismatch
from scree.store.records import FileState, NewChunk
from scree.store.schema import (
    META_DIMS,
    META_FIRST_SYNC_DONE,
    META_FOLDER,
    META_LAST_ERROR,
    META_LAST_SYNC,
    META_MODEL,
    VECTOR_TABLE,
    vector_table_ddl,
)
from scree.store.sqlite_index import write_failure
from scree.store.sqlite_reader import SqliteReader, rows_in

RECLAIM_SHARE = 0.25  # vacuum once a quarter of the file's pages are free ...
RECLAIM_MIN_BYTES = 1 << 20  # ... and they come to a MiB at least: smaller indexes are not worth the rewrite


class SqliteWriter(SqliteReader):
    """A folder's index file, opened (created and migrated) to write. Open with SqliteWriter.open(db_path, folder)."""

    READONLY = False

    def __init__(self, conn: apsw.Connection, db_path: Path, folder: str, *, readonly: bool, exists: bool) -> None:
        super().__init__(conn, db_path, folder, readonly=readonly, exists=exists)
        self._bulk_wanted = self._bulk_on = False  # bulk_cache(): asked for, and in effect

    # --- meta (R-S1, R-L0) ---

    def record_docs_map(self, summary: str) -> None:
        """Nothing to do: a local index's docs map is the file beside it (scree.index.docs_map_file)."""

    def record_site_config(self, config: str) -> None:
        """Nothing to do: a local index's readers read the site's config from the folder."""

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction():
            self._conn.execute("insert or replace into meta(key, value) values (?, ?)", (key, value))

    def move_to(self, folder: Path) -> None:
        """Record that this index is now `folder`'s (a moved checkout adopted it: scree.index.adopt); it is not
        complete for that folder until a sync of it finishes (R-M5)."""
        folder_text = str(folder.resolve())
        with self._transaction():
            self._conn.execute("update meta set value = ? where key = ?", (folder_text, META_FOLDER))
            self._conn.execute("delete from meta where key = ?", (META_FIRST_SYNC_DONE,))
        self.folder = folder_text

    def record_full_sync(self, *, complete: bool) -> None:
        """A sync of the whole folder ended now; `complete`: nothing was deferred, so the first sync is done."""
        with self._transaction():
            if complete:
                self._conn.execute("insert or replace into meta(key, value) values (?, '1')", (META_FIRST_SYNC_DONE,))
            self._conn.execute(
                "insert or replace into meta(key, value) values (?, ?)",
                (META_LAST_SYNC, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            )

    def record_last_error(self, error: str) -> None:
        """R-L0: the outage a sync ended in ("" once one ran through); one read, and a write only when it changed."""
        if (self.get_meta(META_LAST_ERROR) or "") != error:
            self.set_meta(META_LAST_ERROR, error)

    # --- model (R-F3; the policy of which model an index gets is scree.index.model_policy's) ---

    def set_model(self, identity: str, dims: int) -> None:
        """Record the model of a new index and create its vector table; the same model again is a no-op."""
        ddl = vector_table_ddl(dims) if dims else None  # 0 dims: a keyword-only index has no vector table
        with self._transaction():
            recorded = self.model()
            if recorded is not None:
                if recorded != (identity, dims):
                    raise model_mismatch(self.where, recorded, identity, dims)
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

    def _record_model(self, identity: str, dims: int) -> None:
        self._conn.executemany(
            "insert or replace into meta(key, value) values (?, ?)",
            [(META_MODEL, identity), (META_DIMS, str(dims)), (EMBED_FORMAT_KEY, EMBED_FORMAT)],
        )

    def replace_with(self, other: IndexWriter) -> None:
        """`reindex -all`: make this index an exact copy of `other` (built beside it) in one step, through SQLite's
        backup: a reader sees the old index or the new one, and a failure part way leaves the old one whole."""
        if not isinstance(other, SqliteWriter):
            raise TypeError("a SQLite index is replaced by another SQLite index only")
        try:
            with self._conn.backup("main", other._conn, "main") as backup:
                while not backup.step(-1):
                    pass
        except (apsw.FullError, apsw.IOError) as exc:
            raise write_failure(self.db_path, exc) from None

    # --- space ---

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

    def _grow_cache_if_bulk(self) -> None:
        """Under bulk_cache(), the larger page cache from the first rows written on."""
        if self._bulk_wanted and not self._bulk_on:
            self._conn.execute(f"pragma cache_size = -{BULK_CACHE_KIB}").fetchall()
            self._bulk_on = True

    # --- files (R-S2) ---

    def touch_file(self, state: FileState) -> None:
        """The content hash is unchanged: record the new mtime and size only."""
        with self._transaction():
            self._conn.execute(
                "update files set mtime_ns = ?, size = ? where path = ?", (state.mtime_ns, state.size, state.path)
            )

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

    def replace_files(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> None:
        """R-S2: swap each file's old rows for these, all in one transaction (each file fully old or fully new after a
        kill); batched small files cost one commit, not one each."""
        self._check_vectors(items)
        self._grow_cache_if_bulk()
        with self._transaction():
            facts = self._now()
            writes.write_files(self._conn, items, vectors=facts.vectors, sign_bits=facts.sign_bits)

    @contextmanager
    def file_in_parts(self, state: FileState) -> Iterator[AddChunks]:
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

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """R-E7: a stored vector for each text hash the index already has (any chunk with that hash)."""
        found: dict[str, bytes] = {}
        if not self._now().vectors:
            return found
        first = "select text_hash, min(id) from chunks where text_hash in ({keys}) group by text_hash"
        for text_hash, chunk_id in list(rows_in(self._conn, first, hashes)):
            row = self._conn.execute(f"select embedding from {VECTOR_TABLE} where chunk_id = ?", (chunk_id,)).fetchone()
            if row is not None:
                found[str(text_hash)] = bytes(row[0])
        return found
