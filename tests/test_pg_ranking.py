"""PostgreSQL's keyword ranking through the postings (issue 31, speed): the same bm25 list as scoring every matching
row, whichever way a query is read, and postings that follow every write."""

from __future__ import annotations

import random
import struct
import time
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

from scree.search.query import keyword_match  # noqa: E402
from scree.store import pg_keywords  # noqa: E402
from scree.store.contract import KeywordTerm  # noqa: E402
from scree.store.pg_reader import PgReader  # noqa: E402
from scree.store.pg_schema import SCHEMA_VERSION  # noqa: E402
from scree.store.pg_writer import PgWriter  # noqa: E402
from scree.store.records import FileState, NewChunk  # noqa: E402

WORDS = [f"w{n}x" for n in range(60)]  # plain tokens the English stemmer keeps as they are


def _vector(rng: random.Random) -> bytes:
    return struct.pack("<4f", *(rng.random() + 0.01 for _ in range(4)))


def _corpus(writer: PgWriter, files: int, rng: random.Random) -> None:
    """Zipf-like words, a heading on each chunk, lengths from 3 to 80 words: long and short rows, common and rare
    terms, so bm25's length term and idf both matter."""
    writer.set_model("test:ranking", 4)
    weights = [1.0 / (rank + 1) for rank in range(len(WORDS))]
    batch = []
    for n in range(files):
        chunks = []
        for ordinal in range(10):
            text = " ".join(rng.choices(WORDS, weights, k=rng.randint(3, 80)))
            heading = " ".join(rng.choices(WORDS, weights, k=2))
            chunks.append(NewChunk(ordinal, heading, text, ordinal, ordinal, f"{n}-{ordinal}", _vector(rng)))
        batch.append((FileState(f"f{n}.md", f"sha{n}", 0, 0), chunks))
    writer.replace_files(batch)


def _exact(reader: PgReader, query: str, limit: int) -> list[tuple[int, float]]:
    """The reference: bm25 over every matching row's tsvector (the scoped path scores every row it matches)."""
    return reader.keyword_lists(keyword_match(query), limit, lambda _path: True)[0]


def _same(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    """The same scores in the same order, and the same rows but where two rows tie (sums of the same terms in
    another order may differ in the last bit, so a tie's order by id is not the test)."""
    assert len(got) == len(want)
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert a == pytest.approx(b, rel=1e-9)
    rounded = [(round(score, 9), chunk) for chunk, score in want]
    last = rounded[-1][0] if rounded else 0.0
    assert {chunk for score, chunk in rounded if score > last} <= {chunk for chunk, _ in got}
    assert sorted((round(score, 9), chunk) for chunk, score in got if round(score, 9) > last) == sorted(
        entry for entry in rounded if entry[0] > last
    )


def test_keyword_lists_through_the_postings_are_the_exact_bm25_order(tmp_path: Path, pg_url: str) -> None:
    rng = random.Random(7)
    with PgWriter.open_writer(pg_url, "rank", tmp_path, None) as writer:
        _corpus(writer, 40, rng)
    with PgReader.open(pg_url, "rank", tmp_path) as reader:
        row = reader._now()
        assert row is not None
        conn = reader._db()
        stats = pg_keywords.load_stats(conn, row.id, row.version)
        queries = [" ".join(rng.sample(WORDS[:40], rng.randint(1, 4))) for _ in range(25)]
        queries += ["w0x", "w0x w1x w2x", "w59x w0x"]  # a term in most rows; a rare one beside a common one
        for query in queries:
            for limit in (1, 10, 100):
                want = _exact(reader, query, limit)
                assert want, query
                _same(reader.keyword_lists(keyword_match(query), limit)[0], want)  # as a search reads it
                words = [KeywordTerm(word) for word in query.split()]
                lexemes = [lexeme for lexeme, _ in pg_keywords.query_lexemes(conn, words)]
                hits = pg_keywords.posting_counts(conn, row.id, stats, lexemes)
                idf = [pg_keywords.bm25_idf(stats.rows, n) for n in hits]
                _same(pg_keywords.all_postings_matches(conn, row.id, stats, lexemes, idf, limit), want)
                for depth in (1, 3, 16):  # shallow first rounds: the threshold test must send it deeper
                    _same(pg_keywords.top_matches(conn, row.id, stats, lexemes, idf, limit, depth), want)


def test_part_bound_is_never_below_a_postings_part_at_the_true_average_length() -> None:
    from scree.store.pg_schema import IMPACT_AVG_LEN, IMPACT_B, IMPACT_K1

    def part(tf: int, doc_len: int, avg: float) -> float:
        return tf * (IMPACT_K1 + 1) / (tf + IMPACT_K1 * (1 - IMPACT_B + IMPACT_B * doc_len / avg))

    for avg in (3.0, 20.0, IMPACT_AVG_LEN, 90.0, 400.0):
        for tf in (1, 2, 3, 7, 40):
            for doc_len in (tf, tf + 1, 30, 200, 5000):
                impact = part(tf, doc_len, IMPACT_AVG_LEN)
                assert pg_keywords.part_bound(impact, avg) >= part(tf, doc_len, avg)


def test_postings_follow_replaced_and_deleted_files(tmp_path: Path, pg_url: str) -> None:
    rng = random.Random(3)
    with PgWriter.open_writer(pg_url, "follow", tmp_path, None) as writer:
        writer.set_model("test:ranking", 4)
        writer.replace_files(
            [(FileState("a.md", "1", 0, 0), [NewChunk(0, "Wombat", "burrows dig", 1, 2, "h1", _vector(rng))])]
        )
        writer.replace_files(
            [(FileState("b.md", "2", 0, 0), [NewChunk(0, "Numbat", "termites eat", 1, 2, "h2", _vector(rng))])]
        )
        assert writer.keyword_lists(keyword_match("wombat"), 5)[0]
        writer.replace_files(
            [(FileState("a.md", "3", 0, 0), [NewChunk(0, "Quokka", "smiles", 1, 2, "h3", _vector(rng))])]
        )
        assert writer.keyword_lists(keyword_match("wombat"), 5) == [[]]
        assert [len(found) for found in writer.keyword_lists(keyword_match("quokka numbat"), 5)] == [2]
        with writer.file_in_parts(FileState("b.md", "4", 0, 0)) as add:
            add([NewChunk(0, "Echidna", "spines", 1, 2, "h4", _vector(rng))])
        assert writer.keyword_lists(keyword_match("numbat"), 5) == [[]]
        writer.delete_files(["a.md"])
        assert writer.keyword_lists(keyword_match("quokka"), 5) == [[]]
        conn = writer._db()
        left = conn.execute("select count(*), count(distinct chunk) from scree_postings").fetchone()
        chunks = conn.execute("select coalesce(sum(length(tsv)), 0), count(*) from scree_chunks").fetchone()
        assert left == (chunks[0], chunks[1]) == (2, 1)  # "echidna" and "spine", of b.md's one chunk


def _vectors_corpus(writer: PgWriter, chunks: int, rng: random.Random) -> None:
    writer.set_model("test:hnsw", 8)
    batch = []
    for n in range(chunks // 10):
        batch.append(
            (
                FileState(f"v{n}.md", f"s{n}", 0, 0),
                [
                    NewChunk(
                        o, "h", f"t{n}x{o}", o, o, f"v{n}-{o}", struct.pack("<8f", *(rng.gauss(0, 1) for _ in range(8)))
                    )
                    for o in range(10)
                ],
            )
        )
    writer.replace_files(batch)


@pytest.mark.parametrize("above", [True, False])
def test_vector_search_goes_through_hnsw_above_the_threshold_with_its_recall_checked(
    tmp_path: Path, pg_url: str, above: bool
) -> None:
    from scree.store.pg_reader import hnsw_name

    rng = random.Random(11)
    with PgWriter.open_writer(pg_url, "vectors", tmp_path, None) as writer:
        writer.hnsw_min_chunks = 500 if above else 5000
        _vectors_corpus(writer, 600, rng)
        writer.record_full_sync(complete=True)
    with PgReader.open(pg_url, "vectors", tmp_path) as reader:
        row = reader._now()
        assert row is not None
        assert reader._has_hnsw(row) is above
        queries = [struct.pack("<8f", *(rng.gauss(0, 1) for _ in range(8))) for _ in range(20)]
        watch = reader._db()

        def scans() -> int:
            watch.execute("select pg_stat_force_next_flush()")
            found = watch.execute(
                "select coalesce(sum(idx_scan), 0) from pg_stat_user_indexes where indexrelname = %s",
                (hnsw_name(row.id),),
            ).fetchone()
            return int(found[0]) if found else 0

        before = scans()
        recall = []
        for query in queries:
            found = {chunk for chunk, _ in reader.vector_search(query, 10)}
            exact = {chunk for chunk, _ in reader.exact_vector_search(query, 10)}
            assert len(found) == 10
            recall.append(len(found & exact) / 10)
        assert sum(recall) / len(recall) >= (0.95 if above else 1.0)
        deadline = time.monotonic() + 10
        while above and scans() < before + len(queries) and time.monotonic() < deadline:
            time.sleep(0.1)  # the server's statistics reach other sessions a moment later
        assert (scans() >= before + len(queries)) is above


@pytest.mark.packaging  # runs `scree bench`'s backends part: the packaging tier, as tests/test_bench_cli.py
def test_the_backends_bench_runs_end_to_end_on_small_indexes(tmp_path: Path, pg_url: str) -> None:
    """`scree bench --database-url`'s figures on tiny sizes: every part runs and reports; kept indexes are used
    again."""
    import json
    import subprocess
    import sys

    out = tmp_path / "backends.json"
    kept = str(tmp_path / "kept")
    command = [sys.executable, "-m", "scree.benchmarks.backends", "--database-url", pg_url, "--sizes", "300",
               "--crossover", "300", "--sync-mb", "0.05", "--reuse", kept, "--json", str(out)]  # fmt: skip
    for run in range(2):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        results = json.loads(out.read_text())
        size = results["sizes"][0]
        for backend in ("sqlite", "postgres"):
            assert size[backend]["e2e_p50_ms"] > 0 and size[backend]["keyword_p50_ms"] > 0
            assert (size[backend]["build_s"] is None) is (run == 1)  # the second run used the kept indexes
        assert 0.9 <= size["postgres"]["recall_at_10"] <= 1.0
        assert results["crossover"][0]["chunks"] == 300 and results["crossover"][0]["recall_at_10"] >= 0.9
        assert results["sync"]["postgres"]["files"] == results["sync"]["sqlite"]["files"] > 0
        assert results["sync"]["postgres"]["chunks"] == results["sync"]["sqlite"]["chunks"] > 0
        assert "300 HNSW recall@10" in done.stdout.replace("0k", "") or "recall@10" in done.stdout


def test_a_schema_2_database_is_read_by_scoring_rows_then_gets_its_postings_from_its_chunks(
    tmp_path: Path, pg_url: str
) -> None:
    """Migration 3 in one transaction: a collection written before the postings existed is read as it is (rows
    scored), then, migrated by its writer, ranks through the postings exactly as before."""
    rng = random.Random(5)
    with PgWriter.open_writer(pg_url, "old", tmp_path, None) as writer:
        _corpus(writer, 8, rng)
        queries = ("w0x w3x", "w7x", "w11x w2x w30x")
        expected = {query: writer.keyword_lists(keyword_match(query), 20)[0] for query in queries}
        conn = writer._db()
        with conn.transaction():  # back to schema 2: what a scree before the postings wrote
            conn.execute("drop trigger scree_chunks_drop_postings on scree_chunks")
            conn.execute("drop function scree_drop_postings()")
            conn.execute("drop table scree_postings")
            conn.execute("delete from scree_schema where version >= 3")
    with PgReader.open(pg_url, "old", tmp_path) as reader:  # a reader upgraded before the writer
        for query, found in expected.items():
            _same(reader.keyword_lists(keyword_match(query), 20)[0], found)
    with PgWriter.open_writer(pg_url, "old", tmp_path, None) as writer:
        conn = writer._db()
        assert conn.execute("select max(version) from scree_schema").fetchone() == (SCHEMA_VERSION,)
        for query, found in expected.items():
            _same(writer.keyword_lists(keyword_match(query), 20)[0], found)
            _same(found, _exact(writer, query, 20))
        writer.delete_files(["f0.md"])  # the migrated rows go with their chunks too
        left = conn.execute("select count(*) from scree_postings p left join scree_chunks c on c.id = p.chunk "
                            "where c.id is null").fetchone()  # fmt: skip
        assert left == (0,)


def test_the_staged_insert_indexes_each_chunks_keyword_text(tmp_path: Path, pg_url: str) -> None:
    """Issue 34 through the COPY path: a chunk's tsvector (and so its postings) is made of keyword_text(path, text)
    (an .mdx chunk without its JSX), the heading weighted A."""
    from scree.content.formats import keyword_text
    from scree.store.pg_schema import TEXT_CONFIG

    rng = random.Random(2)
    text = '<Tabs items={["npm", "pnpm"]}>Wombats dig burrows with {props.claws}</Tabs>'
    with PgWriter.open_writer(pg_url, "mdx", tmp_path, None) as writer:
        writer.set_model("test:ranking", 4)
        writer.replace_files(
            [
                (FileState("a.mdx", "1", 0, 0), [NewChunk(0, "Animals", text, 1, 1, "m1", _vector(rng))]),
                (FileState("b.md", "2", 0, 0), [NewChunk(0, "Animals", text, 1, 1, "m2", _vector(rng))]),
            ]
        )
        conn = writer._db()
        for path in ("a.mdx", "b.md"):
            same = conn.execute(
                f"select tsv = setweight(to_tsvector('{TEXT_CONFIG}', 'Animals'), 'A') "
                f"|| setweight(to_tsvector('{TEXT_CONFIG}', %s), 'B') from scree_chunks where path = %s",
                (keyword_text(path, text), path),
            ).fetchone()
            assert same == (True,), path
        assert keyword_text("a.mdx", text) != keyword_text("b.md", text)


def test_a_schema_3_database_gets_its_words_apart_from_cjk(tmp_path: Path, pg_url: str) -> None:
    """Migration 4: a chunk written before it, whose English words are glued to its Chinese (one word to
    PostgreSQL's parser), is found by those words once its writer has migrated, through the postings too; an .mdx
    chunk, whose keyword text SQL cannot make, keeps its tsvector until its file is synced again."""
    from scree.store.pg_schema import POSTING_SQL, TEXT_CONFIG

    rng = random.Random(4)
    heading, text = "在Kubernetes上跑Vitess", "先创建一个keyspace，再分片。"
    with PgWriter.open_writer(pg_url, "zh", tmp_path, None) as writer:
        writer.set_model("test:ranking", 4)
        writer.replace_files(
            [
                (FileState(path, str(n), 0, 0), [NewChunk(0, heading, text, 1, 3, f"h{n}", _vector(rng))])
                for n, path in enumerate(("zh/local.md", "zh/tabs.mdx"))
            ]
        )
        conn = writer._db()
        with conn.transaction():  # back to schema 3: the tsvector as that scree made it, from the text as written
            conn.execute(
                f"update scree_chunks set tsv = setweight(to_tsvector('{TEXT_CONFIG}', heading), 'A') "
                f"|| setweight(to_tsvector('{TEXT_CONFIG}', text), 'B')"
            )
            conn.execute("delete from scree_postings")
            conn.execute(
                "insert into scree_postings(collection, lexeme, tf, doc_len, impact, chunk) "
                f"{POSTING_SQL} from scree_chunks c cross join lateral unnest(c.tsv) u"
            )
            conn.execute("delete from scree_schema where version >= 4")
        assert writer.keyword_lists(keyword_match("kubernetes keyspace"), 5)[0] == []
    with PgWriter.open_writer(pg_url, "zh", tmp_path, None) as writer:
        conn = writer._db()
        assert conn.execute("select max(version) from scree_schema").fetchone() == (SCHEMA_VERSION,)
        found = writer.keyword_lists(keyword_match("kubernetes keyspace"), 5)[0]
        paths = dict(conn.execute("select id, path from scree_chunks").fetchall())
        assert [paths[chunk_id] for chunk_id, _ in found] == ["zh/local.md"]
        _same(found, _exact(writer, "kubernetes keyspace", 5))
