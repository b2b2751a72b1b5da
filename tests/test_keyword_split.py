"""The split keyword query (keywords.split_query, searches.split_matches): its plan, and on a real SQLite file the
very rows and scores of the OR-query it stands for, over only the rows with a rarer word."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from scree.embedders.base import pack_vector
from scree.search.engine import keyword_ranking
from scree.search.query import keyword_terms
from scree.store import FileState, NewChunk, SqliteWriter, searches
from scree.store.keywords import (
    BM25_K1,
    FLOOR_IDF,
    floor_weight,
    fts5_idf,
    fts5_term,
    fts5_varints,
    split_query,
    wide_split,
)

DIMS = 8


def fts_match_terms(query: str) -> list[str]:
    """`query`'s terms as the FTS5 strings the SQLite store matches."""
    return [fts5_term(term) for term in keyword_terms(query)]


def test_a_term_in_half_of_the_rows_or_more_has_the_floor_weight() -> None:
    assert floor_weight(10, 5) and floor_weight(10, 10) and floor_weight(11, 6)
    assert not floor_weight(10, 4) and not floor_weight(11, 5)


def test_split_keeps_the_phrases_in_the_or_querys_order() -> None:
    rows = 100
    plan = split_query(['"a"', '"b"', '"c"'], [3, 80, 10], rows)
    assert plan is not None
    assert (plan.rare, plan.both) == ('("a" OR "c") NOT "b"', '"b" AND ("a" OR "c")')  # b, a, c: a and b swapped
    assert plan.bound == pytest.approx(FLOOR_IDF * (BM25_K1 + 1.0))
    plan = split_query(['"a"', '"c"', '"b"'], [3, 10, 80], rows)
    assert plan is not None and plan.both == '("a" OR "c") AND "b"'
    plan = split_query(['"b"', '"x"', '"a"', '"c"'], [80, 60, 3, 10], rows)
    assert plan is not None and plan.both == '("b" OR "x") AND ("a" OR "c")'
    assert split_query(['"a"', '"b"', '"c"', '"x"'], [3, 80, 10, 60], rows) is None  # a b c x: no order keeps it
    assert split_query(['"a"', '"c"'], [3, 10], rows) is None  # nothing to split off
    every = split_query(['"b"', '"x"'], [80, 60], rows)
    assert every is not None and (every.rare, every.both) == (None, None)
    assert every.bound == pytest.approx(2 * FLOOR_IDF * (BM25_K1 + 1.0))


def test_a_wide_split_sets_apart_the_frequent_words_the_rarer_ones_outscore() -> None:
    rows = 1000
    terms = ['"his"', '"beba"', '"the"']
    plan = wide_split(terms, [240, 45, 990], rows, 10)
    assert plan is not None and not plan.floor_only
    assert (plan.rare, plan.both) == ('"beba" NOT ("his" OR "the")', '"beba" AND ("his" OR "the")')  # b, h, t
    assert plan.bound == pytest.approx((fts5_idf(rows, 240) + FLOOR_IDF) * (BM25_K1 + 1.0))
    assert wide_split(terms, [240, 45, 990], rows, 100) is None  # beba's 45 rows cannot fill 100: nothing more
    assert wide_split(terms, [240, 200, 990], rows, 10) is None  # beba is too common to outscore his
    floor = split_query(terms, [240, 45, 990], rows)
    assert floor is not None and floor.floor_only and floor.rare == '("his" OR "beba") NOT "the"'
    assert fts5_idf(rows, 500) == FLOOR_IDF and fts5_idf(rows, 10) > 4


def test_fts5_varints_read_sqlite_varints() -> None:
    assert fts5_varints(bytes.fromhex("868D2092A76082EE9B00")) == [100_000, 300_000, 6_000_000]
    assert fts5_varints(b"\x00\x7f\x81\x00") == [0, 127, 128]
    assert fts5_varints(b"\xff" * 8 + b"\x01") == [(2**56 - 1) << 8 | 1]


# --- on a real index ---

COMMON = ["alpha", "beta"]  # in most chunks: floor-weight
MID = "mu"  # in a third of them
RARE = ["gamma", "delta", "epsilon", "zeta", "theta", "kappa"]
FILLER = [f"w{n}" for n in range(40)]


def _text(rng: random.Random) -> str:
    words = [rng.choice(FILLER) for _ in range(rng.randint(3, 30))]
    for word in COMMON:
        if rng.random() < 0.8:
            words.extend([word] * rng.randint(1, 3))
    if rng.random() < 0.35:
        words.extend([MID] * rng.randint(1, 2))
    for word in RARE:
        if rng.random() < 0.08:
            words.extend([word] * rng.randint(1, 2))
    rng.shuffle(words)
    return " ".join(words)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteWriter]:
    folder = tmp_path / "notes"
    folder.mkdir()
    rng = random.Random(3)
    with SqliteWriter.open(tmp_path / "index.db", folder) as opened:
        opened.set_model("hash:test", DIMS)
        batch = []
        for number in range(60):
            chunks = []
            for ordinal in range(10):
                text = _text(rng)
                heading = rng.choice(["Intro", "Alpha notes", "Gamma", "Usage"])
                digest = hashlib.sha256(f"{number}-{ordinal}".encode()).hexdigest()
                chunks.append(NewChunk(ordinal, heading, text, 1, 1, digest, pack_vector([1.0] * DIMS)))
            batch.append((FileState(f"d{number}.md", "sha", 0, 0), chunks))
        opened.replace_files(batch)
        yield opened


def _conn(store: SqliteWriter) -> apsw.Connection:
    conn: apsw.Connection = store._conn  # the SqliteWriter's own connection, to run the searches module's queries
    return conn


QUERIES = [
    "alpha gamma",
    "gamma alpha",
    "gamma delta alpha",
    "alpha gamma beta",
    "beta alpha epsilon zeta",
    "epsilon beta alpha",
    "zeta theta kappa alpha",
    "alpha beta",
    "kappa beta",
    "nothing alpha",
    "mu gamma",
    "gamma mu alpha",
    "mu alpha gamma delta epsilon",
    "mu",
]


@pytest.mark.parametrize("limit", [1, 5, 20, 100])
def test_split_matches_are_the_or_querys_own_top_rows(store: SqliteWriter, limit: int) -> None:
    conn = _conn(store)
    rows = searches.keyword_rows(conn)
    assert rows == 600
    wholes = {True: 0, False: 0}
    for query in QUERIES:
        terms = fts_match_terms(query)
        hits = [searches.term_hits(conn, term) for term in terms]
        everything = searches.keyword_matches(conn, " OR ".join(terms), 10_000)
        plans = [split_query(terms, hits, rows), wide_split(terms, hits, rows, limit)]
        assert plans[0] is not None or MID in query, query
        for plan in (plan for plan in plans if plan is not None):
            found, whole = searches.split_matches(conn, plan, limit)
            if whole:
                wholes[plan.floor_only] += 1
                assert found == everything[:limit], query
            else:  # short, or a row with common words alone might outrank the last
                assert len(found) < limit or found[-1][1] <= plan.bound, query
            # either way: the OR-query's ranking of the rows with a rarer word, scores to the last bit
            rare_terms = [term for term in terms if plan.rare is not None and term in plan.rare.split(" NOT ")[0]]
            rare = " OR ".join(rare_terms)
            with_rare = {chunk_id for chunk_id, _ in searches.keyword_matches(conn, rare, 10_000)} if rare else set()
            assert found == [pair for pair in everything if pair[0] in with_rare][:limit], query
    assert wholes[True] >= (5 if limit <= 5 else 1)
    assert wholes[False] >= (1 if limit <= 20 else 0)


def test_a_large_index_answers_with_the_split_what_the_or_query_does(tmp_path: Path) -> None:
    """From SPLIT_MIN_ROWS rows up, the keyword search splits queries with floor-weight words: the same list."""
    folder = tmp_path / "notes"
    folder.mkdir()
    rng = random.Random(5)
    per_file = 500
    with SqliteWriter.open(tmp_path / "index.db", folder) as store:
        store.set_model("hash:test", DIMS)
        vector = pack_vector([1.0] * DIMS)
        for number in range(searches.SPLIT_MIN_ROWS // per_file):
            chunks = [NewChunk(n, "", _text(rng), 1, 1, f"{number}-{n}", vector) for n in range(per_file)]
            store.replace_files([(FileState(f"d{number}.md", "sha", 0, 0), chunks)])
        conn = _conn(store)
        assert searches.keyword_rows(conn) == searches.SPLIT_MIN_ROWS
        for query in [*QUERIES, "alpha", "gamma", "gamma delta"]:
            expected = searches.keyword_matches(conn, " OR ".join(fts_match_terms(query)), 100)
            assert keyword_ranking(store, query, 100) == expected, query
            assert keyword_ranking(store, query, 7) == expected[:7], query
        # floor_alone=False (a hybrid search's keyword list): the chunks with a rarer word, ranked as before
        for query in QUERIES:
            terms = fts_match_terms(query)
            everything = searches.keyword_matches(conn, " OR ".join(terms), 20_000)
            rows = searches.keyword_rows(conn)
            rare = [term for term in terms if not floor_weight(rows, searches.term_hits(conn, term))]
            with_rare = {c for c, _ in searches.keyword_matches(conn, " OR ".join(rare), 20_000)} if rare else set()
            assert (
                keyword_ranking(store, query, 100, floor_alone=False)
                == [pair for pair in everything if pair[0] in with_rare][:100]
            ), query
        assert keyword_ranking(store, "alpha beta", 10, floor_alone=False) == []
        assert len(keyword_ranking(store, "alpha beta", 10)) == 10


def test_below_the_split_size_floor_weight_words_still_match_alone(store: SqliteWriter) -> None:
    assert len(keyword_ranking(store, "alpha beta", 10, floor_alone=False)) == 10
    assert keyword_ranking(store, "nothing alpha", 50, floor_alone=False) == keyword_ranking(store, "alpha", 50)
