"""The store's writes: a file's chunks, vectors and sign bits replaced or deleted in the caller's transaction (R-S2)."""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from scree.store.records import FileState, NewChunk
from scree.store.schema import VECTOR_BITS_TABLE, VECTOR_TABLE

_INSERT_CHUNK_SQL = (
    "insert into chunks(path, ordinal, heading, text, start_line, end_line, text_hash) "
    "values (?, ?, ?, ?, ?, ?, ?) returning id"
)
_INSERT_VECTOR_SQL = f"insert into {VECTOR_TABLE}(chunk_id, embedding) values (?, ?)"
_INSERT_BITS_SQL = f"insert into {VECTOR_BITS_TABLE}(chunk_id, bits) values (?1, vec_quantize_binary(?2))"
_UPSERT_FILE_SQL = (
    "insert into files(path, sha256, mtime_ns, size) values (?, ?, ?, ?) on conflict(path) do "
    "update set sha256 = excluded.sha256, mtime_ns = excluded.mtime_ns, size = excluded.size"
)


def delete_chunks(conn: apsw.Connection, path: str, *, vectors: bool) -> None:
    """Delete a file's chunks with their vectors; FTS rows and sign bits go with the chunks (schema triggers)."""
    if vectors:
        ids = [(row[0],) for row in conn.execute("select id from chunks where path = ?", (path,))]
        conn.executemany(f"delete from {VECTOR_TABLE} where chunk_id = ?", ids)
    conn.execute("delete from chunks where path = ?", (path,))


def write_file(
    conn: apsw.Connection, state: FileState, chunks: Sequence[NewChunk], *, vectors: bool, sign_bits: bool
) -> None:
    """Replace a file's chunks (with their vectors and, when `sign_bits`, sign bits) and record its state."""
    delete_chunks(conn, state.path, vectors=vectors)
    for chunk in chunks:
        row = conn.execute(
            _INSERT_CHUNK_SQL,
            (state.path, chunk.ordinal, chunk.heading, chunk.text, chunk.start_line, chunk.end_line, chunk.text_hash),
        ).fetchone()
        assert row is not None
        if vectors:  # a keyword-only index (no key, no offline model) has no vector table
            conn.execute(_INSERT_VECTOR_SQL, (row[0], chunk.vector))
        if sign_bits:
            conn.execute(_INSERT_BITS_SQL, (row[0], chunk.vector))
    conn.execute(_UPSERT_FILE_SQL, (state.path, state.sha256, state.mtime_ns, state.size))


def delete_file(conn: apsw.Connection, path: str, *, vectors: bool) -> bool:
    """Delete a file's chunks and its files row; True when the index held it."""
    delete_chunks(conn, path, vectors=vectors)
    conn.execute("delete from files where path = ?", (path,))
    return conn.changes() > 0
