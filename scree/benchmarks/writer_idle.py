"""The writer at rest: idle RSS of `scree watch` (API embedder or offline model), its peak and its first-sync requests.

Run: python -m bench.writer_idle [--tree-mb 20] [--small-files 40000] [--idle 5] [--embedder api|local] [--json PATH]
Bars (SPEC §10): writer idle RSS (watching) ≤ 40 MB with the API embedder; API requests per first sync ≈ chunks ÷ 64;
writer peak RSS during an offline first sync ≤ 300 MB. Two trees: a generated ~20 MB markdown tree (bench.corpus),
and 40,000 small notes in 400 folders. The embeddings API is bench.stub_api in its own process, so the writer's RSS
holds only the writer. RSS is sampled every SAMPLE_S during the first sync (peak, with the kernel's high-water mark)
and, after IDLE seconds of quiet, over another IDLE seconds (median).
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

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import generate_tree, markdown_file
from scree.benchmarks.stub_api import StubApiProcess
from scree.config import load_settings
from scree.store import SqliteReader

EmbedServerProcess = StubApiProcess  # the name bench.serve_footprint imports
SAMPLE_S = 0.1
SYNC_DEADLINE_S = 1800.0
BAR_IDLE_MB = 40.0  # SPEC §10
SMALL_FOLDERS = 400
SMALL_FILE_BYTES = 300
NO_FIRST_SYNC_CAP_MB = "1000000"  # R-S4's cap would stop the writer before the sync this measures
MB = 1024 * 1024  # RSS in MiB, as ps and top count it
DEFAULT_JSON = RESULTS / "writer_idle.json"
HEAVY_MODULES = ("numpy", "tokenizers", "onnxruntime", "mcp", "pydantic")  # none of these belong in an API writer


def small_tree(root: Path, files: int, seed: int = 3) -> int:
    rng = random.Random(seed)
    for n in range(files):
        folder = root / f"area{n % SMALL_FOLDERS:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{n:05d}.md").write_text(markdown_file(rng, SMALL_FILE_BYTES), encoding="utf-8")
    return files


def clean_env(data: Path) -> dict[str, str]:
    """This process's environment without the user's scree, API and Claude settings, with indexes under `data`.

    SCREE_EXTENSIONS stays: it says which files are notes, and a benchmark measures the folder as scree indexes it.
    XDG_CONFIG_HOME points into `data`, so the user's settings file (which every scree command reads) stays out.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if k == "SCREE_EXTENSIONS" or not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))
    }
    env.update(XDG_DATA_HOME=str(data), XDG_CONFIG_HOME=str(data / "config"), SCREE_FIRST_SYNC_MB=NO_FIRST_SYNC_CAP_MB)
    return env


def peak_rss_mb(pid: int) -> float | None:
    """The kernel's high-water mark of a process's RSS (Linux), which sampling can miss; None elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class WatchProcess:
    """`scree watch` with JSON logs on stderr, read on a thread."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scree.cli", "watch", "--notes", str(folder)],
            env={**env, "SCREE_LOG_FORMAT": "json"},
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

    def wait_for(self, event: str, deadline_s: float, on_tick: Any = None) -> dict[str, Any]:
        """The first log record named `event`; `on_tick()` runs every SAMPLE_S while waiting."""
        end = time.monotonic() + deadline_s
        while (found := self.record(event)) is None:
            if self.proc.poll() is not None:
                raise RuntimeError(f"scree watch exited with {self.proc.returncode} before {event!r}")
            if time.monotonic() > end:
                raise RuntimeError(f"scree watch did not log {event!r} within {deadline_s:g} s")
            if on_tick is not None:
                on_tick()
            time.sleep(SAMPLE_S)
        return found

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


def measure(
    folder: Path,
    data: Path,
    *,
    api: StubApiProcess | None = None,
    model_dir: Path | None = None,
    idle_s: float = 5.0,
) -> dict[str, float]:
    """Start `scree watch` on `folder` (indexes under `data`) with the API embedder against `api`, or with the offline
    model in `model_dir`; its first sync (seconds, peak RSS, chunks, API requests) and its idle RSS afterwards.

    The index stays in `data` for the caller (bench.search_latency times search over it).
    """
    if (api is None) == (model_dir is None):
        raise ValueError("give the stub API or the offline model's folder, not both")
    env = clean_env(data)
    if api is not None:
        env.update(SCREE_EMBEDDER="api", SCREE_API_BASE=api.url, SCREE_API_KEY="bench-key")
    else:
        env.update(SCREE_EMBEDDER="local", SCREE_LOCAL_MODEL_DIR=str(model_dir))
    settings = load_settings(env, notes=str(folder))
    markdown_bytes = sum(p.stat().st_size for p in folder.rglob("*.md"))
    before = api.stats() if api is not None else {}
    started = time.monotonic()
    watch = WatchProcess(folder, env)
    peak = [0.0]

    def sample() -> None:
        # the first sync runs in a spawned child of `scree watch` (R-P3): its high-water mark is the writer's peak
        peak[0] = max(peak[0], watch.rss_mb())
        for child in watch.ps.children(recursive=True):
            try:
                peak[0] = max(peak[0], peak_rss_mb(child.pid) or float(child.memory_info().rss) / MB)
            except psutil.Error:
                continue

    try:
        watch.wait_for("first sync done", SYNC_DEADLINE_S, sample)
        until_synced = time.monotonic() - started
        peak[0] = max(peak[0], peak_rss_mb(watch.proc.pid) or 0.0)
        after = api.stats() if api is not None else {}
        synced = watch.record("synced the folder") or {}
        watching = watch.wait_for("watching", SYNC_DEADLINE_S)
        with SqliteReader.open(settings.db_path, settings.folder) as store:
            files, chunks = store.counts()
        time.sleep(idle_s)  # let the process settle: this measures rest, not the tail of the sync
        samples = []
        for _ in range(max(1, int(idle_s / SAMPLE_S))):
            samples.append(watch.rss_mb())
            time.sleep(SAMPLE_S)
        heavy = watch.loaded_heavy_modules()
    finally:
        watch.stop()
    figures = {
        "files": float(files),
        "markdown_mb": round(markdown_bytes / 1e6, 2),
        "markdown_bytes": float(markdown_bytes),
        "watches": float(watching.get("watches") or 0),
        "first_sync_s": round(float(synced.get("seconds", 0.0)), 3),
        "start_to_synced_s": round(until_synced, 2),
        "chunks": float(chunks),
        "chunks_embedded": float(synced.get("chunks_embedded") or 0),
        "peak_rss_mb": round(peak[0], 1),
        "idle_rss_mb": round(statistics.median(samples), 1),
        "heavy_modules_loaded": float(len(heavy)),
    }
    if api is not None:
        figures["api_requests"] = float(after["requests"] - before["requests"])
        figures["api_inputs"] = float(after["inputs"] - before["inputs"])
    return figures


def run(tree_mb: float, small_files: int, idle_s: float, model_dir: Path | None) -> list[tuple[str, dict[str, float]]]:
    results = []
    api = StubApiProcess() if model_dir is None else None
    try:
        with tempfile.TemporaryDirectory(prefix="scree-bench-idle-") as tmp:
            trees = []
            if tree_mb > 0:
                folder = Path(tmp) / "tree"
                folder.mkdir()
                print(f"generating a {tree_mb:g} MB markdown tree ...", file=sys.stderr)
                generate_tree(folder, int(tree_mb * 1e6), seed=20)
                trees.append((f"{tree_mb:g} MB tree", folder))
            if small_files > 0:
                folder = Path(tmp) / "small"
                print(f"generating {small_files} small notes ...", file=sys.stderr)
                small_tree(folder, small_files)
                trees.append((f"{small_files} small notes", folder))
            for n, (label, folder) in enumerate(trees):
                figures = measure(folder, Path(tmp) / f"data{n}", api=api, model_dir=model_dir, idle_s=idle_s)
                results.append((label, figures))
    finally:
        if api is not None:
            api.stop()
    return results


COLUMNS = [
    ("files", "files", 7),
    ("MB", "markdown_mb", 6),
    ("watches", "watches", 8),
    ("sync s", "first_sync_s", 7),
    ("chunks", "chunks", 7),
    ("requests", "api_requests", 8),
    ("peak MB", "peak_rss_mb", 8),
    ("idle MB", "idle_rss_mb", 8),
    ("heavy", "heavy_modules_loaded", 6),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree-mb", type=float, default=20.0)
    parser.add_argument("--small-files", type=int, default=40_000)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of quiet before and while sampling")
    parser.add_argument("--embedder", choices=("api", "local"), default="api", help="local: the offline model")
    parser.add_argument("--model-dir", type=Path, default=None, help="the offline model (default: scree's own)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    model_dir = None
    if args.embedder == "local":
        from scree.benchmarks.embed_local import default_model_dir

        model_dir = args.model_dir or default_model_dir()
    results = run(args.tree_mb, args.small_files, args.idle, model_dir)
    print(f"{'tree':>20}  " + "  ".join(f"{title:>{width}}" for title, _, width in COLUMNS))
    for label, row in results:
        cells = [f"{row[key]:>{width}g}" if key in row else f"{'-':>{width}}" for _, key, width in COLUMNS]
        print(f"{label:>20}  " + "  ".join(cells))
    met = all(row["idle_rss_mb"] <= BAR_IDLE_MB for _, row in results)
    if model_dir is None:
        print(f"bar: writer idle RSS <= {BAR_IDLE_MB:g} MB with the API embedder: {'met' if met else 'MISSED'}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    payload = {"embedder": args.embedder, "results": {label: row for label, row in results}, "bar_idle_mb": BAR_IDLE_MB}
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
