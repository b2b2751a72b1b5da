"""The index's searches as SQL over a connection: exact and two-stage (sign-bit) vector search, bm25 keywords (R-S1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw

from scree.store.keywords import fts5_varints
from scree.store.schema import VECTOR_BITS_TABLE, VECTOR_TABLE

if TYPE_CHECKING:
    from scree.store.keywords import SplitQuery
    from scree.store.sign_bits import SignBits

HEADING_WEIGHT = 2.0  # R-S1: bm25 column weights, a match in the heading trail counts double
TEXT_WEIGHT = 1.0
MAX_KNN = 4096  # sqlite-vec's largest k
# Vector search (R-S1, §10 bars): up to this many chunks the vec0 table is scanned exactly (8 ms at 10k, 18 ms at 20k,
# 70-110 ms at 100k); above it, two stages: the OVERSAMPLE x limit chunks nearest by sign bits (at most MAX_CANDIDATES),
# then their exact cosine distances (25-30 ms at 100k). 32x kept recall@16 at 0.991 of the exact search's on real
# MiniLM vectors (16x: 0.974, 64x: 0.997, each step ~5 ms more); MAX_CANDIDATES bounds a large limit's rescoring.
EXACT_SEARCH_MAX_CHUNKS = 20_000
OVERSAMPLE = 32
MAX_CANDIDATES = 2048

_EXACT_SQL = f"select chunk_id, distance from {VECTOR_TABLE} where embedding match ? and k = ? order by distance"
# Stage 1 of the two-stage search: the ?2 candidates nearest by Hamming distance between sign bits (?1: the query).
# A plain table scan with SQLite's sorter: vec0's own KNN over a bit[N] column costs O(k) a row, 98 ms at k=256.
_CANDIDATES_SQL = (
    f"select chunk_id from {VECTOR_BITS_TABLE} "
    "order by vec_distance_hamming(vec_bit(bits), vec_quantize_binary(?1)) limit ?2"
)
# Stage 2: the exact cosine distance of each candidate, read from the vec0 table by rowid, nearest ?3 first.
_TWO_STAGE_SQL = (
    f"select v.chunk_id, vec_distance_cosine(v.embedding, ?1) as distance from ({_CANDIDATES_SQL}) as c "
    f"join {VECTOR_TABLE} as v on v.chunk_id = c.chunk_id order by distance limit ?3"
)
# Stage 2 from memory (two_stage_from_memory): the candidates' vectors read where vec0 keeps them (its shadow tables:
# each vector's block and place in it, held by SignBits), then sqlite-vec's own vec_distance_cosine over them passed
# as one blob, ?2, of ?3 vectors of ?4 bytes; ties by position, as the join above orders them. 2048 candidates at
# 100k chunks: 6-8 ms, against 16-19 ms for the join, whose every vec0 lookup opens a blob anew.
VECTOR_ROWIDS_TABLE = f"{VECTOR_TABLE}_rowids"
VECTOR_BLOCKS_TABLE = f"{VECTOR_TABLE}_vector_chunks00"
_RESCORE_SQL = (
    "with recursive n(i) as (select 0 union all select i + 1 from n where i + 1 < ?3) "
    "select i, vec_distance_cosine(substr(?2, i * ?4 + 1, ?4), ?1) as distance from n order by distance, i limit ?5"
)
_KEYWORD_SQL = (
    "select rowid, bm25({table}, " + f"{HEADING_WEIGHT}, {TEXT_WEIGHT}" + ") as score from {table} "
    "where {table} match ?1 {scope} order by score limit ?2"
)
KEYWORD_TABLE = "chunks_fts"
# FTS5 computes bm25 for every row an OR-query matches, 0.7 us a row: a word in nearly every chunk made a query of
# 100k chunks cost 70 ms. From this many rows up, a query with such words runs split (keywords.split_query).
SPLIT_MIN_ROWS = 20_000
_AVERAGES_SQL = f"select block from {KEYWORD_TABLE}_data where id = 1"  # FTS5's averages record
_HITS_SQL = f"select count(*) from {KEYWORD_TABLE} where {KEYWORD_TABLE} match ?"
# R-M10: a scoped search ranks only the chunks of files its path filter (registered as token ?3) keeps, in the query
# itself, so it still finds `limit` chunks inside the scope. The files subquery runs once per query.
SCOPE_FUNCTION = "scree_in_scope"
_IN_SCOPE = f"in (select id from chunks where path in (select path from files where {SCOPE_FUNCTION}(?3, path)))"
_SCOPED_EXACT_SQL = (
    f"select chunk_id, distance from {VECTOR_TABLE} where embedding match ?1 and k = ?2 and chunk_id {_IN_SCOPE} "
    "order by distance"
)


def candidate_count(limit: int) -> int:
    """How many sign-bit candidates stage 1 keeps for `limit` results (`limit` already capped at MAX_KNN)."""
    return max(limit, min(limit * OVERSAMPLE, MAX_CANDIDATES))


def exact_nearest(
    conn: apsw.Connection, vector: bytes, limit: int, scope: str | None = None
) -> list[tuple[int, float]]:
    """(chunk id, cosine distance) of the `limit` nearest chunks by a full scan of the vec0 table, nearest first;
    with a filter's `scope` token (SqliteReader._filtered), of the chunks it keeps."""
    if scope is not None:
        rows = conn.execute(_SCOPED_EXACT_SQL, (vector, min(limit, MAX_KNN), scope))
        return [(int(row[0]), float(row[1])) for row in rows if row[1] is not None]  # NULL: an all-zero vector
    rows = conn.execute(_EXACT_SQL, (vector, min(limit, MAX_KNN)))
    return [(int(row[0]), float(row[1])) for row in rows if row[1] is not None]  # NULL: an all-zero vector


def two_stage_nearest(conn: apsw.Connection, vector: bytes, limit: int) -> list[tuple[int, float]]:
    """(chunk id, exact cosine distance) of the `limit` nearest among the candidates nearest by sign bits."""
    limit = min(limit, MAX_KNN)
    rows = conn.execute(_TWO_STAGE_SQL, (vector, candidate_count(limit), limit))
    return [(int(row[0]), float(row[1])) for row in rows if row[1] is not None]  # NULL: an all-zero vector


def two_stage_from_memory(conn: apsw.Connection, vector: bytes, limit: int, bits: SignBits) -> list[tuple[int, float]]:
    """two_stage_nearest, the very ids and distances, with stage 1 over `bits` in memory and stage 2 reading the
    candidates' vectors where `bits` says vec0 keeps them."""
    limit = min(limit, MAX_KNN)
    ids, blocks, offsets = bits.nearest_located(query_bits(conn, vector), candidate_count(limit))
    if not ids or limit <= 0:
        return []
    vectors = read_vectors(conn, blocks, offsets, len(vector))
    rows = conn.execute(_RESCORE_SQL, (vector, vectors, len(ids), len(vector), limit))
    return [(ids[int(row[0])], float(row[1])) for row in rows if row[1] is not None]  # NULL: an all-zero vector


def query_bits(conn: apsw.Connection, vector: bytes) -> bytes:
    """A query vector's sign bits as the sign-bit table holds a chunk's (sqlite-vec's vec_quantize_binary)."""
    row = conn.execute("select vec_quantize_binary(?)", (vector,)).fetchone()
    assert row is not None
    return bytes(row[0])


def has_vector_blocks(conn: apsw.Connection) -> bool:
    """Whether vec0 keeps its vectors where read_vectors reads them (sqlite-vec 0.1's shadow tables)."""
    rows = conn.execute(
        "select count(*) from sqlite_master where type = 'table' and name in (?, ?)",
        (VECTOR_ROWIDS_TABLE, VECTOR_BLOCKS_TABLE),
    ).fetchone()
    return rows is not None and int(rows[0]) == 2


def places_hold_vectors(
    conn: apsw.Connection, ids: Sequence[int], blocks: Sequence[int], offsets: Sequence[int]
) -> bool:
    """Whether the vectors read_vectors finds at these places are the ones vec0 returns for these ids: a check of
    sqlite-vec's block layout, which is its own (0.1's: a block's vectors one after another)."""
    for chunk_id, block, offset in zip(ids, blocks, offsets, strict=True):
        row = conn.execute(f"select embedding from {VECTOR_TABLE} where chunk_id = ?", (chunk_id,)).fetchone()
        if row is None or bytes(read_vectors(conn, [block], [offset], len(row[0]))) != bytes(row[0]):
            return False
    return True


def read_vectors(conn: apsw.Connection, blocks: Sequence[int], offsets: Sequence[int], size: int) -> bytearray:
    """The vectors of `size` bytes at these places in vec0's blocks, one after another in the order given, read
    block by block through one incremental blob handle (opening a blob per vector is what made the join slow)."""
    import numpy as np

    vectors = bytearray(size * len(blocks))
    if not blocks:
        return vectors
    view = memoryview(vectors)
    order = np.lexsort((np.asarray(offsets), np.asarray(blocks)))
    in_order: list[int] = np.asarray(blocks)[order].tolist()
    starts: list[int] = (np.asarray(offsets, dtype=np.int64)[order] * size).tolist()
    targets: list[int] = (order.astype(np.int64) * size).tolist()
    current = in_order[0]
    blob = conn.blob_open("main", VECTOR_BLOCKS_TABLE, "vectors", current, False)
    try:
        seek, read_into = blob.seek, blob.read_into
        for block, start, target in zip(in_order, starts, targets, strict=True):
            if block != current:
                blob.reopen(block)
                current = block
            seek(start)
            read_into(view, target, size)
    finally:
        blob.close()
    return vectors


def sign_bit_candidates(conn: apsw.Connection, vector: bytes, count: int) -> list[int]:
    """Stage 1 alone: ids of the `count` chunks nearest to `vector` by Hamming distance between sign bits."""
    return [int(row[0]) for row in conn.execute(_CANDIDATES_SQL, (vector, count))]


def keyword_matches(
    conn: apsw.Connection, expression: str, limit: int, scope: str | None = None, table: str = KEYWORD_TABLE
) -> list[tuple[int, float]]:
    """(chunk id, -bm25) of the `limit` best FTS5 matches of a MATCH `expression` in `table` (the word index, or
    the CJK pairs' CJK_TABLE), best (highest) first; with `scope`, of the chunks inside it."""
    if scope is None:
        rows = conn.execute(_KEYWORD_SQL.format(table=table, scope=""), (expression, limit))
    else:
        # `+rowid`: a filter on the matches, not a constraint handed to FTS5, which ran the MATCH once per id in the
        # scope (61 s for a word in every chunk, 10% of 100k chunks in scope)
        sql = _KEYWORD_SQL.format(table=table, scope=f"and +rowid {_IN_SCOPE}")
        rows = conn.execute(sql, (expression, limit, scope))
    return [(int(row[0]), -float(row[1])) for row in rows]


# Issue 34: symbols no tokenizer keeps (KeywordMatch.symbols) are found as substrings of chunk text, by a scan that
# stops at MAX_SYMBOL_MATCHES matching chunks (a symbol in every chunk ranks no more than these); a symbol in no chunk
# reads every chunk once (bench.store_search's "sym kw" column: its cost at 10k and 100k chunks).
MAX_SYMBOL_MATCHES = 1000
SYMBOL_OCCURRENCES_COUNTED = 3  # like bm25's saturation: a chunk of nothing but rockets is no better a hit


@dataclass(frozen=True, slots=True)
class Dialect:
    """What symbol_sql needs to know of a backend's SQL."""

    placeholder: str  # a parameter, numbered by {n}: "?{n}", "%(s{n})s"
    find: str  # the position of a substring: instr(haystack, needle), strpos(haystack, needle)
    least: str  # the smaller of two values: min(a, b), least(a, b)


SQLITE_DIALECT = Dialect("?{n}", "instr", "min")


def symbol_sql(terms: int, first: int, dialect: Dialect, scope: str) -> str:
    """Both backends' substring search for `terms` symbols bound from parameter `first` on, `scope` a condition on
    path or "", with {table} and {limit} left to fill: (id, score) of the best, higher
    first, among the first MAX_SYMBOL_MATCHES chunks holding one; score: a symbol in the heading counts
    HEADING_WEIGHT, each place in the text 1, up to SYMBOL_OCCURRENCES_COUNTED."""
    find, least = dialect.find, dialect.least
    names = [dialect.placeholder.format(n=first + n) for n in range(terms)]
    found = " or ".join(f"{find}(text, {name}) > 0 or {find}(heading, {name}) > 0" for name in names)
    score = " + ".join(
        f"(case when {find}(heading, {name}) > 0 then {HEADING_WEIGHT} else 0 end) + "
        f"{least}({SYMBOL_OCCURRENCES_COUNTED}, (length(text) - length(replace(text, {name}, ''))) / length({name}))"
        for name in names
    )
    return (
        f"select id, {score} as score from (select id, heading, text from {{table}} where ({found}) {scope} "
        f"limit {MAX_SYMBOL_MATCHES}) as m order by score desc, id limit {{limit}}"
    )


def symbol_matches(
    conn: apsw.Connection, terms: Sequence[str], limit: int, scope: str | None = None
) -> list[tuple[int, float]]:
    """(chunk id, score) of the `limit` best chunks holding one of the symbols `terms`, best first (symbol_sql); with
    `scope`, of the chunks inside it."""
    if not terms or limit <= 0:
        return []
    where = f"and path in (select path from files where {SCOPE_FUNCTION}(?2, path))" if scope is not None else ""
    sql = symbol_sql(len(terms), 3, SQLITE_DIALECT, where).format(table="chunks", limit="?1")
    rows = conn.execute(sql, (limit, scope, *terms))
    return [(int(row[0]), float(row[1])) for row in rows]


def keyword_rows(conn: apsw.Connection) -> int:
    """How many rows the word index holds, as FTS5's bm25 counts them (its averages record)."""
    row = conn.execute(_AVERAGES_SQL).fetchone()
    values = fts5_varints(bytes(row[0])) if row is not None and row[0] else []
    return values[0] if values else 0


def term_hits(conn: apsw.Connection, term: str) -> int:
    """How many rows of the word index match one term: what bm25 counts for its idf."""
    row = conn.execute(_HITS_SQL, (term,)).fetchone()
    return int(row[0]) if row is not None else 0


def split_matches(
    conn: apsw.Connection, split: SplitQuery, limit: int, scope: str | None = None
) -> tuple[list[tuple[int, float]], bool]:
    """The best `limit` rows of the split's two queries together, as keyword_matches gives them (ties by rowid),
    and whether they are the whole OR-query's best `limit`: all of them score above what a row matching only
    the common terms can."""
    found: list[tuple[int, float]] = []
    for expression in (split.rare, split.both):
        if expression is not None:
            found.extend(keyword_matches(conn, expression, limit, scope))
    found.sort(key=lambda pair: (-pair[1], pair[0]))
    found = found[:limit]
    return found, len(found) == limit and found[-1][1] > split.bound
