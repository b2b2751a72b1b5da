"""An index's self-check: SQLite's own, then the keyword index, vectors and sign bits against the chunks they serve."""

from __future__ import annotations

import apsw

from scree.store.schema import CJK_TABLE, VECTOR_BITS_TABLE, VECTOR_TABLE

MAX_SQLITE_PROBLEMS = 5  # pragma integrity_check can list thousands; the first few say enough


def check_integrity(conn: apsw.Connection, *, readonly: bool, vectors: bool, sign_bits: bool) -> str:
    """Return "ok", or the first problem found. `vectors`/`sign_bits`: whether the index has those tables to check."""
    problems = [str(row[0]) for row in conn.execute("pragma integrity_check")]
    if problems != ["ok"]:
        return "; ".join(problems[:MAX_SQLITE_PROBLEMS])
    if not readonly:  # FTS5's own check is an insert command: a read-only connection may not run it
        try:
            conn.execute("insert into chunks_fts(chunks_fts, rank) values ('integrity-check', 1)")
            conn.execute(f"insert into {CJK_TABLE}({CJK_TABLE}) values ('integrity-check')")
        except apsw.Error as exc:
            return f"keyword index: {exc}"
    row = conn.execute("select (select count(*) from chunks_fts_docsize), (select count(*) from chunks)").fetchone()
    assert row is not None
    if row[0] != row[1]:
        return f"keyword index: {row[0]} rows for {row[1]} chunks"
    row = conn.execute(f"select count(*) from {CJK_TABLE}_docsize where id not in (select id from chunks)").fetchone()
    if row is not None and row[0]:
        return f"CJK keyword index: {row[0]} rows without a chunk"
    tables = [(VECTOR_TABLE, "vectors", "a vector")] if vectors else []
    if vectors and sign_bits:
        tables.append((VECTOR_BITS_TABLE, "sign bits", "sign bits"))
    for table, what, each in tables:
        row = conn.execute(
            f"select (select count(*) from {table} where chunk_id not in (select id from chunks)), "
            f"(select count(*) from chunks where id not in (select chunk_id from {table}))"
        ).fetchone()
        assert row is not None
        if row[0] or row[1]:
            return f"{what}: {row[0]} without a chunk, {row[1]} chunks without {each}"
    return "ok"
