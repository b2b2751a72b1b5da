"""Search latency over one index: the store's part (SqliteReader.vector_search, as the engine calls it) and end to end
through SearchEngine and render_hits, what the MCP tool and `scree search` run.

Run: python -m bench.search_latency --notes DIR [--queries 100] (indexes a copy of DIR with the stub API first).
Queries are a few words drawn from the index's own chunks. Their vectors come from QueryEmbedder: the stub API's
hashed word vectors, computed in this process under the identity the index records, so the figures are scree's own
cost (store, keyword search, fusion, the R-M2 re-check of each hit's file, rendering) and no network's.
Bars (SPEC §10) apply to the store part at 10k and 100k chunks (bench.store_search builds those indexes).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from scree.benchmarks.corpus import WORDS
from scree.config import DEFAULT_MAX_FILE_BYTES
from scree.content.ignore import IgnorePolicy
from scree.embedders.base import Embedder, pack_vector
from scree.embedders.hashed import hash_vector_values
from scree.search import DEFAULT_K, DEFAULT_MODE
from scree.search.engine import SearchEngine
from scree.search.ranking import POOL
from scree.search.render import render_hits
from scree.store import SqliteReader

K = DEFAULT_K  # SPEC §8: search_docs' default k
MODE = DEFAULT_MODE  # SPEC §8: hybrid, which runs both the vector and the keyword search
QUERY_WORDS = 4
WARMUP_QUERIES = 5
QUERY_SEED = 5
Query = TypeVar("Query")


class QueryEmbedder(Embedder):
    """Hashed word vectors (as bench.stub_api answers) under a given identity: a query costs microseconds."""

    def __init__(self, identity: str, dims: int) -> None:
        self.kind, _, self.model_id = identity.partition(":")
        self.dims = dims

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        return [pack_vector(hash_vector_values(text, self.dims)) for text in texts]


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (fraction 0.5: the median of an odd count)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def time_ms(queries: Sequence[Query], run: Callable[[Query], object]) -> list[float]:
    """Wall milliseconds of run(query) for each query, after a few untimed warm-up calls."""
    for query in queries[:WARMUP_QUERIES]:
        run(query)
    timings = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def queries_from_index(store: SqliteReader, count: int, seed: int = QUERY_SEED) -> list[str]:
    """`count` queries of a few words each, taken from chunks of the index (corpus words when it is empty)."""
    rng = random.Random(seed)
    chunks = store.counts()[1]
    rows = list(store.chunks_by_ids(rng.randint(1, chunks) for _ in range(count * 2)).values()) if chunks else []
    queries = []
    for n in range(count):
        words = rows[n % len(rows)].text.split() if rows else []
        words = [w for w in words if w.isalpha()] or list(WORDS)
        queries.append(" ".join(rng.choice(words) for _ in range(QUERY_WORDS)))
    return queries


def time_index(store: SqliteReader, folder: Path, queries: Sequence[str]) -> dict[str, float]:
    """p50/p95 milliseconds of the store's vector search and of a whole search, over an index of `folder`."""
    recorded = store.model()
    if recorded is None:
        raise ValueError("the index records no model: nothing to search by vector")
    embedder = QueryEmbedder(*recorded)
    policy = IgnorePolicy(folder)
    engine = SearchEngine(store, policy, folder, DEFAULT_MAX_FILE_BYTES, lambda: embedder)
    limit = max(POOL, K)  # what SearchEngine.search asks the store for, whatever k is (#11)

    def whole(query: str) -> str:
        policy.refresh()  # as the MCP reader does before each call: a changed .gitignore counts at once
        result = engine.search(query, k=K, mode=MODE)
        return render_hits(result.hits, result.notes)

    vectors = [embedder.embed_query(query) for query in queries]
    store_ms = time_ms(vectors, lambda vector: store.vector_search(vector, limit))
    whole_ms = time_ms(list(queries), whole)
    return {
        "chunks": float(store.counts()[1]),
        "store_p50_ms": round(statistics.median(store_ms), 2),
        "store_p95_ms": round(percentile(store_ms, 0.95), 2),
        "e2e_p50_ms": round(statistics.median(whole_ms), 2),
        "e2e_p95_ms": round(percentile(whole_ms, 0.95), 2),
    }


def materialise_files(store: SqliteReader, folder: Path) -> int:
    """Create each indexed file under `folder` with the size and mtime the index holds (a generated index has no
    files on disk), so the engine's re-check finds them unchanged, as it mostly does in use. Needs size 0 records."""
    files = store.files()
    for state in files.values():
        if state.size != 0:
            raise ValueError(f"{state.path}: only empty files can stand in for indexed ones")
        path = folder / state.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path, ns=(state.mtime_ns, state.mtime_ns))
    return len(files)


def measure(db_path: Path, folder: Path, queries: int = 100) -> dict[str, float]:
    """Store part and end-to-end latency over the existing index at `db_path` of `folder`, opened read-only."""
    with SqliteReader.open(db_path, folder) as store:
        return time_index(store, folder, queries_from_index(store, queries))


def main() -> None:
    from scree.benchmarks.stub_api import StubApiProcess
    from scree.benchmarks.writer_idle import clean_env
    from scree.commands import operations
    from scree.config import load_settings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=Path, required=True, help="the folder whose markdown to index and search")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    with StubApiProcess() as api, tempfile.TemporaryDirectory(prefix="scree-bench-search-") as tmp:
        env = clean_env(Path(tmp))
        env.update(SCREE_EMBEDDER="api", SCREE_API_BASE=api.url, SCREE_API_KEY="bench-key")
        settings = load_settings(env, notes=str(args.notes))
        print(f"indexing {settings.folder} ...", file=sys.stderr)
        operations.reindex(settings)
        figures = measure(settings.db_path, settings.folder, args.queries)
    for key, value in figures.items():
        print(f"{key:16} {value:g}")


if __name__ == "__main__":
    main()
