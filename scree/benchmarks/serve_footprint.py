"""`scree serve`'s footprint beside a bare MCP SDK stdio server: reader idle RSS, handshake time, and the writer's RSS
before and after the process that did the first sync is replaced by a fresh one (R-P3).

Run: python -m bench.serve_footprint [--tree-mb 10] [--runs 9] [--idle 5] [--json PATH]
Bars (SPEC §10): reader idle RSS within 10 MB of a bare SDK server; handshake within 0.2 s of it and never waiting on
a sync. The embeddings API is bench.stub_api in its own process (an instant API embedder), so the writer's RSS holds
only the writer. Handshake: from starting the process to the initialize reply, the median of --runs starts of each
kind (bare, scree on the indexed folder, scree with a first sync due in a fresh data folder), run side by side.
Idle RSS and USS (memory no other process shares): medians of samples taken over --idle seconds after --idle seconds
of quiet following the handshake. The writer children are followed on a thread from the moment serve starts, so a
first sync that ends quickly is still seen.
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import generate_tree
from scree.benchmarks.stub_api import StubApiProcess
from scree.benchmarks.writer_idle import clean_env, peak_rss_mb

SCREE = str(Path(sys.executable).with_name("scree"))
BARE = [sys.executable, "-m", "scree.benchmarks.bare_mcp_server"]
MB = 1024 * 1024  # RSS in MiB, as ps and top count it
SAMPLE_S = 0.1
CHILD_POLL_S = 0.1  # how often the writer children of a serve are looked for
WRITER_MARKER = "spawn_main"  # in the command line of a multiprocessing spawn child
TRACKER_MARKER = "resource_tracker"
REPLY_TIMEOUT_S = 60.0
SYNC_DEADLINE_S = 900.0
BAR_RSS_MB = 10.0  # SPEC §10: reader idle RSS within this of the bare server
BAR_HANDSHAKE_S = 0.2  # SPEC §10
DEFAULT_JSON = RESULTS / "serve_footprint.json"
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}


class Stdio:
    """A stdio MCP server process driven with JSON-RPC lines; its stderr is drained to a file."""

    def __init__(self, command: list[str], env: dict[str, str], log: Path) -> None:
        self.started = time.monotonic()
        self._log = log.open("ab")
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self.ps = psutil.Process(self.proc.pid)
        self._replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._replies.put(json.loads(line))

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        while True:
            reply = self._replies.get(timeout=REPLY_TIMEOUT_S)
            if reply.get("id") == self._next_id:
                return reply

    def handshake(self) -> float:
        """Seconds from starting the process to the initialize reply."""
        self.request("initialize", INITIALIZE)
        elapsed = time.monotonic() - self.started
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def tool(self, name: str, arguments: dict[str, Any]) -> str:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        return str(result["content"][0]["text"])

    def children(self, marker: str) -> list[psutil.Process]:
        out = []
        for child in self.ps.children():
            try:
                if marker in " ".join(child.cmdline()):
                    out.append(child)
            except psutil.Error:
                continue
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


def rss_mb(proc: psutil.Process) -> float:
    return float(proc.memory_info().rss) / MB


def idle_memory(procs: Callable[[], list[psutil.Process]], idle_s: float) -> tuple[float, float]:
    """Median summed RSS and USS of `procs` over idle_s seconds, after idle_s seconds of quiet."""
    time.sleep(idle_s)
    rss, uss = [], []
    for _ in range(max(1, int(idle_s / SAMPLE_S))):
        infos = [p.memory_full_info() for p in procs()]
        rss.append(sum(float(i.rss) for i in infos) / MB)
        uss.append(sum(float(i.uss) for i in infos) / MB)
        time.sleep(SAMPLE_S)
    return statistics.median(rss), statistics.median(uss)


def idle_rss(procs: Callable[[], list[psutil.Process]], idle_s: float) -> float:
    return idle_memory(procs, idle_s)[0]


class Writers:
    """The writer children of one serve, followed on a thread: each pid in the order first seen, with its peak and
    last RSS. A SYNC child that is done before anyone asks is still counted, and the WATCH child after it is second."""

    def __init__(self, serve: Stdio) -> None:
        self._serve = serve
        self.seen: list[psutil.Process] = []
        self.peak: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(CHILD_POLL_S):
            for child in self._serve.children(WRITER_MARKER):
                if child.pid not in self.peak:
                    self.seen.append(child)
                    self.peak[child.pid] = 0.0
                try:
                    self.last[child.pid] = rss_mb(child)
                except psutil.Error:
                    continue
                high = peak_rss_mb(child.pid) or 0.0
                self.peak[child.pid] = max(self.peak[child.pid], self.last[child.pid], high)

    def nth(self, n: int) -> psutil.Process | None:
        """The n-th writer child this serve started (0: the first), once it has been seen."""
        return self.seen[n] if len(self.seen) > n else None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def ended(proc: psutil.Process) -> bool:
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def wait_for(condition: Callable[[], Any], what: str, deadline_s: float = SYNC_DEADLINE_S) -> Any:
    end = time.monotonic() + deadline_s
    while not (value := condition()):
        if time.monotonic() > end:
            raise SystemExit(f"not within {deadline_s} s: {what}")
        time.sleep(SAMPLE_S)
    return value


def serve_command(folder: Path) -> list[str]:
    return [SCREE, "serve", "--notes", str(folder)]


def measure_handshakes(folder: Path, env: dict[str, str], data: Path, runs: int, log: Path) -> dict[str, list[float]]:
    """Handshakes of the bare server, of `scree serve` on the indexed folder and of one with a first sync due (a fresh
    data folder each time), one of each per round: a 2-core machine's load swings by more than the 0.2 s bar from
    one minute to the next, so the three are measured side by side rather than one batch after another."""
    times: dict[str, list[float]] = {"bare": [], "serve": [], "first_sync": []}
    for run in range(runs):
        fresh = {**env, "XDG_DATA_HOME": str(data / f"fresh-{run}")}
        for name, command, run_env in (
            ("bare", BARE, env),
            ("serve", serve_command(folder), env),
            ("first_sync", serve_command(folder), fresh),
        ):
            server = Stdio(command, run_env, log)
            times[name].append(server.handshake())
            server.close()
    return times


def measure_bare(env: dict[str, str], idle_s: float, log: Path) -> dict[str, Any]:
    server = Stdio(BARE, env, log)
    server.handshake()
    rss, uss = idle_memory(lambda: [server.ps], idle_s)
    server.close()
    return {"idle_rss_mb": round(rss, 1), "idle_uss_mb": round(uss, 1)}


def measure_first_sync(folder: Path, env: dict[str, str], idle_s: float, log: Path) -> dict[str, float]:
    """A new index: whether the first sync was running when search first answered, the SYNC child's RSS, then the
    fresh WATCH child's. It leaves the folder indexed for the measurements that follow."""
    serve = Stdio(serve_command(folder), env, log)
    writers = Writers(serve)
    try:
        serve.handshake()
        note = serve.tool("search_docs", {"query": "sync", "mode": "keyword", "k": 1}).rsplit("\n", 1)[-1]
        first = wait_for(lambda: writers.nth(0), "the first-sync writer")
        fresh = wait_for(lambda: ended(first) and writers.nth(1), "the watching writer")
        wait_for(lambda: serve.tool("reindex", {}).startswith("Scanned "), "the watching writer answers")
        watching = idle_rss(lambda: [fresh], idle_s)
    finally:
        writers.stop()
        serve.close()
    return {
        "first_sync_running_at_handshake": float(note.startswith("[index incomplete")),
        "first_sync_writer_peak_rss_mb": round(writers.peak[first.pid], 1),
        "first_sync_writer_last_rss_mb": round(writers.last.get(first.pid, 0.0), 1),
        "first_sync_fresh_writer_idle_rss_mb": round(watching, 1),
    }


def measure_serve(folder: Path, env: dict[str, str], idle_s: float, log: Path) -> dict[str, float]:
    """An indexed folder: the lock holder's reader, writer and resource tracker; a second reader."""
    holder = Stdio(serve_command(folder), env, log)
    writers = Writers(holder)
    other: Stdio | None = None
    try:
        holder.handshake()
        # No tool call before the idle sample: a reindex would load the store and search modules into the reader.
        first = wait_for(lambda: writers.nth(0), "the catch-up writer")
        watcher = wait_for(lambda: ended(first) and writers.nth(1), "the watching writer")
        writers.stop()  # quiet from here on: the samples below are the measurement
        other = Stdio(serve_command(folder), env, log)
        other.handshake()
        reader, reader_uss = idle_memory(lambda: [holder.ps], idle_s)
        other_reader = idle_rss(lambda: [other.ps] if other else [], idle_s / 2)
        writer = idle_rss(lambda: [watcher], idle_s / 2)
        tracker = idle_rss(lambda: holder.children(TRACKER_MARKER), idle_s / 2)
        holder.tool("search_docs", {"query": "sync", "mode": "keyword", "k": 1})
        after_search = idle_rss(lambda: [holder.ps], idle_s / 2)
    finally:
        writers.stop()
        if other is not None:
            other.close()
        holder.close()
    return {
        "reader_idle_rss_mb": round(reader, 1),
        "reader_idle_uss_mb": round(reader_uss, 1),
        "second_reader_idle_rss_mb": round(other_reader, 1),
        "reader_rss_after_a_search_mb": round(after_search, 1),
        "writer_idle_rss_mb": round(writer, 1),
        "resource_tracker_rss_mb": round(tracker, 1),
    }


def measure(folder: Path, api_url: str, data: Path, runs: int = 9, idle_s: float = 5.0) -> dict[str, float]:
    """A bare SDK server beside `scree serve` on `folder` (indexes under `data`, API embedder at `api_url`): the first
    sync, the handshakes side by side, then idle memory. Keys: bare_*, serve_* and first_sync_*, and the differences
    the bars are about."""
    env = clean_env(data)
    env.update(SCREE_EMBEDDER="api", SCREE_API_BASE=api_url, SCREE_API_KEY="bench-key", SCREE_LOG_LEVEL="warning")
    log = data / "serve-stderr.log"
    data.mkdir(parents=True, exist_ok=True)
    first = measure_first_sync(folder, env, idle_s, log)
    times = measure_handshakes(folder, env, data, runs, log)
    bare = measure_bare(env, idle_s, log)
    serve = measure_serve(folder, env, idle_s, log)
    medians = {name: round(statistics.median(values), 3) for name, values in times.items()}
    figures = {f"bare_{key}": value for key, value in bare.items()}
    figures.update({f"serve_{key}": value for key, value in serve.items()})
    figures.update(first)
    figures["bare_handshake_s"] = medians["bare"]
    figures["serve_handshake_s"] = medians["serve"]
    figures["first_sync_handshake_s"] = medians["first_sync"]
    figures["first_sync_handshake_worst_s"] = round(max(times["first_sync"]), 3)
    figures["reader_rss_over_bare_mb"] = round(serve["reader_idle_rss_mb"] - bare["idle_rss_mb"], 1)
    figures["handshake_over_bare_s"] = round(medians["serve"] - medians["bare"], 3)
    figures["first_sync_handshake_over_bare_s"] = round(medians["first_sync"] - medians["bare"], 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree-mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=9, help="rounds of handshakes (one start of each kind per round)")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of quiet before and while sampling")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    with StubApiProcess() as api, tempfile.TemporaryDirectory(prefix="scree-bench-serve-") as tmp:
        folder = Path(tmp) / "tree"
        folder.mkdir()
        print(f"generating a {args.tree_mb:g} MB markdown tree ...", file=sys.stderr)
        generate_tree(folder, int(args.tree_mb * 1e6), seed=21)
        result = measure(folder, api.url, Path(tmp) / "data", args.runs, args.idle)
    rows = [
        ("handshake, bare SDK server", f"{result['bare_handshake_s']:.3f} s"),
        ("handshake, scree serve (indexed folder)", f"{result['serve_handshake_s']:.3f} s"),
        ("handshake, scree serve, first sync due (median)", f"{result['first_sync_handshake_s']:.3f} s"),
        ("handshake, scree serve, first sync due (worst)", f"{result['first_sync_handshake_worst_s']:.3f} s"),
        ("idle RSS, bare SDK server", f"{result['bare_idle_rss_mb']:.1f} MB"),
        ("idle USS, bare SDK server", f"{result['bare_idle_uss_mb']:.1f} MB"),
        ("idle RSS, scree reader (holds the lock)", f"{result['serve_reader_idle_rss_mb']:.1f} MB"),
        ("idle USS, scree reader (holds the lock)", f"{result['serve_reader_idle_uss_mb']:.1f} MB"),
        ("idle RSS, scree reader (another holds it)", f"{result['serve_second_reader_idle_rss_mb']:.1f} MB"),
        ("RSS, scree reader after one search", f"{result['serve_reader_rss_after_a_search_mb']:.1f} MB"),
        ("RSS, multiprocessing resource tracker", f"{result['serve_resource_tracker_rss_mb']:.1f} MB"),
        ("writer RSS, first-sync process at its peak", f"{result['first_sync_writer_peak_rss_mb']:.1f} MB"),
        ("writer RSS, first-sync process at its end", f"{result['first_sync_writer_last_rss_mb']:.1f} MB"),
        ("writer RSS, fresh process watching (idle)", f"{result['first_sync_fresh_writer_idle_rss_mb']:.1f} MB"),
        ("writer RSS, watching (indexed folder)", f"{result['serve_writer_idle_rss_mb']:.1f} MB"),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"scree serve footprint, {args.tree_mb:g} MB markdown tree, API embedder (instant)")
    for label, value in rows:
        print(f"  {label:<{width}}  {value:>10}")
    rss_met = result["reader_rss_over_bare_mb"] <= BAR_RSS_MB
    handshake_met = result["handshake_over_bare_s"] <= BAR_HANDSHAKE_S
    print(
        f"  reader idle RSS over bare: {result['reader_rss_over_bare_mb']:+.1f} MB (bar {BAR_RSS_MB:g} MB): "
        f"{'met' if rss_met else 'MISSED'}"
    )
    print(
        f"  handshake over bare: {result['handshake_over_bare_s']:+.3f} s (bar {BAR_HANDSHAKE_S:g} s): "
        f"{'met' if handshake_met else 'MISSED'}"
    )
    running = "yes" if result["first_sync_running_at_handshake"] else "no (it was already done)"
    print(f"  first sync still running when the handshake was answered: {running}")
    payload: dict[str, object] = {"tree_mb": args.tree_mb, "runs": args.runs, **result}
    payload["bars"] = {"reader_rss_met": rss_met, "handshake_met": handshake_met}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
