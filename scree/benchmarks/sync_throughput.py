"""Sync throughput (MB/s) with an instant embedder, and the writer's peak RSS on 5 MB and 20 MB trees.

Run: python -m bench.sync_throughput [--sizes 5,20] [--json PATH]
Bars (SPEC §10): ≥ 5 MB/s on 2 cores; peak RSS must not grow with the folder (one file at a time in memory).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import generate_tree

DIMS = 512
BAR_MB_S = 5.0
POOL = [struct.pack(f"<{DIMS}f", *([0.0] * i + [1.0] + [0.0] * (DIMS - i - 1))) for i in range(256)]


def _instant_embedder() -> object:
    from scree.embedders.base import Embedder

    class InstantEmbedder(Embedder):
        """Costs one hash per text: measures scree's own work, not a model's."""

        kind = "bench"
        model_id = "instant"
        dims = DIMS
        batch_size = 64

        def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
            return [POOL[hashlib.blake2b(t.encode("utf-8", "replace"), digest_size=2).digest()[0]] for t in texts]

    return InstantEmbedder()


def child(folder: Path, db: Path) -> None:
    """Sync `folder` into `db` in this process and print one JSON line with the figures."""
    from scree.content.ignore import IgnorePolicy
    from scree.index.model_policy import prepare
    from scree.store import SqliteWriter
    from scree.writer_proc.sync import Syncer

    embedder = _instant_embedder()
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    cpu_started = time.process_time()
    with SqliteWriter.open(db, folder) as store:
        prepare(store, embedder)  # type: ignore[arg-type]
        report = Syncer(store, IgnorePolicy(folder), embedder, 1_000_000).sync_all()  # type: ignore[arg-type]
        files, chunks = store.counts()
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "files": files,
                "chunks": chunks,
                "mb": report.bytes_read / 1e6,
                "seconds": seconds,
                "mb_per_s": report.bytes_read / 1e6 / seconds,
                "mb_per_cpu_s": report.bytes_read / 1e6 / cpu_seconds,
                "baseline_rss_mb": baseline_kb / 1024,
                "peak_rss_mb": peak_kb / 1024,
            }
        )
    )


def measure(folder: Path) -> dict[str, float]:
    """Sync `folder` into a new index in a fresh process (so its peak RSS is the sync's own); the figures it printed."""
    with tempfile.TemporaryDirectory(prefix="scree-bench-sync-") as tmp:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "scree.benchmarks.sync_throughput",
                "--child",
                str(folder),
                str(Path(tmp) / "index.db"),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    figures: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def run(sizes_mb: list[int]) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="scree-bench-") as tmp:
        for size in sizes_mb:
            folder = Path(tmp) / f"tree{size}"
            folder.mkdir()
            print(f"generating a {size} MB markdown tree ...", file=sys.stderr)
            generate_tree(folder, size * 1_000_000, seed=size)
            figures = measure(folder)
            results[f"sync_mb_per_s_{size}mb"] = round(figures["mb_per_s"], 2)
            results[f"sync_mb_per_cpu_s_{size}mb"] = round(figures["mb_per_cpu_s"], 2)
            results[f"sync_seconds_{size}mb"] = round(figures["seconds"], 2)
            results[f"chunks_{size}mb"] = figures["chunks"]
            results[f"writer_baseline_rss_mb_{size}mb"] = round(figures["baseline_rss_mb"], 1)
            results[f"writer_peak_rss_mb_{size}mb"] = round(figures["peak_rss_mb"], 1)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="5,20", help="tree sizes in MB, comma separated")
    parser.add_argument("--json", default=str(RESULTS / "sync_throughput.json"))
    parser.add_argument("--child", nargs=2, metavar=("FOLDER", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return
    results = run([int(s) for s in args.sizes.split(",")])
    for key, value in results.items():
        print(f"{key:36} {value}")
    best = min(v for k, v in results.items() if k.startswith("sync_mb_per_s"))
    print(f"{'bar: sync >= 5 MB/s':36} {'met' if best >= BAR_MB_S else 'MISSED'}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
