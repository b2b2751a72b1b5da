"""The store's writes: files' chunks, vectors and sign bits replaced or deleted in the caller's transaction (R-S2).

Every statement of a transaction that has written FTS5 rows begins by flushing FTS5's pending terms to a segment of
their own (its savepoint), so one statement per chunk made a sync write and merge a segment per chunk: the chunk
rows of a whole batch of files go in as a few statements (ROWS_PER_INSERT rows each), last, and the schema triggers
add their keyword rows there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import apsw

from scree.store.records import FileState, NewChunk
from scree.store.schema import VECTOR_BITS_TABLE, VECTOR_TABLE

# AUTOINCREMENT's next id (an id never names another chunk later, records.StoredChunk), given explicitly so that
# the vectors can be written before their chunks, outside the statements that write keyword rows.
_LAST_ID_SQL = (
    "select max(coalesce((select seq from sqlite_sequence where name = 'chunks'), 0), "
    "coalesce((select max(id) from chunks), 0))"
)
_INSERT_CHUNKS_SQL = "insert into chunks(id, path, ordinal, heading, text, start_line, end_line, text_hash) values "
_CHUNK_ROW = "(?,?,?,?,?,?,?,?)"
# Rows per chunk insert: 4,096 bound values, within SQLite's 32,766. The rows as bound values cost a third less CPU
# than as one JSON array read by json_each (encoded, then parsed field by field), at 512 rows as at 64.
ROWS_PER_INSERT = 512
_INSERT_VECTOR_SQL = f"insert into {VECTOR_TABLE}(chunk_id, embedding) values (?, ?)"
_INSERT_BITS_SQL = f"insert into {VECTOR_BITS_TABLE}(chunk_id, bits) values (?1, vec_quantize_binary(?2))"
_UPSERT_FILE_SQL = (
    "insert into files(path, sha256, mtime_ns, size) values (?, ?, ?, ?) on conflict(path) do "
    "update set sha256 = excluded.sha256, mtime_ns = excluded.mtime_ns, size = excluded.size"
)
_CHUNK_IDS_SQL = "select id from chunks where path in (select value from json_each(?))"
_DELETE_CHUNKS_SQL = "delete from chunks where path in (select value from json_each(?))"


def delete_chunks(conn: apsw.Connection, paths: Sequence[str], *, vectors: bool) -> None:
    """Delete these files' chunks with their vectors; FTS rows and sign bits go with the chunks (schema triggers)."""
    listed = json.dumps(list(paths), ensure_ascii=False)
    ids = [int(row[0]) for row in conn.execute(_CHUNK_IDS_SQL, (listed,))]
    if not ids:
        return
    if vectors:
        _delete_vectors(conn, ids)
    conn.execute(_DELETE_CHUNKS_SQL, (listed,))


def _delete_vectors(conn: apsw.Connection, ids: Sequence[int]) -> None:
    conn.executemany(f"delete from {VECTOR_TABLE} where chunk_id = ?", [(chunk_id,) for chunk_id in ids])


def write_files(
    conn: apsw.Connection,
    items: Sequence[tuple[FileState, Sequence[NewChunk]]],
    *,
    vectors: bool,
    sign_bits: bool,
) -> None:
    """Replace each file's chunks (with their vectors and, when `sign_bits`, sign bits) and record its state; a path
    given twice ends as its last item says, as if each item were written in turn."""
    items = list({state.path: (state, chunks) for state, chunks in items}.values())
    delete_chunks(conn, [state.path for state, _ in items], vectors=vectors)
    conn.executemany(_UPSERT_FILE_SQL, [(s.path, s.sha256, s.mtime_ns, s.size) for s, _ in items])
    add_chunks(conn, [(state.path, c) for state, file_chunks in items for c in file_chunks], vectors, sign_bits)


def start_file(conn: apsw.Connection, state: FileState) -> list[int]:
    """The first step of writing one file in parts (file_in_parts): its state is recorded and its old chunks'
    ids returned, for end_file to delete once add_chunks wrote the new ones, in the same transaction (until then
    the old rows' vectors can still be reused)."""
    ids = [int(row[0]) for row in conn.execute(_CHUNK_IDS_SQL, (json.dumps([state.path], ensure_ascii=False),))]
    conn.execute(_UPSERT_FILE_SQL, (state.path, state.sha256, state.mtime_ns, state.size))
    return ids


def end_file(conn: apsw.Connection, old_ids: Sequence[int], *, vectors: bool) -> None:
    """The last step of writing a file in parts: its old chunks go, with their vectors (and by the schema's
    triggers their keyword rows and sign bits)."""
    if vectors:
        _delete_vectors(conn, old_ids)
    conn.executemany("delete from chunks where id = ?", [(chunk_id,) for chunk_id in old_ids])


def add_chunks(conn: apsw.Connection, chunks: Sequence[tuple[str, NewChunk]], vectors: bool, sign_bits: bool) -> None:
    """Insert (path, chunk) rows with their vectors and, when `sign_bits`, sign bits, under new ids."""
    row = conn.execute(_LAST_ID_SQL).fetchone()
    first_id = (int(row[0]) if row is not None else 0) + 1
    if vectors:  # a keyword-only index (no key, no offline model) has no vector table
        pairs = [(first_id + n, c.vector) for n, (_, c) in enumerate(chunks)]
        conn.executemany(_INSERT_VECTOR_SQL, pairs)
        if sign_bits:
            conn.executemany(_INSERT_BITS_SQL, pairs)
    for start in range(0, len(chunks), ROWS_PER_INSERT):
        piece = chunks[start : start + ROWS_PER_INSERT]
        values: list[object] = []
        for n, (path, c) in enumerate(piece, start=first_id + start):
            values += (n, path, c.ordinal, c.heading, c.text, c.start_line, c.end_line, c.text_hash)
        # not cached: a statement of this many rows is big, and a writer at rest should not keep one
        conn.execute(_INSERT_CHUNKS_SQL + ",".join([_CHUNK_ROW] * len(piece)), values, can_cache=False)


def delete_file(conn: apsw.Connection, path: str, *, vectors: bool) -> bool:
    """Delete a file's chunks and its files row; True when the index held it."""
    delete_chunks(conn, [path], vectors=vectors)
    conn.execute("delete from files where path = ?", (path,))
    return conn.changes() > 0
