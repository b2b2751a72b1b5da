"""`scree bench --database-url URL` (issue 31): the SQLite file and a PostgreSQL collection side by side, through the
same IndexReader and IndexWriter, at 10k and 100k chunks: a hybrid search end to end (SearchEngine.search, k 10, the
query's vector near the data, hits rendered) p50 and p95, and the store's part of it (vector list + keyword lists, as
the engine asks for them); PostgreSQL's HNSW recall@10 against its exact search; where exact and HNSW search cross
(PostgreSQL, several sizes); and a first sync's throughput with the instant (hashed) embedder.

Each size is built fresh (store_search's synthetic chunks: 60 Zipf words, clustered 512-d unit vectors) in a
temporary SQLite file and in a collection of its own in the database, which is dropped after; with --reuse DIR the
built indexes are kept (SQLite files in DIR, collections named bench/kept/...) and used again by the next run with
the same sizes and schema. Run alone: python -m scree.benchmarks.backends --database-url URL
[--sizes 10000,100000] [--crossover 2000,5000,10000,20000] [--sync-mb 5] [--reuse DIR] [--json PATH].
The machine's load average is printed beside each part: figures from a shared machine are one run's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import generate_tree
from scree.benchmarks.search_latency import QueryEmbedder, materialise_files
from scree.benchmarks.store_search import (
    CHUNKS_PER_FILE,
    CHUNKS_PER_TOPIC,
    K,
    Vectors,
    _time_ms,
    _vocabulary,
    _zipf_words,
    fill,
)
from scree.config import DEFAULT_MAX_FILE_BYTES
from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder
from scree.index.model_policy import prepare
from scree.search.engine import SearchEngine, keyword_ranking
from scree.search.render import render_hits
from scree.store import IndexReader, IndexWriter, SqliteReader, SqliteWriter

DEFAULT_SIZES = (10_000, 100_000)
DEFAULT_CROSSOVER = (2_000, 5_000, 10_000, 20_000)
QUERIES = 60
DEFAULT_JSON = RESULTS / "backends.json"
Opener = Callable[[Path], IndexWriter]


def _p(values: Sequence[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1], 2)


def _build(
    writer: IndexWriter, size: int, rng: np.random.Generator, vocabulary: Sequence[str], vectors: Vectors
) -> float:
    started = time.perf_counter()
    fill(writer, size, rng, vocabulary, vectors)
    writer.record_full_sync(complete=True)  # PostgreSQL builds its HNSW index here, above HNSW_MIN_CHUNKS
    return time.perf_counter() - started


class _NearEmbedder(QueryEmbedder):
    """The bench's query vectors (drawn near the data, as a real query's are) under the index's model identity."""

    def __init__(self, identity: str, dims: int, vectors: dict[str, bytes]) -> None:
        super().__init__(identity, dims)
        self._vectors = vectors

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        return [self._vectors[text] for text in texts]


def _search_times(
    reader: IndexReader, folder: Path, vector_queries: list[bytes], keyword_queries: list[str]
) -> dict[str, float]:
    pairs = list(zip(vector_queries, keyword_queries, strict=True))

    def both(pair: object) -> None:
        assert isinstance(pair, tuple)
        vector, words = pair
        reader.vector_search(vector, K)
        keyword_ranking(reader, words, K, floor_alone=False)  # as a hybrid search asks

    recorded = reader.model()
    assert recorded is not None
    embedder = _NearEmbedder(*recorded, dict(zip(keyword_queries, vector_queries, strict=True)))
    policy = IgnorePolicy(folder)
    engine = SearchEngine(reader, policy, folder, DEFAULT_MAX_FILE_BYTES, lambda: embedder)

    def whole(query: object) -> None:
        assert isinstance(query, str)
        policy.refresh()  # as the MCP reader does before each call
        result = engine.search(query, k=10, mode="hybrid")
        render_hits(result.hits, result.notes)

    e2e, _ = _time_ms(keyword_queries, whole)
    wall, _ = _time_ms(pairs, both)
    vec, _ = _time_ms(vector_queries, lambda q: reader.vector_search(q, K))  # type: ignore[arg-type]
    kw, _ = _time_ms(keyword_queries, lambda q: keyword_ranking(reader, q, K, floor_alone=False))  # type: ignore[arg-type]
    return {
        "e2e_p50_ms": _p(e2e, 0.5),
        "e2e_p95_ms": _p(e2e, 0.95),
        "search_p50_ms": _p(wall, 0.5),
        "search_p95_ms": _p(wall, 0.95),
        "vector_p50_ms": _p(vec, 0.5),
        "keyword_p50_ms": _p(kw, 0.5),
        "keyword_p95_ms": _p(kw, 0.95),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def _recall(reader: IndexReader, vector_queries: list[bytes]) -> float:
    """Mean share of the exact top 10 that the search's top 10 holds (PostgreSQL: HNSW against exact)."""
    from scree.store.pg_reader import PgReader

    assert isinstance(reader, PgReader)
    found = [reader.vector_search(q, K) for q in vector_queries]
    exact = [reader.exact_vector_search(q, K) for q in vector_queries]
    return round(
        statistics.mean(
            len({i for i, _ in f[:10]} & {i for i, _ in e[:10]}) / 10 for f, e in zip(found, exact, strict=True)
        ),
        3,
    )


def _built_reader(
    backend: str, url: str, size: int, seed: int, where: Path, kept: bool, build: Callable[[IndexWriter], float]
) -> tuple[IndexReader, float | None, Callable[[], None]]:
    """(a reader of the built index, seconds its build took or None when a kept one was reused, cleanup)."""
    folder = where / f"notes-{size}-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    if backend == "sqlite":
        from scree.store.schema import SCHEMA_VERSION

        db = where / f"sqlite-{size}-{seed}-s{SCHEMA_VERSION}.db"
        build_s = None
        if not (kept and db.exists()):
            for stale in where.glob(db.name + "*"):
                stale.unlink()
            with SqliteWriter.open(db, folder) as writer:
                build_s = build(writer)
        reader: IndexReader = SqliteReader.open(db, folder)
        materialise_files(reader, folder)  # type: ignore[arg-type]
        return reader, build_s, lambda: None
    from scree.store.pg_reader import PgReader
    from scree.store.pg_schema import SCHEMA_VERSION as PG_SCHEMA
    from scree.store.pg_writer import PgWriter, drop_collection

    name = f"bench/kept/{size}/{seed}/s{PG_SCHEMA}" if kept else f"bench/{size}/{os.getpid()}"
    record = PgReader.record_of(url, name, folder)
    if kept and record.complete and record.files == size // CHUNKS_PER_FILE:
        build_s = None
        with PgWriter.open_writer(url, name, folder, None) as pg_writer:
            pg_writer.ensure_hnsw()  # kept from a run with another HNSW_MIN_CHUNKS
    else:
        drop_collection(url, name)
        with PgWriter.open_writer(url, name, folder, None) as pg_writer:
            build_s = build(pg_writer)
    reader = PgReader.open(url, name, folder)
    materialise_files(reader, folder)  # type: ignore[arg-type]

    def cleanup() -> None:
        if not kept:
            drop_collection(url, name)

    return reader, build_s, cleanup


def measure_size(url: str, size: int, seed: int = 0, reuse: Path | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": size}
    for backend in ("sqlite", "postgres"):
        rng = np.random.default_rng(seed)
        vocabulary = _vocabulary(rng)
        vectors = Vectors("clustered", rng, topics=max(1, size // CHUNKS_PER_TOPIC))
        vector_queries = [v.tobytes() for v in vectors.draw(QUERIES)]  # near the data, as real queries are
        keyword_queries = list(dict.fromkeys(" ".join(_zipf_words(rng, vocabulary, 3)) for _ in range(QUERIES)))
        vector_queries = vector_queries[: len(keyword_queries)]
        with tempfile.TemporaryDirectory(prefix="scree-bench-") as tmp:
            where = reuse if reuse is not None else Path(tmp)
            reader, build_s, cleanup = _built_reader(
                backend,
                url,
                size,
                seed,
                where,
                reuse is not None,
                partial(_build, size=size, rng=rng, vocabulary=vocabulary, vectors=vectors),
            )
            try:
                figures: dict[str, Any] = {
                    "build_s": None if build_s is None else round(build_s, 1),
                    **_search_times(reader, where / f"notes-{size}-{seed}", vector_queries, keyword_queries),
                }
                if backend == "postgres":
                    figures["recall_at_10"] = _recall(reader, vector_queries)
            finally:
                reader.close()
                cleanup()
        out[backend] = figures
    return out


def measure_crossover(url: str, sizes: Sequence[int], seed: int = 1) -> list[dict[str, Any]]:
    """PostgreSQL's exact vector search against HNSW at each size (the HNSW index built whatever the size), p50/p95
    and HNSW's recall@10 against exact: where the switch (pg_reader.HNSW_MIN_CHUNKS) pays."""
    from scree.store.pg_reader import PgReader
    from scree.store.pg_writer import PgWriter, drop_collection

    rows = []
    for size in sizes:
        rng = np.random.default_rng(seed)
        vocabulary = _vocabulary(rng)
        vectors = Vectors("clustered", rng, topics=max(1, size // CHUNKS_PER_TOPIC))
        queries = [v.tobytes() for v in vectors.draw(QUERIES)]
        name = f"bench/crossover/{size}/{os.getpid()}"
        with tempfile.TemporaryDirectory(prefix="scree-bench-") as tmp:
            drop_collection(url, name)
            try:
                with PgWriter.open_writer(url, name, Path(tmp), None) as writer:
                    writer.hnsw_min_chunks = 0
                    fill(writer, size, rng, vocabulary, vectors)
                    started = time.perf_counter()
                    writer.record_full_sync(complete=True)
                    hnsw_build_s = time.perf_counter() - started
                with PgReader.open(url, name, Path(tmp)) as reader:
                    exact, _ = _time_ms(queries, lambda q: reader.exact_vector_search(q, K))  # type: ignore[arg-type]
                    hnsw, _ = _time_ms(queries, lambda q: reader.vector_search(q, K))  # type: ignore[arg-type]
                    rows.append(
                        {
                            "chunks": size,
                            "exact_p50_ms": _p(exact, 0.5),
                            "exact_p95_ms": _p(exact, 0.95),
                            "hnsw_p50_ms": _p(hnsw, 0.5),
                            "hnsw_p95_ms": _p(hnsw, 0.95),
                            "recall_at_10": _recall(reader, queries),
                            "hnsw_build_s": round(hnsw_build_s, 1),
                            "load_average_1min": round(os.getloadavg()[0], 2),
                        }
                    )
            finally:
                drop_collection(url, name)
    return rows


def measure_sync(url: str, megabytes: float) -> dict[str, Any]:
    """First sync of a generated tree with the hashed embedder, on each backend: MB/s."""
    out: dict[str, Any] = {"mb": megabytes}
    with tempfile.TemporaryDirectory(prefix="scree-bench-sync-") as tmp:
        folder = Path(tmp) / "notes"
        generate_tree(folder, int(megabytes * 1_000_000))
        from scree.store.pg_writer import PgWriter, drop_collection
        from scree.writer_proc.sync import Syncer

        for backend in ("sqlite", "postgres"):
            embedder = HashEmbedder()
            name = f"bench/sync/{os.getpid()}"
            writer: IndexWriter
            if backend == "sqlite":
                writer = SqliteWriter.open(Path(tmp) / "sync.db", folder)
            else:
                drop_collection(url, name)
                writer = PgWriter.open_writer(url, name, folder, None)
            try:
                started = time.perf_counter()
                prepare(writer, embedder)
                report = Syncer(writer, IgnorePolicy(folder), embedder, 1_000_000).sync_all()
                seconds = time.perf_counter() - started
                out[backend] = {
                    "files": report.indexed,
                    "chunks": writer.counts()[1],
                    "seconds": round(seconds, 2),
                    "mb_per_s": round(megabytes / seconds, 2),
                }
            finally:
                writer.close()
                if backend == "postgres":
                    drop_collection(url, name)
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    return out


def run(
    url: str,
    sizes: Sequence[int] = DEFAULT_SIZES,
    sync_mb: float = 5.0,
    progress: Callable[[str], None] = print,
    crossover: Sequence[int] = DEFAULT_CROSSOVER,
    reuse: Path | None = None,
) -> dict[str, Any]:
    results: dict[str, Any] = {"sizes": [], "cpu_count": os.cpu_count()}
    for size in sizes:
        progress(f"search at {size} chunks on both backends (load average {os.getloadavg()[0]:.2f}) ...")
        results["sizes"].append(measure_size(url, size, reuse=reuse))
    if crossover:
        progress(f"exact and HNSW vector search in PostgreSQL at {', '.join(map(str, crossover))} chunks ...")
        results["crossover"] = measure_crossover(url, crossover)
    if sync_mb > 0:
        progress(f"first sync of {sync_mb:g} MB on both backends (load average {os.getloadavg()[0]:.2f}) ...")
        results["sync"] = measure_sync(url, sync_mb)
    return results


def render(results: dict[str, Any]) -> str:
    lines = [f"{'':>24} {'SQLite':>10} {'PostgreSQL':>11}"]
    for entry in results["sizes"]:
        label = f"{entry['chunks'] // 1000}k"
        for key, what in (("e2e_p50_ms", "search p50 ms"), ("e2e_p95_ms", "search p95 ms"),
                          ("search_p50_ms", "store part p50 ms"), ("search_p95_ms", "store part p95 ms"),
                          ("vector_p50_ms", "vector p50 ms"), ("keyword_p50_ms", "keyword p50 ms"),
                          ("keyword_p95_ms", "keyword p95 ms"), ("build_s", "build s"),
                          ("load_average_1min", "load average")):  # fmt: skip
            sqlite, postgres = entry["sqlite"][key], entry["postgres"][key]
            sqlite, postgres = ("kept" if v is None else v for v in (sqlite, postgres))
            lines.append(f"{label + ' ' + what:>24} {sqlite:>10} {postgres:>11}")
        lines.append(f"{label + ' HNSW recall@10':>24} {'':>10} {entry['postgres']['recall_at_10']:>11}")
    if "sync" in results:
        sync = results["sync"]
        lines.append(f"{'first sync MB/s':>24} {sync['sqlite']['mb_per_s']:>10} {sync['postgres']['mb_per_s']:>11}")
        lines.append(f"{'  (load average)':>24} {sync['load_average_1min']:>10}")
    if results.get("crossover"):
        lines.append("PostgreSQL vector search, exact against HNSW (ms; recall@10 of HNSW against exact):")
        lines.append(f"{'chunks':>10} {'exact p50':>10} {'exact p95':>10} {'HNSW p50':>9} {'HNSW p95':>9} "
                     f"{'recall@10':>9} {'build s':>8} {'load':>6}")  # fmt: skip
        for row in results["crossover"]:
            lines.append(
                f"{row['chunks']:>10} {row['exact_p50_ms']:>10} {row['exact_p95_ms']:>10} {row['hnsw_p50_ms']:>9} "
                f"{row['hnsw_p95_ms']:>9} {row['recall_at_10']:>9} {row['hnsw_build_s']:>8} "
                f"{row['load_average_1min']:>6}"
            )
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m scree.benchmarks.backends", description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument(
        "--crossover",
        default=",".join(str(s) for s in DEFAULT_CROSSOVER),
        help="sizes for exact against HNSW ('' none)",
    )
    parser.add_argument("--sync-mb", type=float, default=5.0, help="first sync's tree size (0: none)")
    parser.add_argument("--reuse", type=Path, help="keep the built indexes here and in the database, use them again")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    if args.reuse is not None:
        args.reuse.mkdir(parents=True, exist_ok=True)
    results = run(
        args.database_url,
        _sizes(args.sizes),
        args.sync_mb,
        lambda line: print(line, file=sys.stderr),
        _sizes(args.crossover),
        args.reuse,
    )
    print(render(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
