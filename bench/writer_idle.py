"""The writer at rest: idle RSS of `scree watch` with the API embedder, its watch count and its first-sync time.

Run: python -m bench.writer_idle [--tree-mb 20] [--small-files 40000] [--idle 5] [--json PATH]
Bar (SPEC §10): writer idle RSS (watching) ≤ 40 MB with the API embedder.
Two trees: a generated ~20 MB markdown tree (bench.corpus), and 40,000 small notes in 400 folders. The embeddings API
is tests/embed_server.py run as its own process, so the writer's RSS holds only the writer. RSS is sampled every
SAMPLE_S during the first sync (peak) and, after IDLE seconds of quiet, over another IDLE seconds (median).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from bench.corpus import generate_tree, markdown_file

REPO = Path(__file__).resolve().parent.parent
EMBED_SERVER = REPO / "tests" / "embed_server.py"
SAMPLE_S = 0.1
SYNC_DEADLINE_S = 1800.0
BAR_IDLE_MB = 40.0  # SPEC §10
SMALL_FOLDERS = 400
SMALL_FILE_BYTES = 300
MB = 1024 * 1024  # RSS in MiB, as ps and top count it
DEFAULT_JSON = Path(__file__).parent / "results" / "writer_idle.json"
HEAVY_MODULES = ("numpy", "tokenizers", "onnxruntime", "mcp", "pydantic")  # none of these belong in this writer


def small_tree(root: Path, files: int, seed: int = 3) -> int:
    rng = random.Random(seed)
    for n in range(files):
        folder = root / f"area{n % SMALL_FOLDERS:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{n:05d}.md").write_text(markdown_file(rng, SMALL_FILE_BYTES), encoding="utf-8")
    return files


class EmbedServerProcess:
    """tests/embed_server.py in its own process; `url` is what it printed."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(EMBED_SERVER)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise SystemExit(f"the embeddings server did not start: {self.url!r}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class WatchProcess:
    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scree.cli", "watch", "--notes", str(folder)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.ps = psutil.Process(self.proc.pid)
        self.records: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if line.startswith("{"):
                self.records.append(json.loads(line))
            else:
                print(line.rstrip(), file=sys.stderr)

    def record(self, event: str) -> dict[str, Any] | None:
        return next((r for r in list(self.records) if r.get("event") == event), None)

    def rss_mb(self) -> float:
        return float(self.ps.memory_info().rss) / MB

    def loaded_heavy_modules(self) -> list[str]:
        """Heavy packages whose files the process has mapped (a shared library or more)."""
        maps = Path(f"/proc/{self.proc.pid}/maps")
        if not maps.exists():
            return []
        text = maps.read_text()
        return [name for name in HEAVY_MODULES if f"/site-packages/{name}" in text]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._thread.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def measure_tree(label: str, folder: Path, data: Path, api_url: str, idle_s: float) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env.update(
        XDG_DATA_HOME=str(data),
        SCREE_EMBEDDER="api",
        SCREE_API_BASE=api_url,
        SCREE_API_KEY="bench-key",
        SCREE_LOG_FORMAT="json",
        SCREE_FIRST_SYNC_MB="1000",
    )
    markdown_mb = sum(p.stat().st_size for p in folder.rglob("*.md")) / 1e6
    files = sum(1 for _ in folder.rglob("*.md"))
    started = time.monotonic()
    watch = WatchProcess(folder, env)
    peak = 0.0
    try:
        while watch.record("first sync done") is None:
            if watch.proc.poll() is not None:
                raise SystemExit(f"{label}: scree watch exited with {watch.proc.returncode}")
            if time.monotonic() - started > SYNC_DEADLINE_S:
                raise SystemExit(f"{label}: no first sync within {SYNC_DEADLINE_S} s")
            peak = max(peak, watch.rss_mb())
            time.sleep(SAMPLE_S)
        until_synced = time.monotonic() - started
        synced = watch.record("synced the folder") or {}
        watching = watch.record("watching") or {}
        time.sleep(idle_s)  # let the process settle: this measures rest, not the tail of the sync
        samples = []
        for _ in range(max(1, int(idle_s / SAMPLE_S))):
            samples.append(watch.rss_mb())
            time.sleep(SAMPLE_S)
        idle = statistics.median(samples)
        heavy = watch.loaded_heavy_modules()
    finally:
        watch.stop()
    return {
        "tree": label,
        "files": files,
        "markdown_mb": round(markdown_mb, 1),
        "watches": watching.get("watches"),
        "first_sync_s": round(float(synced.get("seconds", 0.0)), 1),
        "start_to_synced_s": round(until_synced, 1),
        "chunks_embedded": synced.get("chunks_embedded"),
        "peak_rss_mb": round(peak, 1),
        "idle_rss_mb": round(idle, 1),
        "heavy_modules_loaded": heavy,
        "bar_met": idle <= BAR_IDLE_MB,
    }


def run(tree_mb: float, small_files: int, idle_s: float) -> list[dict[str, Any]]:
    results = []
    server = EmbedServerProcess()
    try:
        with tempfile.TemporaryDirectory(prefix="scree-bench-idle-") as tmp:
            if tree_mb > 0:
                folder = Path(tmp) / "tree"
                folder.mkdir()
                print(f"generating a {tree_mb:g} MB markdown tree ...", file=sys.stderr)
                generate_tree(folder, int(tree_mb * 1e6), seed=20)
                results.append(measure_tree(f"{tree_mb:g} MB tree", folder, Path(tmp) / "data1", server.url, idle_s))
            if small_files > 0:
                folder = Path(tmp) / "small"
                print(f"generating {small_files} small notes ...", file=sys.stderr)
                small_tree(folder, small_files)
                label = f"{small_files} small notes"
                results.append(measure_tree(label, folder, Path(tmp) / "data2", server.url, idle_s))
    finally:
        server.stop()
    return results


COLUMNS = [
    ("tree", "tree", 20),
    ("files", "files", 7),
    ("MB", "markdown_mb", 6),
    ("watches", "watches", 8),
    ("sync s", "first_sync_s", 7),
    ("chunks", "chunks_embedded", 7),
    ("peak MB", "peak_rss_mb", 8),
    ("idle MB", "idle_rss_mb", 8),
    ("heavy", "heavy_modules_loaded", 10),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree-mb", type=float, default=20.0)
    parser.add_argument("--small-files", type=int, default=40_000)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of quiet before and while sampling")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    results = run(args.tree_mb, args.small_files, args.idle)
    print("  ".join(f"{title:>{width}}" for title, _, width in COLUMNS))
    for row in results:
        print(
            "  ".join(
                f"{str(row[key] if key != 'heavy_modules_loaded' else ','.join(row[key]) or '-'):>{width}}"
                for _, key, width in COLUMNS
            )
        )
    met = all(row["bar_met"] for row in results)
    print(f"bar: writer idle RSS <= {BAR_IDLE_MB:g} MB with the API embedder: {'met' if met else 'MISSED'}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"results": results, "bar_idle_mb": BAR_IDLE_MB, "bar_met": met}, indent=2) + "\n")


if __name__ == "__main__":
    main()
