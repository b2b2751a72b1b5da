"""Keyword ranking in PostgreSQL (issue 31): FTS5's bm25, computed in SQL over a tsvector, so both backends feed
the same lists to the search's fusion.

FTS5's bm25 (fts5_aux.c) with column weights: for each query term t, idf(t) = ln((N - n_t + 0.5) / (n_t + 0.5)),
floored at 1e-6; a row's score adds idf(t) x tf x (k1 + 1) / (tf + k1 x (1 - b + b x dl / avgdl)) over its terms,
where tf counts the term's places weighted by column (heading 2, text 1) and dl counts the row's tokens. Here tf
comes from the tsvector's positions and their weights (A: heading, B: text), dl is stored with the row, N, avgdl
and n_t are counted once per change of the collection. Stems are PostgreSQL's Snowball English (Porter2) where
FTS5 has Porter, and PostgreSQL's English config drops stop words from documents: those are the differences.

An OR-query of whole words over a whole collection (every search but a scoped one or one with a `tok*` prefix)
reads the postings table (pg_schema.M002: a row per word and chunk with the word's tf, the chunk's length and an
impact) and never a chunk's row: all postings of its words when they are few (ALL_POSTINGS_MAX), else each word's
best postings first until no unread row can reach the list (top_matches, Fagin's threshold algorithm). Both give
exactly the list that scoring every matching row gives (tests/test_pg_ranking.py). The scoped and prefix queries
score the matching rows' tsvectors (word_matches' SQL below), ranked first only among the candidates that hold a
term found in fewer than half of the rows when those are enough to fill the list (keywords.split_query's idea).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from scree.content.cjk import cjk_pairs
from scree.store.contract import KeywordTerm
from scree.store.keywords import BM25_K1, FLOOR_IDF, floor_weight
from scree.store.pg_schema import TEXT_CONFIG

BM25_B = 0.75
HEADING_WEIGHT, TEXT_WEIGHT = 2.0, 1.0
MAX_COUNTED_TERMS = 4096


def bm25_idf(rows: int, hits: int) -> float:
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else FLOOR_IDF


@dataclass(slots=True)
class Stats:
    """One collection's keyword statistics at one version (rows, average length, rows per term)."""

    version: int
    rows: int
    avg_len: float
    hits: dict[tuple[str, bool], int] = field(default_factory=dict)
    cjk_rows: int = 0
    cjk_avg_len: float = 0.0
    cjk_hits: dict[str, int] = field(default_factory=dict)


def load_stats(conn: psycopg.Connection[Any], collection: int, version: int) -> Stats:
    row = conn.execute(
        "select count(*), coalesce(avg(doc_len), 0), count(*) filter (where cardinality(cjk) > 0), "
        "coalesce(avg(cardinality(cjk)) filter (where cardinality(cjk) > 0), 0) "
        "from scree_chunks where collection = %s",
        (collection,),
    ).fetchone()
    assert row is not None
    return Stats(version, int(row[0]), float(row[1]), cjk_rows=int(row[2]), cjk_avg_len=float(row[3]))


def query_lexemes(conn: psycopg.Connection[Any], terms: Sequence[KeywordTerm]) -> list[tuple[str, bool]]:
    """Each term (KeywordMatch.terms) as the lexemes the index holds: (lexeme, is a prefix)."""
    words = [term.word for term in terms]
    prefixes = [term.prefix for term in terms]
    rows = conn.execute(
        f"select w.n, u.lexeme from unnest(%s::text[]) with ordinality as w(word, n) "
        f"cross join lateral unnest(to_tsvector('{TEXT_CONFIG}', w.word)) as u",
        (words,),
    ).fetchall()
    found: dict[tuple[str, bool], None] = {}
    for number, lexeme in rows:
        found.setdefault((str(lexeme), prefixes[int(number) - 1]), None)
    return list(found)


def _tsquery(lexemes: list[tuple[str, bool]]) -> str:
    """An OR tsquery of the lexemes, each quoted as a tsquery literal (no user text reaches its syntax)."""
    parts = []
    for lexeme, prefix in lexemes:
        quoted = "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
        parts.append(quoted + (":*" if prefix else ""))
    return " | ".join(parts)


def _hits(conn: psycopg.Connection[Any], collection: int, stats: Stats, lexemes: list[tuple[str, bool]]) -> list[int]:
    if len(stats.hits) > MAX_COUNTED_TERMS:
        stats.hits.clear()
    for lexeme in lexemes:
        if lexeme not in stats.hits:
            row = conn.execute(
                "select count(*) from scree_chunks where collection = %s and tsv @@ %s::tsquery",
                (collection, _tsquery([lexeme])),
            ).fetchone()
            stats.hits[lexeme] = int(row[0]) if row else 0
    return [stats.hits[lexeme] for lexeme in lexemes]


_WORD_SQL = """
select c.id, sum(q.idf * t.tf * %(k1p1)s / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * c.doc_len / %(avg)s))) as score
from scree_chunks c
cross join lateral (
    -- tf: each place of the term, weighted by column (A: heading, B: text), counted for the query's terms only
    select u.lexeme,
           %(tw)s * cardinality(u.weights) + (%(hw)s - %(tw)s) * cardinality(array_positions(u.weights, 'A')) as tf
    from unnest(c.tsv) u
    where u.lexeme = any(%(lexemes)s) or (%(any_prefix)s and u.lexeme ^@ any(%(lexemes)s))
) t
join unnest(%(lexemes)s::text[], %(prefix)s::boolean[], %(idf)s::float8[]) as q(lexeme, prefix, idf)
    on t.lexeme = q.lexeme or (q.prefix and starts_with(t.lexeme, q.lexeme))
where c.collection = %(c)s and c.tsv @@ %(query)s::tsquery {scope}
group by c.id
order by score desc, c.id
limit %(limit)s
"""


def word_matches(
    conn: psycopg.Connection[Any],
    collection: int,
    stats: Stats,
    terms: Sequence[KeywordTerm],
    limit: int,
    paths: list[str] | None,
    *,
    floor_alone: bool,
    postings: bool = True,
) -> list[tuple[int, float]]:
    """(chunk id, bm25 score, higher is better) of the `limit` best rows for the OR-query of `terms`; `postings`
    False: the schema has none yet (a reader before its writer migrated), every query scores rows."""
    lexemes = query_lexemes(conn, terms)
    if not lexemes or stats.rows == 0:
        return []
    if postings and paths is None and not any(prefix for _, prefix in lexemes):
        return _whole_words(conn, collection, stats, [lexeme for lexeme, _ in lexemes], limit, floor_alone=floor_alone)
    hits = _hits(conn, collection, stats, lexemes)
    idf = [bm25_idf(stats.rows, n) for n in hits]
    scope = "and c.path = any(%(paths)s)" if paths is not None else ""
    params: dict[str, Any] = {
        "k1p1": BM25_K1 + 1.0,
        "k1": BM25_K1,
        "b": BM25_B,
        "avg": max(stats.avg_len, 1.0),
        "hw": HEADING_WEIGHT,
        "tw": TEXT_WEIGHT,
        "lexemes": [lexeme for lexeme, _ in lexemes],
        "prefix": [prefix for _, prefix in lexemes],
        "any_prefix": any(prefix for _, prefix in lexemes),
        "idf": idf,
        "c": collection,
        "limit": limit,
        "paths": paths,
    }

    def ranked_over(candidates: list[tuple[str, bool]]) -> list[tuple[int, float]]:
        rows = conn.execute(_WORD_SQL.format(scope=scope), {**params, "query": _tsquery(candidates)}).fetchall()
        return [(int(row[0]), float(row[1])) for row in rows]

    # Candidates: the rows with the rarest terms, as few terms as fill the list; a row with only the others scores
    # at most their idfs x (k1 + 1) (bm25's bound per term), so when the list's last score is above that, the list
    # is the whole OR-query's (keywords.wide_split's argument, here on term sets).
    order = sorted(range(len(lexemes)), key=lambda i: hits[i])
    reach = next((n for n in range(len(order)) if sum(hits[i] for i in order[: n + 1]) >= limit), len(order) - 1)
    rare, common = order[: reach + 1], order[reach + 1 :]
    if common:
        found = ranked_over([lexemes[i] for i in rare])
        bound = sum(idf[i] for i in common) * (BM25_K1 + 1.0) * (1 + 1e-9)
        if len(found) == limit and found[-1][1] > bound:
            return found
    floor = [i for i, n in enumerate(hits) if floor_weight(stats.rows, n)]
    if floor and len(floor) < len(lexemes) and not floor_alone:  # a hybrid search: its vectors rank those rows
        return ranked_over([lexemes[i] for i in range(len(lexemes)) if i not in floor])
    return ranked_over(lexemes)


# --- postings (pg_schema.M002): the top rows of an OR-query of whole words without reading every matching chunk ---

ALL_POSTINGS_MAX = 40_000  # a query whose terms have at most this many postings together scores them all
TOP_DEPTH = 256  # else: postings read per term in the first round; each further round reads TOP_DEPTH_GROWTH x more
TOP_DEPTH_GROWTH = 8

_ALL_POSTINGS_SQL = """
select p.chunk, sum(q.idf * p.tf * %(k1p1)s / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.doc_len / %(avg)s))) as score
from unnest(%(lexemes)s::text[], %(idf)s::float8[]) as q(lexeme, idf)
cross join lateral (
    select chunk, tf, doc_len from scree_postings
    where collection = %(c)s and lexeme = q.lexeme
    offset 0  -- each term's postings from the btree, whatever the planner's statistics say
) p
group by p.chunk
order by score desc, p.chunk
limit %(limit)s
"""

_TOP_POSTINGS_SQL = """
select q.n, p.chunk, p.tf, p.doc_len, p.impact
from unnest(%(lexemes)s::text[]) with ordinality as q(lexeme, n)
cross join lateral (
    select chunk, tf, doc_len, impact from scree_postings
    where collection = %(c)s and lexeme = q.lexeme
    order by impact desc
    limit %(depth)s
) p
"""

_LOOKUP_SQL = """
select i.chunk, p.lexeme, p.tf, p.doc_len
from unnest(%(ids)s::bigint[]) as i(chunk)
cross join lateral (
    select p.lexeme, p.tf, p.doc_len from scree_postings p
    where p.chunk = i.chunk and p.lexeme = any(%(lexemes)s::text[])
    offset 0  -- a lookup per candidate on (chunk, lexeme): never a hash of every posting of a common term
) p
"""


def posting_counts(conn: psycopg.Connection[Any], collection: int, stats: Stats, lexemes: list[str]) -> list[int]:
    """How many rows hold each lexeme (bm25's n_t), counted on the postings' btree and kept per version."""
    if len(stats.hits) > MAX_COUNTED_TERMS:
        stats.hits.clear()
    for lexeme in lexemes:
        if (lexeme, False) not in stats.hits:
            row = conn.execute(
                "select count(*) from scree_postings where collection = %s and lexeme = %s", (collection, lexeme)
            ).fetchone()
            stats.hits[(lexeme, False)] = int(row[0]) if row else 0
    return [stats.hits[(lexeme, False)] for lexeme in lexemes]


def part_bound(impact: float, avg_len: float) -> float:
    """The most a posting's bm25 tf part can be at the average length `avg_len` when its impact (the tf part at
    IMPACT_AVG_LEN) is at most `impact`. With c = k1(1 - b), a posting of tf t and impact i has length term
    k1 b dl / IMPACT_AVG_LEN = t (k1 + 1) / i - t - c, so at avg_len its tf part is t (k1 + 1) / (t + c + r (t (k1 + 1)
    / i - t - c)), r = IMPACT_AVG_LEN / avg_len: a linear-fractional function of t, so highest at one end of the tfs
    that i allows (t >= 1, dl >= 0: t >= c / ((k1 + 1) / i - 1)) or as t grows without end."""
    from scree.store.pg_schema import IMPACT_AVG_LEN

    top = BM25_K1 + 1.0
    impact = impact * (1 + 1e-6) + 1e-9  # impacts are float4
    if impact >= top:
        return top
    r = IMPACT_AVG_LEN / max(avg_len, 1e-9)
    c = BM25_K1 * (1 - BM25_B)
    slope = top / impact - 1.0

    def part(t: float) -> float:
        return t * top / (t + c + r * (t * top / impact - t - c))

    limit = top / (1.0 + r * slope)  # t without end
    return min(top, max(part(max(1.0, c / slope)), limit) * (1 + 1e-9))


def _params(collection: int, stats: Stats, lexemes: list[str], idf: list[float], limit: int) -> dict[str, Any]:
    return {
        "k1p1": BM25_K1 + 1.0,
        "k1": BM25_K1,
        "b": BM25_B,
        "avg": max(stats.avg_len, 1.0),
        "lexemes": lexemes,
        "idf": idf,
        "c": collection,
        "limit": limit,
    }


def all_postings_matches(
    conn: psycopg.Connection[Any], collection: int, stats: Stats, lexemes: list[str], idf: list[float], limit: int
) -> list[tuple[int, float]]:
    """bm25 of every row holding one of `lexemes`, from their postings alone (tf and length stored there)."""
    rows = conn.execute(_ALL_POSTINGS_SQL, _params(collection, stats, lexemes, idf, limit)).fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]


def top_matches(
    conn: psycopg.Connection[Any],
    collection: int,
    stats: Stats,
    lexemes: list[str],
    idf: list[float],
    limit: int,
    depth: int = TOP_DEPTH,
) -> list[tuple[int, float]]:
    """The same list as all_postings_matches, reading each term's postings best first (Fagin's threshold algorithm
    on the impact-ordered btree, exact).

    Each round reads every term's `depth` highest-impact postings (tf and length with them: each one's bm25 part is
    exact). A row found under some terms may hold others whose lists were not read to their end: it is looked up
    (on the postings' (chunk, lexeme) btree) unless even their most (part_bound of each list's last impact) could
    not lift it to the list's last place. The round ends the search when the list is full and its last score is at
    least what a row never read could score: the sum, over the lists not read to their end, of idf x part_bound.
    Otherwise the next round reads TOP_DEPTH_GROWTH times deeper."""
    avg = max(stats.avg_len, 1.0)
    length = [BM25_K1 * (1 - BM25_B), BM25_K1 * BM25_B / avg]

    def part(tf: int, doc_len: int) -> float:
        return tf * (BM25_K1 + 1.0) / (tf + length[0] + length[1] * doc_len)

    index = {lexeme: n for n, lexeme in enumerate(lexemes)}
    while True:
        rows = conn.execute(_TOP_POSTINGS_SQL, {"lexemes": lexemes, "c": collection, "depth": depth}).fetchall()
        known: dict[int, float] = {}
        seen: dict[int, set[int]] = {}
        read = [0] * len(lexemes)
        last = [0.0] * len(lexemes)
        for number, chunk, tf, doc_len, impact in rows:
            term = int(number) - 1
            known[chunk] = known.get(chunk, 0.0) + idf[term] * part(tf, doc_len)
            seen.setdefault(chunk, set()).add(term)
            read[term] += 1
            last[term] = float(impact)
        if not known:
            return []
        open_terms = [t for t in range(len(lexemes)) if read[t] >= depth]  # not read to their end
        room = {t: idf[t] * part_bound(last[t], stats.avg_len) for t in open_terms}
        unread = sum(room.values())
        lowest = sorted(known.values(), reverse=True)
        floor = lowest[limit - 1] if len(lowest) >= limit else 0.0
        wanted = [
            chunk
            for chunk, score in known.items()
            if any(t not in seen[chunk] for t in open_terms)
            and score + sum(room[t] for t in open_terms if t not in seen[chunk]) >= floor
        ]
        if wanted:
            found = conn.execute(_LOOKUP_SQL, {"ids": wanted, "lexemes": [lexemes[t] for t in open_terms]})
            for chunk, lexeme, tf, doc_len in found.fetchall():
                term = index[str(lexeme)]
                if term not in seen[chunk]:
                    seen[chunk].add(term)
                    known[chunk] += idf[term] * part(tf, doc_len)
        ranked = sorted(known.items(), key=lambda item: (-item[1], item[0]))[:limit]
        if not open_terms or (len(ranked) == limit and ranked[-1][1] >= unread):
            return ranked
        depth *= TOP_DEPTH_GROWTH


def _whole_words(
    conn: psycopg.Connection[Any], collection: int, stats: Stats, lexemes: list[str], limit: int, *, floor_alone: bool
) -> list[tuple[int, float]]:
    """An OR-query of whole words over the whole collection, through the postings: every posting of its terms when
    they are few (ALL_POSTINGS_MAX), else each term's best ones first (top_matches). A hybrid search (floor_alone
    False) leaves out the words in half of the rows or more when it has others, as word_matches does."""
    hits = posting_counts(conn, collection, stats, lexemes)
    floor = [floor_weight(stats.rows, n) for n in hits]
    if not floor_alone and any(floor) and not all(floor):
        kept = [i for i in range(len(lexemes)) if not floor[i]]
        lexemes, hits = [lexemes[i] for i in kept], [hits[i] for i in kept]
    idf = [bm25_idf(stats.rows, n) for n in hits]
    if sum(hits) <= ALL_POSTINGS_MAX:
        return all_postings_matches(conn, collection, stats, lexemes, idf, limit)
    return top_matches(conn, collection, stats, lexemes, idf, limit)


_CJK_SQL = """
select c.id, sum(q.idf * t.tf * %(k1p1)s / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * cardinality(c.cjk) / %(avg)s)))
    as score
from scree_chunks c
cross join lateral (select p, count(*) as tf from unnest(c.cjk) p where p = any(%(pairs)s) group by p) t
join unnest(%(pairs)s::text[], %(idf)s::float8[]) as q(pair, idf) on t.p = q.pair
where c.collection = %(c)s and cardinality(c.cjk) > 0 and c.cjk && %(pairs)s::text[] {scope}
group by c.id
order by score desc, c.id
limit %(limit)s
"""


def cjk_row_pairs(heading: str, text: str) -> list[str]:
    """What a chunk's CJK array holds: its heading's pairs twice (FTS5's heading weight 2), then its text's."""
    head = cjk_pairs(heading)
    return [*head, *head, *cjk_pairs(text)]


def cjk_matches(
    conn: psycopg.Connection[Any],
    collection: int,
    stats: Stats,
    query_pairs: Sequence[str],
    limit: int,
    paths: list[str] | None,
) -> list[tuple[int, float]] | None:
    """bm25 over a query's distinct CJK character pairs (KeywordMatch.cjk_pairs), as the SQLite backend's CJK table
    ranks them; None when there are none."""
    pairs = list(query_pairs)
    if not pairs:
        return None
    if stats.cjk_rows == 0:
        return []
    for pair in pairs:
        if pair not in stats.cjk_hits:
            row = conn.execute(
                "select count(*) from scree_chunks where collection = %s and cardinality(cjk) > 0 and cjk @> %s",
                (collection, [pair]),
            ).fetchone()
            stats.cjk_hits[pair] = int(row[0]) if row else 0
    idf = [bm25_idf(stats.cjk_rows, stats.cjk_hits[pair]) for pair in pairs]
    scope = "and c.path = any(%(paths)s)" if paths is not None else ""
    params = {
        "k1p1": BM25_K1 + 1.0,
        "k1": BM25_K1,
        "b": BM25_B,
        "avg": max(stats.cjk_avg_len, 1.0),
        "pairs": pairs,
        "idf": idf,
        "c": collection,
        "limit": limit,
        "paths": paths,
    }
    rows = conn.execute(_CJK_SQL.format(scope=scope), params).fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]
