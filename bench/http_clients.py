"""Many MCP clients at once on `scree serve --http` (R-M9): each of N clients (default 8) opens its own session with
the SDK's streamable HTTP client and runs searches back to back; per-search latency p50/p95 beside one client alone.

Run from the repository's root: python -m bench.http_clients [--clients 8] [--searches 25] [--tree-mb 2]
[--embedder api|local] [--json PATH]. The folder is a generated markdown tree indexed first; the embeddings API is
scree.benchmarks.stub_api in its own process (instant vectors), or the offline model with --embedder local.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import WORDS, generate_tree
from scree.benchmarks.stub_api import StubApiProcess
from scree.benchmarks.writer_idle import clean_env

SCREE = str(Path(sys.executable).with_name("scree"))
DEFAULT_JSON = RESULTS / "http_clients.json"
START_DEADLINE_S = 60.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))) for _ in range(n)]


class HttpServe:
    """`scree serve --http --port 0` on `folder`; `url` once it listens."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [SCREE, "serve", "--http", "--port", "0", "--no-token", "--notes", str(folder)],  # loopback only
            env={**env, "SCREE_LOG_FORMAT": "json"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port: int | None = None
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(START_DEADLINE_S) or self.port is None:
            self.stop()
            raise RuntimeError(f"scree serve --http did not start (exit {self.proc.poll()})")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if line.startswith("{") and '"serving MCP over HTTP"' in line:
                self.port = int(json.loads(line)["port"])
                self._ready.set()
        self._ready.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def one_client(url: str, asks: list[str], out: list[float]) -> None:
    async with create_mcp_http_client() as http_client:
        async with Client(streamable_http_client(url, http_client=http_client), mode="legacy") as client:
            await client.call_tool("search_docs", {"query": "warm up"})  # the session's first call opens the store
            for query in asks:
                started = time.perf_counter()
                result = await client.call_tool("search_docs", {"query": query})
                out.append((time.perf_counter() - started) * 1000.0)
                if result.is_error:
                    raise RuntimeError(f"search_docs failed: {result.content}")


def measure(url: str | list[str], clients: int, searches: int, seed: int) -> dict[str, float]:
    """`clients` sessions at once, `searches` each; latency of every search in ms, and the wall time. With several
    servers' URLs, client n talks to server n modulo their number (issue 31: replicas sharing one database)."""
    urls = [url] if isinstance(url, str) else url
    latencies: list[float] = []

    async def main() -> float:
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for n in range(clients):
                group.start_soon(one_client, urls[n % len(urls)], queries(searches, seed + n), latencies)
        return time.perf_counter() - started

    wall = anyio.run(main)
    assert len(latencies) == clients * searches
    return {
        "clients": clients,
        "searches": len(latencies),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "max_ms": round(max(latencies), 1),
        "searches_per_s": round(len(latencies) / wall, 1),
    }


def run(
    clients: int, searches: int, tree_mb: float, embedder: str, database_url: str | None = None, servers: int = 1
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scree-bench-http-") as tmp:
        folder = Path(tmp) / "notes"
        generate_tree(folder, int(tree_mb * 1_000_000))
        env = clean_env(Path(tmp) / "data")
        api: AbstractContextManager[StubApiProcess | None] = StubApiProcess() if embedder == "api" else nullcontext()
        with api as stub:
            if stub is not None:
                env.update(SCREE_EMBEDDER="api", SCREE_API_BASE=stub.url, SCREE_API_KEY="bench-key")
            else:
                env["SCREE_EMBEDDER"] = "local"
            if database_url is not None:  # issue 31: every server reads one collection in PostgreSQL
                env.update(SCREE_DATABASE_URL=database_url, SCREE_COLLECTION=f"bench/http/{tmp}")
            done = subprocess.run([SCREE, "reindex", "--notes", str(folder)], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"scree reindex failed: {done.stderr.strip()}")
            serves = [HttpServe(folder, env) for _ in range(servers)]
            try:
                alone = measure(serves[0].url, 1, searches, seed=100)
                together = measure([serve.url for serve in serves], clients, searches, seed=200)
            finally:
                for serve in serves:
                    serve.stop()
                if database_url is not None:  # the bench's collection goes with its folder
                    subprocess.run([SCREE, "index", "remove", "--collection", env["SCREE_COLLECTION"]], env=env,
                                   capture_output=True, text=True, check=True)  # fmt: skip
    backend = "postgres" if database_url is not None else "sqlite"
    return {"embedder": embedder, "tree_mb": tree_mb, "backend": backend, "servers": servers,
            "one_client": alone, "concurrent": together}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.http_clients", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--searches", type=int, default=25, help="searches per client")
    parser.add_argument("--tree-mb", type=float, default=2.0)
    parser.add_argument("--embedder", choices=("api", "local"), default="api")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--database-url", help="the index in PostgreSQL (issue 31)")
    parser.add_argument("--servers", type=int, default=1, help="serve --http processes sharing the index")
    args = parser.parse_args()
    figures = run(args.clients, args.searches, args.tree_mb, args.embedder, args.database_url, args.servers)
    for label in ("one_client", "concurrent"):
        row = figures[label]
        print(
            f"{row['clients']} client(s), {row['searches']} searches: p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms, "
            f"max {row['max_ms']} ms, {row['searches_per_s']} searches/s"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
