"""The index store on real SQLite files: round trips, orphans, R-F3 mismatches, migrations, KNN, R-S2 under SIGKILL.

Vector search is exact up to EXACT_SEARCH_MAX_CHUNKS and two-stage above it (sign-bit candidates, exact rescoring).
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import numpy as np
import pytest
import sqlite_vec
from backends import Backend

from scree.content.chunking import EMBED_FORMAT
from scree.embedders.base import pack_vector
from scree.errors import IndexCorruptError, IndexMismatchError, IndexUnavailableError
from scree.index.model_policy import check_model
from scree.search.engine import keyword_ranking
from scree.search.query import keyword_terms
from scree.store import (
    SCHEMA_VERSION,
    FileState,
    IndexRecord,
    IndexWriter,
    KeywordTerm,
    NewChunk,
    SqliteReader,
    SqliteWriter,
    searches,
)
from scree.store.connection import register_functions
from scree.store.keywords import fts5_expression, fts5_term
from scree.store.schema import migrate
from scree.store.searches import EXACT_SEARCH_MAX_CHUNKS, OVERSAMPLE
from scree.store.sign_bits import nearest_positions, popcount, popcount_by_bytes
from scree.store.writes import ROWS_PER_INSERT

DIMS = 8
MODEL = "hash:test"


# --- helpers ---


def vector(seed: str, dims: int = DIMS) -> bytes:
    """A deterministic unit vector from a seed string."""
    digest = hashlib.sha256(seed.encode()).digest()
    return pack_vector([digest[i % len(digest)] - 127.5 + i for i in range(dims)])


def chunk(ordinal: int, text: str, heading: str = "Title", dims: int = DIMS) -> NewChunk:
    text_hash = hashlib.sha256(text.encode()).hexdigest()
    return NewChunk(ordinal, heading, text, ordinal * 10 + 1, ordinal * 10 + 5, text_hash, vector(text, dims))


def state(path: str, tag: str = "v1") -> FileState:
    return FileState(path, hashlib.sha256(f"{path}{tag}".encode()).hexdigest(), 1_700_000_000_000_000_000, 100)


def raw(db_path: Path) -> apsw.Connection:
    """A plain connection with sqlite-vec loaded, to look at tables the way no SqliteWriter method does."""
    conn = apsw.Connection(str(db_path))
    conn.enable_load_extension(True)
    conn.load_extension(str(sqlite_vec.loadable_path()))
    register_functions(conn)  # the word index reads chunks through scree_keyword_text (issue 34)
    return conn


def row_counts(db_path: Path) -> tuple[int, int, int]:
    """(chunks, vectors, keyword-index rows) and FTS5's own check that its index matches the chunks table.

    Every vector has its sign bits beside it (the test model's 8 dimensions are binary-quantizable), and neither
    a vector nor its bits outlive their chunk.
    """
    conn = raw(db_path)
    try:
        conn.execute("insert into chunks_fts(chunks_fts, rank) values ('integrity-check', 1)")
        chunks = conn.execute("select count(*) from chunks").fetchone()[0]
        vectors = conn.execute("select count(*) from chunk_vectors").fetchone()[0]
        bits = conn.execute("select count(*) from chunk_vector_bits").fetchone()[0]
        keyword_rows = conn.execute("select count(*) from chunks_fts_docsize").fetchone()[0]
        orphans = conn.execute(
            "select (select count(*) from chunk_vectors where chunk_id not in (select id from chunks)) "
            "+ (select count(*) from chunk_vector_bits where chunk_id not in (select id from chunks))"
        ).fetchone()[0]
    finally:
        conn.close()
    assert orphans == 0
    assert bits == vectors
    return chunks, vectors, keyword_rows


def unit_rows(rng: np.random.Generator, count: int, dims: int) -> np.ndarray:
    matrix = rng.standard_normal((count, dims)).astype("<f4")
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def topic_vectors(rng: np.random.Generator, count: int, dims: int, topics: np.ndarray) -> np.ndarray:
    """Unit vectors the way text embeddings cluster: a shared direction, a mix of two topics, and noise."""
    picked = topics[rng.integers(0, len(topics), (count, 2))]
    weights = rng.dirichlet([0.5, 0.5], count).astype("<f4")
    mixed = 0.5 * topics[0] + np.einsum("nt,ntd->nd", weights, picked) + 0.7 * unit_rows(rng, count, dims)
    return mixed / np.linalg.norm(mixed, axis=1, keepdims=True)


def fill(store: SqliteWriter, matrix: np.ndarray, path: str = "all.md") -> list[int]:
    """One file with a chunk per row of `matrix`; returns the chunk id of each row."""
    rows = [NewChunk(i, "", f"row {i}", 1, 1, f"h{i}", matrix[i].tobytes()) for i in range(len(matrix))]
    store.replace_files([(state(path), rows)])
    return [c.id for c in store.chunks_for_path(path)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    return notes


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "indexes" / "notes-0123" / "index.db"


@pytest.fixture
def store(db_path: Path, folder: Path) -> Iterator[SqliteWriter]:
    with SqliteWriter.open(db_path, folder) as opened:
        opened.set_model(MODEL, DIMS)
        yield opened


@pytest.fixture
def any_store(index_backend: Backend, folder: Path) -> Iterator[IndexWriter]:
    """The store on each backend in turn (tests/backends.py): what the IndexWriter contract promises on both."""
    with index_backend.writer(folder) as opened:
        opened.set_model(MODEL, DIMS)
        yield opened


def stored_rows(backend: Backend, store: IndexWriter) -> tuple[int, int, int]:
    """(chunks, vectors, keyword rows) as the backend's own tables hold them: row_counts for SQLite; PostgreSQL
    keeps each chunk's vector and tsvector in its row, so its check is that none is missing."""
    if backend.url is None:
        return row_counts(backend.db_path)
    import psycopg

    with psycopg.connect(backend.url) as conn:
        found = conn.execute(
            "select count(*), count(c.embedding), count(c.tsv) from scree_chunks c "
            "join scree_collections k on k.id = c.collection where k.name = %s",
            (backend.collection,),
        ).fetchone()
    assert found is not None and store.integrity_check() == "ok"
    return int(found[0]), int(found[1]), int(found[2])


# --- opening, modes, folder (R-F2, R-F3) ---


def test_new_index_is_private_and_records_folder_and_schema(db_path: Path, folder: Path) -> None:
    with SqliteWriter.open(db_path, folder) as store:
        assert store.model() is None
        store.set_model(MODEL, DIMS)
        store.replace_files([(state("a.md"), [chunk(0, "alpha")])])
        assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700
        for suffix in ("", "-wal", "-shm"):
            assert stat.S_IMODE(Path(f"{db_path}{suffix}").stat().st_mode) == 0o600, suffix
        assert store.get_meta("folder") == str(folder.resolve())
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert store.get_meta("created")
        assert store.model() == (MODEL, DIMS)
        journal = raw(db_path).execute("pragma journal_mode").fetchone()[0]
        assert journal == "wal"


def test_other_folder_is_refused_naming_both(db_path: Path, folder: Path, tmp_path: Path) -> None:
    SqliteWriter.open(db_path, folder).close()
    other = tmp_path / "other"
    other.mkdir()
    for kind in (SqliteWriter, SqliteReader):
        with pytest.raises(IndexMismatchError) as caught:
            kind.open(db_path, other)
        assert str(folder.resolve()) in str(caught.value) and str(other.resolve()) in str(caught.value)


def test_readonly_missing_index_is_empty(db_path: Path, folder: Path) -> None:
    with SqliteReader.open(db_path, folder) as store:
        assert not store.exists
        assert store.model() is None
        assert store.counts() == (0, 0)
        assert store.vector_search(vector("q"), 5) == []
        assert keyword_ranking(store, "anything", 5) == []
        assert not hasattr(store, "set_meta")  # a reader's type has no writes
    assert not db_path.exists()


def test_readonly_sees_writes_and_refuses_writing(any_store: IndexWriter, index_backend: Backend, folder: Path) -> None:
    store = any_store
    store.replace_files([(state("a.md"), [chunk(0, "alpha beta")])])
    with index_backend.reader(folder) as reader:
        assert reader.exists
        assert reader.counts() == (1, 1)
        assert reader.integrity_check() == "ok"
        assert not hasattr(reader, "delete_files")  # a reader's type has no writes
        store.replace_files([(state("b.md"), [chunk(0, "gamma")])])
        assert reader.counts() == (2, 2) and reader.file_count() == 2


def test_foreign_and_garbage_files_are_refused(tmp_path: Path, folder: Path) -> None:
    foreign = tmp_path / "foreign.db"
    conn = apsw.Connection(str(foreign))
    conn.execute("create table notes(x)")
    conn.close()
    with pytest.raises(IndexCorruptError, match="not a scree index"):
        SqliteWriter.open(foreign, folder)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite at all" * 200)
    with pytest.raises(IndexCorruptError, match="cannot open index"):
        SqliteWriter.open(garbage, folder)


# --- model (R-F3) ---


def test_model_mismatch_names_reindex_all(any_store: IndexWriter) -> None:
    store = any_store
    store.set_model(MODEL, DIMS)  # the same model again is a no-op
    check_model(store, MODEL, DIMS)
    for identity, dims in (("api:other", DIMS), (MODEL, DIMS * 2)):
        with pytest.raises(IndexMismatchError, match="reindex --all"):
            check_model(store, identity, dims)
        with pytest.raises(IndexMismatchError, match="reindex --all"):
            store.set_model(identity, dims)
    with pytest.raises(IndexMismatchError, match="reindex --all"):
        store.replace_files([(state("a.md"), [chunk(0, "wide", dims=DIMS * 2)])])
    with pytest.raises(IndexMismatchError):
        store.vector_search(vector("q", DIMS * 2), 3)
    assert store.model() == (MODEL, DIMS)


def test_an_index_of_an_older_embedded_text_format_is_refused_until_rebuilt(store: SqliteWriter, db_path: Path) -> None:
    """#11, R-F3: vectors of the old embedded text (headings with anchors) are never mixed with new ones."""
    store.replace_files([(state("a.md"), [chunk(0, "alpha")])])
    assert store.embed_format() == EMBED_FORMAT
    conn = raw(db_path)  # an index made before the format was recorded has no such row
    conn.execute("delete from meta where key = 'embed_format'")
    conn.close()
    assert store.embed_format() == "1"
    with pytest.raises(IndexMismatchError, match=r"older scree .*`scree reindex --all`"):
        check_model(store, MODEL, DIMS)
    conn = raw(db_path)  # format 2: fences embedded whole, markup as written
    conn.execute("insert or replace into meta(key, value) values ('embed_format', '2')")
    conn.close()
    assert store.embed_format() == "2" != EMBED_FORMAT
    with pytest.raises(IndexMismatchError, match=rf"format 2, now {EMBED_FORMAT}: .*`scree reindex --all`"):
        check_model(store, MODEL, DIMS)
    store.reset(MODEL, DIMS)
    check_model(store, MODEL, DIMS)
    assert store.embed_format() == EMBED_FORMAT and store.counts() == (0, 0)


def test_reset_rebuilds_with_new_model(any_store: IndexWriter, index_backend: Backend) -> None:
    store = any_store
    store.replace_files([(state("a.md"), [chunk(0, "alpha"), chunk(1, "beta")])])
    store.record_full_sync(complete=True)
    assert store.is_complete() and store.last_sync()
    store.reset("api:bigger", 16)
    assert store.model() == ("api:bigger", 16)
    assert store.counts() == (0, 0)
    assert store.files() == {}
    assert not store.is_complete() and store.last_sync() is None
    assert store.get_meta("folder") is not None
    assert stored_rows(index_backend, store) == (0, 0, 0)
    store.replace_files([(state("a.md"), [chunk(0, "alpha", dims=16)])])
    assert [cid for cid, _ in store.vector_search(vector("alpha", 16), 3)] == [store.chunks_for_path("a.md")[0].id]


# --- writes (R-S2) ---


def test_replace_and_delete_round_trip_leave_no_orphans(any_store: IndexWriter, index_backend: Backend) -> None:
    store = any_store
    store.replace_files([(state("a.md"), [chunk(i, f"alpha part {i}") for i in range(4)])])
    store.replace_files([(state("b.md"), [chunk(0, "beta only")])])
    assert store.counts() == (2, 5)
    assert stored_rows(index_backend, store) == (5, 5, 5)
    assert store.file_state("a.md") == state("a.md")
    assert [c.text for c in store.chunks_for_path("a.md")] == [f"alpha part {i}" for i in range(4)]
    old_ids = {c.id for c in store.chunks_for_path("a.md")}

    store.replace_files([(state("a.md", "v2"), [chunk(0, "alpha rewritten")])])
    assert store.file_state("a.md") == state("a.md", "v2")
    new = store.chunks_for_path("a.md")
    assert [(c.ordinal, c.text, c.start_line, c.end_line) for c in new] == [(0, "alpha rewritten", 1, 5)]
    assert not old_ids & {new[0].id}, "a chunk id is never reused"
    assert store.chunks_by_ids(old_ids) == {}
    assert stored_rows(index_backend, store) == (2, 2, 2)
    assert keyword_ranking(store, "part", 5) == []

    store.replace_files([(state("empty.md"), [])])
    assert store.counts() == (3, 2) and store.file_count() == 3
    assert store.delete_files(["a.md", "missing.md", "empty.md", "a.md"]) == 2
    assert set(store.files()) == {"b.md"}
    assert stored_rows(index_backend, store) == (1, 1, 1)
    assert store.delete_files(["b.md"]) == 1
    assert stored_rows(index_backend, store) == (0, 0, 0)
    assert store.integrity_check() == "ok"


def test_one_call_replacing_many_files_writes_each_as_if_alone(any_store: IndexWriter, index_backend: Backend) -> None:
    """replace_files writes a batch's chunk rows in one statement with ids it picks itself: each file's rows, keyword
    rows and vectors still match, and no id is ever given twice, even after the newest chunks were deleted."""
    store = any_store
    store.replace_files([(state("old.md"), [chunk(0, "old apple"), chunk(1, "old pear")]), (state("z.md"), [])])
    old_ids = {c.id for c in store.chunks_for_path("old.md")}
    assert store.delete_files(["old.md"]) == 1  # the newest ids are gone; AUTOINCREMENT still never reuses them
    store.replace_files([(state("a.md"), [chunk(0, "first apple")]), (state("b.md"), [chunk(0, "second fig")])])
    items = [
        (state("a.md", "v2"), [chunk(i, f"again apricot {i}") for i in range(3)]),
        (state("c.md"), [chunk(0, "中文文本搜索", heading="标题"), chunk(1, "cherry")]),
        (state("z.md", "v2"), [chunk(0, "zucchini")]),
        (state("e.md"), []),
        (state("big.md"), [chunk(i, f"big part {i}") for i in range(ROWS_PER_INSERT + 5)]),  # two insert statements
    ]
    store.replace_files(items)
    for file_state, chunks in items:
        stored = store.chunks_for_path(file_state.path)
        assert store.file_state(file_state.path) == file_state
        assert [(c.ordinal, c.heading, c.text, c.start_line, c.end_line, c.text_hash) for c in stored] == [
            (c.ordinal, c.heading, c.text, c.start_line, c.end_line, c.text_hash) for c in chunks
        ]
        assert [store.vectors_for_hashes([c.text_hash])[c.text_hash] for c in stored] == [c.vector for c in chunks]
    twice = [(state("b.md", "v2"), [chunk(0, "not kept")]), (state("b.md", "v3"), [chunk(0, "second fig")])]
    store.replace_files(twice)
    assert store.file_state("b.md") == state("b.md", "v3")  # a path given twice ends as its last item says
    assert [c.text for c in store.chunks_for_path("b.md")] == ["second fig"]
    ids = [c.id for file_state, _ in items for c in store.chunks_for_path(file_state.path)]
    assert ids == sorted(ids) and len(set(ids)) == 6 + ROWS_PER_INSERT + 5 and min(ids) > max(old_ids)
    assert keyword_ranking(store, "apple", 5) == [] and len(keyword_ranking(store, "apricot", 5)) == 3
    assert [store.chunks_by_ids([i])[i].path for i, _ in keyword_ranking(store, "搜索", 5)] == ["c.md"]
    assert {store.chunks_by_ids([i])[i].path for i, _ in keyword_ranking(store, "zucchini fig", 5)} == {"z.md", "b.md"}
    assert stored_rows(index_backend, store) == (12 + ROWS_PER_INSERT, 12 + ROWS_PER_INSERT, 12 + ROWS_PER_INSERT)
    assert store.integrity_check() == "ok"


def test_replace_files_batches_and_touch_and_meta(any_store: IndexWriter) -> None:
    store = any_store
    store.replace_files([(state(f"{n}.md"), [chunk(0, f"note {n}")]) for n in range(5)])
    assert store.counts() == (5, 5)
    touched = FileState("3.md", state("3.md").sha256, 42, 7)
    store.touch_file(touched)
    assert store.file_state("3.md") == touched
    assert store.files()["3.md"] == touched
    # a search's candidates' states in one query: those indexed, each path once, whatever the order or repeats
    wanted = ["3.md", "missing.md", "0.md", "3.md", "../0.md"]
    assert store.file_states(wanted) == {"3.md": touched, "0.md": state("0.md")}
    assert store.file_states([]) == {}
    assert store.last_sync() is None and not store.is_complete() and store.last_error() is None
    store.record_full_sync(complete=False)
    assert store.last_sync() is not None and not store.is_complete()
    store.record_full_sync(complete=True)
    assert store.is_complete()
    store.record_last_error("the API said no")
    assert store.last_error() == "the API said no"
    store.record_last_error("")
    assert store.last_error() is None


def test_bulk_cache_grows_only_once_rows_are_written_and_is_small_again_after(store: SqliteWriter) -> None:
    def cache_kib() -> int:
        return -int(store._conn.execute("pragma cache_size").fetchone()[0])  # negative: KiB

    idle = cache_kib()
    with store.bulk_cache():
        store.file_state("a.md")  # a catch-up that only reads keeps the writer's small cache
        assert cache_kib() == idle
        store.replace_files([(state("a.md"), [chunk(0, "bulk")])])
        assert cache_kib() > idle
    assert cache_kib() == idle and store.counts() == (1, 1)


def test_a_sync_that_only_reads_frees_the_pages_it_read(store: SqliteWriter, db_path: Path, folder: Path) -> None:
    """A watching writer's catch-up reads every file's row into the page cache; bulk_cache lets those pages go."""
    store.replace_files([(state(f"note{n:04d}.md"), [chunk(0, f"note {n} " * 40)]) for n in range(2000)])
    with SqliteWriter.open(db_path, folder) as fresh:  # an empty page cache, as a writer starts with
        before = apsw.memory_used()
        with fresh.bulk_cache():
            assert all(fresh.file_state(f"note{n:04d}.md") is not None for n in range(2000))
            assert [c.ordinal for c in fresh.chunks_for_path("note0001.md")] == [0]
            filled = apsw.memory_used()
        assert filled > before + 100_000  # a 512 KiB cache holds a good part of the files and chunks rows
        assert apsw.memory_used() < before + (filled - before) / 4


def test_failed_write_rolls_back_whole_call(any_store: IndexWriter) -> None:
    store = any_store
    store.replace_files([(state("a.md"), [chunk(0, "original")])])
    no_heading = NewChunk(1, None, "x", 1, 1, "h", vector("x"))  # type: ignore[arg-type]  # NOT NULL fails mid-write
    # SQLite's NOT NULL fails in the statement; PostgreSQL's writer fails on it earlier, building the row's CJK
    # pairs, inside the same transaction: either way, nothing of the call is kept
    with pytest.raises((apsw.ConstraintError, IndexUnavailableError, TypeError)):
        store.replace_files([(state("b.md"), [chunk(0, "fine")]), (state("a.md", "v2"), [chunk(0, "x"), no_heading])])
    assert store.files() == {"a.md": state("a.md")}
    assert [c.text for c in store.chunks_for_path("a.md")] == ["original"]
    store.replace_files([(state("c.md"), [chunk(0, "next write works")])])
    assert store.counts() == (2, 2)


def test_lookup_by_hash_and_id(any_store: IndexWriter) -> None:
    store = any_store
    store.replace_files([(state("a.md"), [chunk(0, "shared text"), chunk(1, "unique a")])])
    store.replace_files([(state("b.md"), [chunk(0, "shared text")])])
    shared = hashlib.sha256(b"shared text").hexdigest()
    unknown = "0" * 64
    assert store.vectors_for_hashes([shared, unknown, shared]) == {shared: vector("shared text")}
    assert [c.path for c in store.chunks_with_text("shared text")] == ["a.md", "b.md"]
    assert store.chunks_with_text("shared") == []  # exact text only, not a prefix
    long = "x" * 64  # texts that begin alike past the 64 characters the lookup's index holds
    store.replace_files([(state("c.md"), [chunk(0, long + " one"), chunk(1, long + " two"), chunk(2, "unique a")])])
    texts = ["shared text", "unique a", long + " one", "missing", "shared text", "shared"]
    many = store.chunks_with_texts(texts)  # a search's likely hits in one query, each text as chunks_with_text says
    assert many == {text: store.chunks_with_text(text) for text in texts}
    assert [c.path for c in many["unique a"]] == ["a.md", "c.md"] and many["missing"] == []
    assert store.chunks_with_texts([]) == {}
    ids = [c.id for c in store.chunks_for_path("a.md")]
    found = store.chunks_by_ids([*ids, 999_999])
    assert set(found) == set(ids)
    assert found[ids[1]].text == "unique a" and found[ids[1]].heading == "Title"


# --- queries ---


def test_knn_matches_brute_force_cosine(index_backend: Backend, folder: Path) -> None:
    rng = np.random.default_rng(7)
    dims = 32
    matrix = rng.standard_normal((500, dims)).astype("<f4")
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    with index_backend.writer(folder) as store:
        store.set_model(MODEL, dims)
        rows = [
            NewChunk(i, "", f"row {i}", 1, 1, f"h{i}", matrix[i].tobytes())
            for i in range(len(matrix))  # one file of 500 chunks
        ]
        store.replace_files([(state("all.md"), rows)])
        id_of_row = {c.ordinal: c.id for c in store.chunks_for_path("all.md")}
        for _ in range(10):
            query = rng.standard_normal(dims).astype("<f4")
            query /= np.linalg.norm(query)
            distances = 1.0 - matrix @ query
            expected = [id_of_row[int(i)] for i in np.argsort(distances)[:16]]
            got = store.vector_search(query.tobytes(), 16)
            assert [cid for cid, _ in got] == expected
            assert [d for _, d in got] == pytest.approx(sorted(distances)[:16], abs=1e-5)
        assert len(store.vector_search(matrix[0].tobytes(), 10_000)) == 500
        assert store.vector_search(matrix[0].tobytes(), 0) == []


def test_two_stage_search_rescores_binary_candidates_exactly(db_path: Path, folder: Path) -> None:
    rng = np.random.default_rng(11)
    dims, limit = 64, 10
    topics = unit_rows(rng, 40, dims)
    matrix = topic_vectors(rng, 3000, dims, topics)
    bits = np.packbits(matrix > 0, axis=1)
    with SqliteWriter.open(db_path, folder) as store:
        store.set_model(MODEL, dims)
        ids = np.array(fill(store, matrix))
    recalls = []
    with SqliteReader.open(db_path, folder) as reader:  # a reader runs it: nothing in it writes
        for query in topic_vectors(rng, 20, dims, topics):
            hamming = np.unpackbits(bits ^ np.packbits(query > 0), axis=1).sum(axis=1)
            distances = 1.0 - matrix @ query
            candidates = np.isin(ids, reader.binary_candidates(query.tobytes(), limit * OVERSAMPLE))
            assert candidates.sum() == limit * OVERSAMPLE
            edge = hamming[candidates].max()
            assert edge <= hamming[~candidates].min(), "stage 1 keeps the nearest sign patterns"

            found = reader.two_stage_vector_search(query.tobytes(), limit)
            rows = np.searchsorted(ids, [chunk_id for chunk_id, _ in found])
            assert len(found) == limit and (hamming[rows] <= edge).all()
            assert [d for _, d in found] == pytest.approx(distances[rows].tolist(), abs=1e-5)
            assert [d for _, d in found] == sorted(d for _, d in found)
            passed_over = (hamming < edge) & ~np.isin(np.arange(len(ids)), rows)  # ties at the edge may go either way
            assert (distances[passed_over] >= distances[rows].max() - 1e-6).all(), "stage 2 ranks all candidates"
            exact = set(np.argsort(distances)[:limit].tolist())
            recalls.append(len(exact & set(rows.tolist())) / limit)
        assert reader.vector_search(matrix[5].tobytes(), 3) == reader.exact_vector_search(matrix[5].tobytes(), 3)
    assert np.mean(recalls) >= 0.9


def test_vector_search_is_two_stage_above_the_exact_limit(db_path: Path, folder: Path) -> None:
    """Decoys share the query's sign bits but point elsewhere; the true nearest has other signs: only an exact
    search finds it, and with one result wanted the two-stage search rescores decoys alone."""
    query = pack_vector([1.0] + [0.05] * (DIMS - 1))
    nearest = pack_vector([1.0] + [-0.05] * (DIMS - 1))
    decoy = NewChunk(0, "", "decoy", 1, 1, "decoy", pack_vector([0.01] + [1.0] * (DIMS - 1)))
    decoys_per_file = 1000
    with SqliteWriter.open(db_path, folder) as store:
        store.set_model(MODEL, DIMS)
        store.replace_files([(state("nearest.md"), [NewChunk(0, "", "nearest", 1, 1, "nearest", nearest)])])
        nearest_id = store.chunks_for_path("nearest.md")[0].id
        full, rest = divmod(EXACT_SEARCH_MAX_CHUNKS - 1, decoys_per_file)
        store.replace_files([(state(f"d{n}.md"), [decoy] * decoys_per_file) for n in range(full)])
        store.replace_files([(state("rest.md"), [decoy] * rest)])
        assert store.counts()[1] == EXACT_SEARCH_MAX_CHUNKS
        assert [c for c, _ in store.vector_search(query, 1)] == [nearest_id]
        assert store.two_stage_vector_search(query, 1)[0][0] != nearest_id

        store.replace_files([(state("one-more.md"), [decoy])])
        with SqliteReader.open(db_path, folder) as reader:
            assert reader.vector_search(query, 1)[0][0] != nearest_id
            assert [c for c, _ in reader.exact_vector_search(query, 1)] == [nearest_id]


def test_dimensions_not_a_multiple_of_8_are_always_searched_exactly(db_path: Path, folder: Path) -> None:
    rng = np.random.default_rng(3)
    matrix = unit_rows(rng, 50, 12)
    with SqliteWriter.open(db_path, folder) as store:
        store.set_model(MODEL, 12)
        fill(store, matrix)
        query = matrix[7].tobytes()
        assert store.binary_candidates(query, 10) == []
        assert store.two_stage_vector_search(query, 5) == store.exact_vector_search(query, 5) != []
        assert store.integrity_check() == "ok"
    conn = raw(db_path)
    assert conn.execute("select count(*) from chunk_vector_bits").fetchone()[0] == 0
    conn.close()


def test_integrity_check_finds_missing_and_orphan_sign_bits(store: SqliteWriter, db_path: Path) -> None:
    store.replace_files([(state("a.md"), [chunk(0, "alpha"), chunk(1, "beta")])])
    assert store.integrity_check() == "ok"
    first = store.chunks_for_path("a.md")[0].id
    conn = raw(db_path)
    conn.execute("delete from chunk_vector_bits where chunk_id = ?", (first,))
    conn.close()
    assert store.integrity_check() == "sign bits: 0 without a chunk, 1 chunks without sign bits"
    conn = raw(db_path)
    conn.execute("insert into chunk_vector_bits(chunk_id, bits) values (?, x'ff'), (999999, x'00')", (first,))
    conn.close()
    assert store.integrity_check() == "sign bits: 1 without a chunk, 0 chunks without sign bits"


def test_keyword_search_ranks_heading_and_stems(any_store: IndexWriter) -> None:
    store = any_store
    store.replace_files([(state("auth.md"), [chunk(0, "how the service works", heading="Authentication > Tokens")])])
    store.replace_files([(state("misc.md"), [chunk(0, "tokens are mentioned in passing here", heading="Misc")])])
    store.replace_files([(state("cafe.md"), [chunk(0, "Le café est ouvert", heading="Café")])])
    auth, misc = store.chunks_for_path("auth.md")[0].id, store.chunks_for_path("misc.md")[0].id
    ranked = [cid for cid, _ in keyword_ranking(store, "token", 10)]
    assert ranked == [auth, misc]
    scores = [score for _, score in keyword_ranking(store, "token", 10)]
    assert scores == sorted(scores, reverse=True)
    assert [cid for cid, _ in keyword_ranking(store, "CAFE", 5)] == [store.chunks_for_path("cafe.md")[0].id]
    assert keyword_ranking(store, "token", 1) == keyword_ranking(store, "token", 10)[:1]


def fts_match_expression(query: str) -> str | None:
    """The FTS5 OR-query the SQLite store runs for `query`'s terms."""
    return fts5_expression(keyword_terms(query))


def test_the_query_gives_plain_terms_and_the_sqlite_store_quotes_them_for_fts5() -> None:
    plain = [KeywordTerm("tok", prefix=True), KeywordTerm("NEAR"), KeywordTerm("x"), KeywordTerm("y")]
    assert keyword_terms('tok* NEAR "x-y"') == plain
    assert [fts5_term(term) for term in keyword_terms("tok* NEAR")] == ['"tok"*', '"NEAR"']
    assert fts5_term(KeywordTerm('a"b')) == '"a""b"'  # a quote in a term, from any caller, cannot end it early


def test_keyword_or_query_skips_common_english_words_unless_it_has_nothing_else(store: SqliteWriter) -> None:
    store.replace_files([(state("tokens.md"), [chunk(0, "how tokens expire", heading="Tokens")])])
    store.replace_files([(state("prose.md"), [chunk(0, "the end of the story and the moral of it")])])
    store.replace_files([(state("hamlet.md"), [chunk(0, "to be or not to be, that is the question")])])
    tokens, hamlet = store.chunks_for_path("tokens.md")[0].id, store.chunks_for_path("hamlet.md")[0].id
    assert fts_match_expression("The tokens of THE service") == '"tokens" OR "service"'
    assert [cid for cid, _ in keyword_ranking(store, "what is the lifetime of the tokens", 10)] == [tokens]
    assert fts_match_expression("To be or not to be") == '"To" OR "be" OR "or" OR "not"'
    assert [cid for cid, _ in keyword_ranking(store, "To be or not to be", 10)] == [hamlet]


def test_keyword_or_query_skips_the_words_a_question_or_comparison_is_phrased_in(store: SqliteWriter) -> None:
    store.replace_files([(state("tools.md"), [chunk(0, "uvx runs a tool; uv tool install keeps it", heading="Tools")])])
    store.replace_files([(state("faq.md"), [chunk(0, "Why? How? What should you do versus what could you do?")])])
    tools = store.chunks_for_path("tools.md")[0].id
    assert fts_match_expression("How do I add a dependency?") == '"add" OR "dependency"'
    assert fts_match_expression("uvx versus uv tool install") == '"uvx" OR "uv" OR "tool" OR "install"'
    assert [cid for cid, _ in keyword_ranking(store, "what should I use: uvx vs uv tool", 10)] == [tools]
    assert fts_match_expression("how do I") == '"how" OR "do" OR "I"'  # nothing else: they stay


HOSTILE_QUERIES = [
    '"',
    '"unbalanced',
    'tokens" OR "x',
    "AND",
    "tokens AND",
    "OR OR NOT",
    "NEAR(",
    "NEAR(tokens service, 2)",
    "*",
    "tok*",
    "-tokens",
    "heading:tokens",
    "{heading text}: tokens",
    "^tokens",
    "(((",
    ")",
    "+",
    "tokens\x00service",
    "\udc80tokens",
    "日本語のトークン",
    "токены",
    "émoji 🙂 tokens",
    "e\u0301tude",
    "a_b__c",
    "___",
    "",
    "   \t\n",
    "'; drop table chunks; --",
    "x" * 10_000,
    " ".join(f"w{i}" for i in range(500)),
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_keyword_search_never_raises_on_hostile_input(any_store: IndexWriter, query: str) -> None:
    store = any_store
    store.replace_files([(state("auth.md"), [chunk(0, "how tokens work in the service", heading="Tokens")])])
    results = keyword_ranking(store, query, 8)
    assert isinstance(results, list)
    if "tokens" in query.casefold() and not query.startswith("x"):
        assert results, "the plain word inside the hostile query still matches"
    assert store.counts() == (1, 1)


def test_queries_before_the_model_is_set(index_backend: Backend, folder: Path) -> None:
    with index_backend.writer(folder) as store:
        assert store.vector_search(vector("q"), 5) == []
        assert store.vectors_for_hashes(["abc"]) == {}
        store.replace_files([(state("empty.md"), [])])
        with pytest.raises(RuntimeError, match="set_model"):
            store.replace_files([(state("a.md"), [chunk(0, "text")])])
        assert store.integrity_check() == "ok"


# --- migrations (R-F3) ---


def test_schema_1_file_is_upgraded_in_place(db_path: Path, folder: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = raw(db_path)
    assert migrate(conn, upto=1) == [1]
    conn.execute("insert into meta(key, value) values ('folder', ?)", (str(folder.resolve()),))
    conn.execute("insert into meta(key, value) values ('model', ?), ('dims', ?)", (MODEL, str(DIMS)))
    conn.execute(
        f"create virtual table chunk_vectors using vec0(chunk_id integer primary key, embedding float[{DIMS}])"
    )
    conn.execute("insert into files values ('old.md', 'abc', 1, 2)")
    conn.execute(
        "insert into chunks(path, ordinal, heading, text, start_line, end_line, text_hash) "
        "values ('old.md', 0, 'Old', 'kept through the upgrade', 1, 3, 'hash-old')"
    )
    conn.execute("insert into chunk_vectors(chunk_id, embedding) values (1, ?)", (vector("old"),))
    assert conn.execute("select value from meta where key = 'schema_version'").fetchone()[0] == "1"
    old_bits = conn.execute("select vec_quantize_binary(?)", (vector("old"),)).fetchone()[0]
    conn.close()

    with pytest.raises(IndexCorruptError, match="reindex"):
        SqliteReader.open(db_path, folder)

    with SqliteWriter.open(db_path, folder) as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert store.get_meta("created")
        assert store.model() == (MODEL, DIMS)
        assert store.files() == {"old.md": FileState("old.md", "abc", 1, 2)}
        assert [c.path for c in store.chunks_with_text("kept through the upgrade")] == ["old.md"]
        assert store.vectors_for_hashes(["hash-old"]) == {"hash-old": vector("old")}
        assert keyword_ranking(store, "upgrade", 3) == keyword_ranking(store, "upgraded", 3) != []
        assert store.two_stage_vector_search(vector("old"), 1) == store.exact_vector_search(vector("old"), 1)
        assert store.integrity_check() == "ok"
    conn = raw(db_path)
    assert conn.execute("select chunk_id, bits from chunk_vector_bits").fetchall() == [(1, old_bits)]
    versions = [row[0] for row in conn.execute("select version from schema_migrations order by version")]
    indexes = {row[0] for row in conn.execute("select name from sqlite_master where type = 'index'")}
    conn.close()
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert "chunks_text_hash" in indexes
    with SqliteReader.open(db_path, folder) as reader:
        assert reader.counts() == (1, 1)


def test_index_from_a_newer_scree_is_refused(db_path: Path, folder: Path) -> None:
    SqliteWriter.open(db_path, folder).close()
    conn = raw(db_path)
    conn.execute("insert into schema_migrations values (?, 'future', 'later')", (SCHEMA_VERSION + 1,))
    conn.close()
    for kind in (SqliteWriter, SqliteReader):
        with pytest.raises(IndexCorruptError, match="newer scree"):
            kind.open(db_path, folder)


# --- R-S2: a writer killed mid-write leaves each file fully old or fully new ---

FILES_PER_ROUND = 6
CHUNK_FILLER = "filler words for a longer transaction " * 40

KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from scree.embedders.base import pack_vector
    from scree.store import FileState, NewChunk, SqliteWriter

    FILES, FILLER = int(sys.argv[3]), sys.argv[4]
    store = SqliteWriter.open(Path(sys.argv[1]), Path(sys.argv[2]))
    store.set_model("hash:test", 8)
    generation = int(store.get_meta("generation") or 0)
    while True:
        generation += 1
        for f in range(FILES):
            count = 20 + (generation + f) % 13
            chunks = [
                NewChunk(i, f"gen {generation}", f"generation {generation} file {f} chunk {i} {FILLER}", i + 1,
                         i + 1, f"{generation}-{f}-{i}", pack_vector([generation, f, i, 1, 2, 3, 4, 5]))
                for i in range(count)
            ]
            store.replace_files([(FileState(f"f{f}.md", f"sha-{generation}", generation, count), chunks)])
        store.set_meta("generation", str(generation))
    """
)


def _wait_for_generation(db_path: Path, folder: Path, at_least: int, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if db_path.exists():
            with SqliteReader.open(db_path, folder) as reader:
                if int(reader.get_meta("generation") or 0) >= at_least:
                    return
        time.sleep(0.02)
    raise AssertionError(f"the writer did not reach generation {at_least} within {deadline_s} s")


def _assert_each_file_whole(db_path: Path, folder: Path) -> None:
    with SqliteWriter.open(db_path, folder) as store:  # opened as the next writer would: recovery, then checks
        files = store.files()
        assert len(files) == FILES_PER_ROUND
        for f in range(FILES_PER_ROUND):
            recorded = files[f"f{f}.md"]
            generation = recorded.mtime_ns
            chunks = store.chunks_for_path(f"f{f}.md")
            assert recorded.sha256 == f"sha-{generation}"
            assert len(chunks) == recorded.size == 20 + (generation + f) % 13
            assert {c.text.split(" file ")[0] for c in chunks} == {f"generation {generation}"}
            assert [c.ordinal for c in chunks] == list(range(len(chunks)))
        assert store.integrity_check() == "ok"
        chunk_count = store.counts()[1]
    assert row_counts(db_path) == (chunk_count, chunk_count, chunk_count)


def test_sigkilled_writer_leaves_files_whole_and_no_orphans(tmp_path: Path, db_path: Path, folder: Path) -> None:
    script = tmp_path / "killed_writer.py"
    script.write_text(KILLED_WRITER)
    rng = random.Random(1)
    for round_number in range(1, 3):
        child = subprocess.Popen(
            [sys.executable, str(script), str(db_path), str(folder), str(FILES_PER_ROUND), CHUNK_FILLER],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            _wait_for_generation(db_path, folder, round_number * 2, deadline_s=60)
            time.sleep(rng.uniform(0.0, 0.05))  # land somewhere inside a run of replace_files calls
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait(timeout=10) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
            if child.stderr:
                child.stderr.close()
        _assert_each_file_whole(db_path, folder)


def test_migrations_are_numbered_in_order_and_recorded_by_name(db_path: Path, folder: Path) -> None:
    from scree.store.schema import MIGRATIONS

    assert [int(m.__name__[1:4]) for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))
    SqliteWriter.open(db_path, folder).close()
    conn = raw(db_path)
    names = [str(row[0]) for row in conn.execute("select name from schema_migrations order by version")]
    conn.close()
    assert names == [m.__name__.split("_", 1)[1] for m in MIGRATIONS]
    assert names[0] == "initial_schema"


def test_a_reader_sees_a_model_recorded_and_an_index_rebuilt_by_another_connection(db_path: Path, folder: Path) -> None:
    # the reader keeps what the index is between queries; another connection's commit makes it look again
    with SqliteWriter.open(db_path, folder) as writer, SqliteReader.open(db_path, folder) as reader:
        assert reader.model() is None and reader.is_empty()
        writer.set_model(MODEL, DIMS)
        assert reader.model() == (MODEL, DIMS) and reader.is_empty()
        writer.replace_files([(state("a.md"), [chunk(0, "alpha")])])
        assert not reader.is_empty()
        assert [cid for cid, _ in reader.vector_search(vector("alpha"), 1)] == [writer.chunks_for_path("a.md")[0].id]
        writer.reset("api:bigger", 16)
        assert reader.model() == ("api:bigger", 16) and reader.is_empty()
        assert reader.vector_search(vector("alpha", 16), 1) == []
        writer.replace_files([(state("a.md"), [chunk(0, "alpha", dims=16)])])
        assert len(reader.vector_search(vector("alpha", 16), 1)) == 1


def test_the_index_record_of_a_file_sqlite_cannot_query_is_no_record(
    store: SqliteWriter, db_path: Path, folder: Path
) -> None:
    """The reader's note reads this while no writer has reported: a damaged table must read as "nothing known"."""
    store.close()
    conn = apsw.Connection(str(db_path))
    conn.execute("drop table files")
    conn.close()
    assert SqliteReader.record_of(db_path, folder) == IndexRecord()


# --- the two-stage search from memory (scree.store.sign_bits, searches.rescore) ---


def test_nearest_positions_are_the_smallest_first_and_equal_ones_by_position() -> None:
    distances = np.array([3, 1, 2, 1, 3, 0, 2, 3, 1])
    assert nearest_positions(distances, 4).tolist() == [5, 1, 3, 8]
    assert nearest_positions(distances, 6).tolist() == [5, 1, 3, 8, 2, 6]
    assert nearest_positions(distances, 7).tolist() == [5, 1, 3, 8, 2, 6, 0]
    assert nearest_positions(distances, 20).tolist() == [5, 1, 3, 8, 2, 6, 0, 4, 7]


def test_popcount_by_bytes_counts_what_bitwise_count_does() -> None:
    rng = np.random.default_rng(5)
    words = rng.integers(0, 2**63, (50, 3), dtype=np.uint64) | np.uint64(2**63)
    expected = [[bin(int(w)).count("1") for w in row] for row in words]
    assert popcount_by_bytes(words).tolist() == expected
    assert popcount(words).tolist() == expected


def test_the_two_stage_search_from_memory_returns_what_the_sql_one_does(db_path: Path, folder: Path) -> None:
    """Stage 1 over the sign bits in memory and stage 2 over vectors read from vec0's blocks give the very ids
    and distances of the SQL join, ties included: 8 dimensions make few sign patterns, so nearly every candidate
    ties with others at the edge; copies of one vector tie in distance too, and an all-zero vector is left out."""
    rng = np.random.default_rng(13)
    matrix = unit_rows(rng, 1500, DIMS)
    matrix[100:140] = matrix[7]  # 40 copies: equal distances, equal bits
    matrix[200] = 0.0
    with SqliteWriter.open(db_path, folder) as store:
        store.set_model(MODEL, DIMS)
        fill(store, matrix[:700], "a.md")
        fill(store, matrix[700:], "b.md")
        conn = raw(db_path)
        with SqliteReader.open(db_path, folder) as reader:
            for query in [*unit_rows(rng, 15, DIMS), matrix[7], matrix[0]]:
                for limit in (1, 10, 100):
                    want = searches.two_stage_nearest(conn, query.tobytes(), limit)
                    assert reader.two_stage_vector_search(query.tobytes(), limit) == want
                    count = searches.candidate_count(limit)
                    assert reader.binary_candidates(query.tobytes(), count) == searches.sign_bit_candidates(
                        conn, query.tobytes(), count
                    )
            query = matrix[1000].tobytes()
            lost = searches.two_stage_nearest(conn, query, 3)[1][0]
            conn.execute("delete from chunk_vectors where chunk_id = ?", (lost,))  # sign bits left without a vector
            assert reader.two_stage_vector_search(query, 3) == searches.two_stage_nearest(conn, query, 3)
            assert lost not in {c for c, _ in reader.two_stage_vector_search(query, 3)}
            query = matrix[7].tobytes()
            before = reader.two_stage_vector_search(query, 10)
            assert [c.id for c in store.chunks_for_path("a.md")][100] in {c for c, _ in before}
            store.delete_files(["a.md"])  # another connection's commit: the reader reads the bits again
            after = reader.two_stage_vector_search(query, 10)
            assert after == searches.two_stage_nearest(conn, query, 10) != before
            assert {c for c, _ in after} <= {c.id for c in store.chunks_for_path("b.md")}
        conn.close()
        assert store.binary_candidates(vector("new"), 5) != []
        store.replace_files(
            [(state("c.md"), [chunk(0, "new")])]
        )  # our own commit: the writer's SqliteWriter reads again
        assert store.chunks_for_path("c.md")[0].id in store.binary_candidates(vector("new"), 5)


def test_where_vec0_keeps_vectors_is_checked_against_what_it_returns(db_path: Path, folder: Path) -> None:
    rng = np.random.default_rng(17)
    with SqliteWriter.open(db_path, folder) as store:
        store.set_model(MODEL, DIMS)
        ids = fill(store, unit_rows(rng, 300, DIMS))
    conn = raw(db_path)
    places = {
        r[0]: (r[1], r[2]) for r in conn.execute("select rowid, chunk_id, chunk_offset from chunk_vectors_rowids")
    }
    picked = [ids[0], ids[140], ids[-1]]
    blocks, offsets = [places[i][0] for i in picked], [places[i][1] for i in picked]
    assert searches.places_hold_vectors(conn, picked, blocks, offsets)
    assert not searches.places_hold_vectors(conn, picked, blocks, [offsets[0] + 1, *offsets[1:]])
    assert not searches.places_hold_vectors(conn, [ids[1], *picked[1:]], blocks, offsets)
    conn.close()
