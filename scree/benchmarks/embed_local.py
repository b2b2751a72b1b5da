"""Benchmark the offline embedder (R-E6, SPEC §10, issue 35): load, query latency, chunk throughput, peak RSS, and
its speed relative to this machine.

Run as `python -m bench.embed_local` (add `--install` to fetch the model first). Prints a table and writes
bench/results/embed_local.json. The bars: query median <= 30 ms, throughput >= 5,000 tokens/s on 2 cores.

Speed relative to the machine (issue 35): in this one process, interleaved batch by batch on the same chunks, scree's
chunk embedding and a plain numpy float32 forward pass (scree.benchmarks.numpy_reference, one BLAS thread: main()
sets OPENBLAS_NUM_THREADS=1 before numpy loads) are timed in CPU seconds, and the ratio of their tokens per
CPU-second printed; queries likewise, in CPU milliseconds each. CPU time, unlike wall time, barely moves when other
processes share the cores. The peak RSS is measured first, before the yardstick's float32 weights are loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from scree.benchmarks import RESULTS as RESULTS_DIR
from scree.benchmarks.corpus import WORDS, markdown_file
from scree.config import model_precision
from scree.embedders.local import LocalEmbedder
from scree.embedders.model_install import MODEL_NAME, file_sha256, install_model
from scree.paths import data_home

RESULTS = RESULTS_DIR / "embed_local.json"
QUERY_WORDS = 20
QUERY_RUNS = 60
CHUNKS = 400
CHUNK_WORDS = 300
QUERY_BAR_MS = 30.0  # SPEC §10
THROUGHPUT_BAR = 5000.0  # SPEC §10, tokens/s on 2 cores
SAMPLE_SECONDS = 0.01
RATIO_BAR_FAST = 2.4  # issue 35: scree over numpy float32 where the CPU runs bf16 or int8 (BF16 or VNNI)
RATIO_BAR = 1.0  # ... and everywhere else
PRECISION_BITS = {"bf16": 16, "int8": 8, "fp32": 32}
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")  # the yardstick's BLAS, one thread


def default_model_dir() -> Path:
    configured = os.environ.get("SCREE_LOCAL_MODEL_DIR")
    return Path(configured).expanduser() if configured else data_home(os.environ) / "models" / MODEL_NAME


def make_chunks(count: int, words: int, seed: int = 7) -> list[str]:
    """Markdown-like chunks in the form the writer embeds (R-C4: path, heading trail, blank line, text)."""
    rng = random.Random(seed)
    chunks = []
    for index in range(count):
        body = markdown_file(rng, words * 8)
        kept: list[str] = []
        total = 0
        for line in body.splitlines():
            kept.append(line)
            total += len(line.split())
            if total >= words:
                break
        chunks.append(
            f"docs/section{index % 17}/note{index}.md\nGuide > Part {index % 5} > Details\n\n" + "\n".join(kept)
        )
    return chunks


def make_queries(count: int, words: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)) + "?" for _ in range(count)]


class PeakRss:
    """Samples this process's RSS on a thread; `peak` is the highest value seen while running."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, self.process.memory_info().rss)

    @contextmanager
    def sampling(self) -> Iterator[PeakRss]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()
            self.peak = max(self.peak, self.process.memory_info().rss)


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def cpu_time() -> float:
    """This process's CPU seconds, every thread's (the runtime's included), to the nanosecond."""
    return time.process_time()


def _interleaved(embedder: LocalEmbedder, texts: list[str], model_dir: Path) -> dict[str, float]:
    """Batch by batch, scree's embedding then the numpy float32 pass on the same texts; queries one by one alike."""
    from scree.benchmarks.numpy_reference import NumpyMiniLM
    from scree.embedders.model_install import MODEL_FILE

    reference = NumpyMiniLM(model_dir / MODEL_FILE)
    tokenizer = embedder._loaded()  # the same token ids for both
    step = embedder.batch_size
    tokens = scree_cpu = numpy_cpu = 0.0
    for start in range(0, len(texts), step):
        batch = texts[start : start + step]
        ids = tokenizer.token_ids(batch)
        tokens += sum(len(row) for row in ids)
        before = cpu_time()
        embedder.embed(batch)
        middle = cpu_time()
        reference.embed(ids)
        numpy_cpu += cpu_time() - middle
        scree_cpu += middle - before
    queries = make_queries(QUERY_RUNS, QUERY_WORDS, seed=13)
    scree_query = numpy_query = 0.0
    for query in queries:
        before = cpu_time()
        embedder.embed_query(query)
        middle = cpu_time()
        reference.embed(tokenizer.token_ids([query]))
        numpy_query += cpu_time() - middle
        scree_query += middle - before
    return {
        "relative_tokens": tokens,
        "tokens_per_cpu_s_scree": round(tokens / scree_cpu),
        "tokens_per_cpu_s_numpy": round(tokens / numpy_cpu),
        "ratio_to_numpy": round(numpy_cpu / scree_cpu, 2),
        "query_cpu_ms": round(scree_query / len(queries) * 1000, 2),
        "query_cpu_ms_numpy": round(numpy_query / len(queries) * 1000, 2),
    }


def measure(
    model_dir: Path,
    chunks: int = CHUNKS,
    chunk_words: int = CHUNK_WORDS,
    workers: int | None = None,
    precision: str = "auto",
) -> dict[str, Any]:
    """Load the model from `model_dir` (ModelMissingError when it is not there), then time queries and chunks."""
    mib = 1024 * 1024
    process = psutil.Process()
    rss_start = process.memory_info().rss
    embedder = LocalEmbedder(model_dir, workers=workers, precision=precision)
    load_s = timed(embedder.load)  # imports numpy, tokenizers and openvino, checks sha256, builds and compiles
    sha_s = timed(lambda: file_sha256(model_dir / "model.safetensors"))
    rss_loaded = process.memory_info().rss
    model = embedder._loaded()
    choice = model.runner.choice

    queries = make_queries(QUERY_RUNS + 1, QUERY_WORDS)
    embedder.embed_query(queries[0])
    latencies = []
    for query in queries[1:]:
        start = time.perf_counter()
        embedder.embed_query(query)
        latencies.append((time.perf_counter() - start) * 1000)
    latencies.sort()
    query_tokens = statistics.median(embedder.count_tokens(queries))

    texts = make_chunks(chunks, chunk_words)
    step = embedder.batch_size  # as the embedder tokenises: one call for all 400 would hold them all at once
    tokens = sum(sum(embedder.count_tokens(texts[i : i + step])) for i in range(0, len(texts), step))
    embedder.embed(texts[: embedder.batch_size])  # warm the runtime's threads
    cpu_before = cpu_time()
    with PeakRss().sampling() as rss:
        embed_s = timed(lambda: embedder.embed(texts))
    # CPU seconds spent embedding: unlike wall time, other processes competing for the cores barely change it.
    cpu_s = cpu_time() - cpu_before
    cores = min(embedder.workers, len(os.sched_getaffinity(0)))
    relative = _interleaved(embedder, texts, model_dir)
    embedder.close()
    return {
        "precision": model.runner.precision,
        "precision_bits": PRECISION_BITS[model.runner.precision],
        "precision_why": choice.why,
        "model_load_s": round(load_s, 3),
        "sha256_check_s": round(sha_s, 3),
        "query_words": QUERY_WORDS,
        "query_tokens_median": query_tokens,
        "query_ms_median": round(statistics.median(latencies), 2),
        "query_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
        "chunks": len(texts),
        "chunk_words": chunk_words,
        "tokens": tokens,
        "embed_s": round(embed_s, 2),
        "tokens_per_s": round(tokens / embed_s),
        "chunks_per_s": round(len(texts) / embed_s, 1),
        "cpu_s": round(cpu_s, 2),
        "tokens_per_cpu_s": round(tokens / cpu_s),
        "tokens_per_s_if_cores_idle": round(tokens / cpu_s * cores),
        **relative,
        "rss_start_mb": round(rss_start / mib, 1),
        "rss_loaded_mb": round(rss_loaded / mib, 1),
        "rss_peak_embedding_mb": round(rss.peak / mib, 1),
        "ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "workers": embedder.workers,
        "batch_size": embedder.batch_size,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def ratio_bar(precision_bits: float) -> float:
    """The ratio to numpy float32 scree must reach: 2.4 where the CPU runs bf16 or int8, 1.0 elsewhere."""
    return RATIO_BAR_FAST if precision_bits < 32 else RATIO_BAR


def print_table(result: dict[str, Any]) -> None:
    rows = [
        ("precision", f"{result['precision']} ({result['precision_why']})"),
        ("model load (imports + sha256 + compile)", f"{result['model_load_s']:.2f} s"),
        ("  of which sha256 of model.safetensors", f"{result['sha256_check_s']:.2f} s"),
        (
            f"query latency, {QUERY_WORDS} words ({result['query_tokens_median']:.0f} tokens)",
            f"median {result['query_ms_median']:.1f} ms, p95 {result['query_ms_p95']:.1f} ms "
            f"(bar <= {QUERY_BAR_MS:.0f} ms)",
        ),
        (
            f"throughput, {result['chunks']} chunks of ~{result['chunk_words']} words",
            f"{result['tokens_per_s']:,} tokens/s, {result['chunks_per_s']} chunks/s (bar >= {THROUGHPUT_BAR:,.0f})",
        ),
        (
            "CPU-time throughput (competition-proof)",
            f"{result['tokens_per_cpu_s']:,} tokens per CPU-second; x{min(result['workers'], result['cpus'])} cores = "
            f"{result['tokens_per_s_if_cores_idle']:,} tokens/s on idle cores",
        ),
        (
            "against numpy float32 (1 BLAS thread), interleaved",
            f"{result['tokens_per_cpu_s_scree']:,} against {result['tokens_per_cpu_s_numpy']:,} tokens per CPU-second: "
            f"x{result['ratio_to_numpy']} (bar >= {ratio_bar(result['precision_bits'])})",
        ),
        (
            "query CPU time, interleaved with numpy float32",
            f"{result['query_cpu_ms']} against {result['query_cpu_ms_numpy']} ms a query",
        ),
        (
            "RSS start / loaded / peak while embedding",
            f"{result['rss_start_mb']} / {result['rss_loaded_mb']} / "
            f"{result['rss_peak_embedding_mb']} MB (ru_maxrss {result['ru_maxrss_mb']} MB)",
        ),
        (
            "workers / batch / cpus / load avg",
            f"{result['workers']} / {result['batch_size']} / {result['cpus']} / {result['load_average_1m']}",
        ),
        ("openvino", str(result["openvino"])),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embed_local", description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=None, help="default: SCREE_LOCAL_MODEL_DIR or the XDG one")
    parser.add_argument("--install", action="store_true", help="run the installer first (needs the package index)")
    parser.add_argument("--chunks", type=int, default=CHUNKS)
    parser.add_argument("--chunk-words", type=int, default=CHUNK_WORDS)
    parser.add_argument("--workers", type=int, default=None, help="inference threads (default: one per core)")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"where to write results (default {RESULTS})")
    args = parser.parse_args(argv)
    for name in ONE_THREAD:  # before numpy loads: the yardstick is one core's float32 work
        os.environ.setdefault(name, "1")
    model_dir = args.model_dir or default_model_dir()
    if args.install:
        model_dir = install_model(model_dir.parent, progress=lambda line: print(line, file=sys.stderr))
    result = measure(model_dir, args.chunks, args.chunk_words, args.workers, model_precision(os.environ))
    result.update(openvino=_openvino_version())
    print_table(result)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


def _openvino_version() -> str:
    import openvino as ov

    return str(ov.get_version())


if __name__ == "__main__":
    raise SystemExit(main())
