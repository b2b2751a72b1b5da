"""`scree bench --database-url URL` (issue 31): the SQLite file and a PostgreSQL collection side by side, through the
same IndexReader and IndexWriter: the store's part of a hybrid search (vector list + keyword lists, as the engine asks
for them) at 10k and 100k chunks, p50 and p95; PostgreSQL's HNSW recall@10 against its exact search; and a first
sync's throughput with the instant (hashed) embedder.

Each size is built fresh (store_search's synthetic chunks: 60 Zipf words, clustered 512-d unit vectors) in a
temporary SQLite file and in a collection of its own in the database, which is dropped after. Run alone:
python -m scree.benchmarks.backends --database-url URL [--sizes 10000,100000] [--sync-mb 5] [--json PATH].
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
from pathlib import Path
from typing import Any

import numpy as np

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import generate_tree
from scree.benchmarks.store_search import (
    CHUNKS_PER_TOPIC,
    K,
    Vectors,
    _time_ms,
    _vocabulary,
    _zipf_words,
    fill,
)
from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder
from scree.index.model_policy import prepare
from scree.search.engine import keyword_ranking
from scree.store import IndexReader, IndexWriter, SqliteReader, SqliteWriter

DEFAULT_SIZES = (10_000, 100_000)
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


def _search_times(reader: IndexReader, vector_queries: list[bytes], keyword_queries: list[str]) -> dict[str, float]:
    pairs = list(zip(vector_queries, keyword_queries, strict=True))

    def both(pair: object) -> None:
        assert isinstance(pair, tuple)
        vector, words = pair
        reader.vector_search(vector, K)
        keyword_ranking(reader, words, K, floor_alone=False)  # as a hybrid search asks

    wall, _ = _time_ms(pairs, both)
    vec, _ = _time_ms(vector_queries, lambda q: reader.vector_search(q, K))  # type: ignore[arg-type]
    kw, _ = _time_ms(keyword_queries, lambda q: keyword_ranking(reader, q, K, floor_alone=False))  # type: ignore[arg-type]
    return {
        "search_p50_ms": _p(wall, 0.5),
        "search_p95_ms": _p(wall, 0.95),
        "vector_p50_ms": _p(vec, 0.5),
        "keyword_p50_ms": _p(kw, 0.5),
    }


def measure_size(url: str, size: int, seed: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": size}
    for backend in ("sqlite", "postgres"):
        rng = np.random.default_rng(seed)
        vocabulary = _vocabulary(rng)
        vectors = Vectors("clustered", rng, topics=max(1, size // CHUNKS_PER_TOPIC))
        vector_queries = [v.tobytes() for v in vectors.draw(QUERIES)]  # near the data, as real queries are
        keyword_queries = [" ".join(_zipf_words(rng, vocabulary, 3)) for _ in range(QUERIES)]
        with tempfile.TemporaryDirectory(prefix="scree-bench-") as tmp:
            folder = Path(tmp) / "notes"
            folder.mkdir()
            name = f"bench/{size}/{os.getpid()}"
            if backend == "sqlite":
                db = Path(tmp) / "index.db"
                with SqliteWriter.open(db, folder) as writer:
                    build_s = _build(writer, size, rng, vocabulary, vectors)
                reader: IndexReader = SqliteReader.open(db, folder)
            else:
                from scree.store.pg_reader import PgReader
                from scree.store.pg_writer import PgWriter, drop_collection

                drop_collection(url, name)
                with PgWriter.open_writer(url, name, folder, None) as pg_writer:
                    build_s = _build(pg_writer, size, rng, vocabulary, vectors)
                reader = PgReader.open(url, name, folder)
            try:
                figures: dict[str, Any] = {
                    "build_s": round(build_s, 1),
                    **_search_times(reader, vector_queries, keyword_queries),
                }
                if backend == "postgres":
                    from scree.store.pg_reader import PgReader

                    assert isinstance(reader, PgReader)
                    found = [reader.vector_search(q, K) for q in vector_queries]
                    exact = [reader.exact_vector_search(q, K) for q in vector_queries]
                    figures["recall_at_10"] = round(
                        statistics.mean(
                            len({i for i, _ in f[:10]} & {i for i, _ in e[:10]}) / 10
                            for f, e in zip(found, exact, strict=True)
                        ),
                        3,
                    )
            finally:
                reader.close()
                if backend == "postgres":
                    drop_collection(url, name)
        out[backend] = figures
    return out


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
                    "seconds": round(seconds, 2),
                    "mb_per_s": round(megabytes / seconds, 2),
                }
            finally:
                writer.close()
                if backend == "postgres":
                    drop_collection(url, name)
    return out


def run(
    url: str, sizes: Sequence[int] = DEFAULT_SIZES, sync_mb: float = 5.0, progress: Callable[[str], None] = print
) -> dict[str, Any]:
    results: dict[str, Any] = {"sizes": []}
    for size in sizes:
        progress(f"store search at {size} chunks on both backends ...")
        results["sizes"].append(measure_size(url, size))
    progress(f"first sync of {sync_mb:g} MB on both backends ...")
    results["sync"] = measure_sync(url, sync_mb)
    return results


def render(results: dict[str, Any]) -> str:
    lines = [f"{'':>22} {'SQLite':>10} {'PostgreSQL':>11}"]
    for entry in results["sizes"]:
        label = f"{entry['chunks'] // 1000}k"
        for key, what in (("search_p50_ms", "search p50 ms"), ("search_p95_ms", "search p95 ms"),
                          ("vector_p50_ms", "vector p50 ms"), ("keyword_p50_ms", "keyword p50 ms"),
                          ("build_s", "build s")):  # fmt: skip
            lines.append(f"{label + ' ' + what:>22} {entry['sqlite'][key]:>10} {entry['postgres'][key]:>11}")
        lines.append(f"{label + ' HNSW recall@10':>22} {'':>10} {entry['postgres']['recall_at_10']:>11}")
    sync = results["sync"]
    lines.append(f"{'first sync MB/s':>22} {sync['sqlite']['mb_per_s']:>10} {sync['postgres']['mb_per_s']:>11}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m scree.benchmarks.backends", description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument("--sync-mb", type=float, default=5.0)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    results = run(
        args.database_url,
        [int(s) for s in args.sizes.split(",")],
        args.sync_mb,
        lambda line: print(line, file=sys.stderr),
    )
    print(render(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
