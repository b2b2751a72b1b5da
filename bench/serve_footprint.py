"""`scree serve`'s footprint beside a bare MCP SDK stdio server: reader idle RSS, handshake time, and the writer's RSS
before and after the process that did the first sync is replaced by a fresh one (R-P3).

Run: python -m bench.serve_footprint [--tree-mb 10] [--runs 9] [--idle 5] [--json PATH]
Bars (SPEC §10): reader idle RSS within 10 MB of a bare SDK server; handshake within 0.2 s of it and never waiting on
a sync. The embeddings API is tests/embed_server.py in its own process (an instant API embedder), so the writer's RSS
holds only the writer. Handshake: from starting the process to the initialize reply, the median of --runs starts.
Idle RSS: the median of samples taken over --idle seconds after --idle seconds of quiet following the handshake.
"""

from __future__ import annotations

import argparse
import json
import os
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

from bench.corpus import generate_tree
from bench.writer_idle import EmbedServerProcess

SCREE = str(Path(sys.executable).with_name("scree"))
BARE = [sys.executable, "-m", "bench.bare_mcp_server"]
MB = 1024 * 1024  # RSS in MiB, as ps and top count it
SAMPLE_S = 0.1
REPLY_TIMEOUT_S = 60.0
SYNC_DEADLINE_S = 900.0
BAR_RSS_MB = 10.0  # SPEC §10: reader idle RSS within this of the bare server
BAR_HANDSHAKE_S = 0.2  # SPEC §10
DEFAULT_JSON = Path(__file__).parent / "results" / "serve_footprint.json"
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


def idle_rss(procs: Callable[[], list[psutil.Process]], idle_s: float) -> float:
    """Median summed RSS of `procs` over idle_s seconds, after idle_s seconds of quiet."""
    time.sleep(idle_s)
    samples = []
    for _ in range(max(1, int(idle_s / SAMPLE_S))):
        samples.append(sum(rss_mb(p) for p in procs()))
        time.sleep(SAMPLE_S)
    return statistics.median(samples)


def wait_for(condition: Callable[[], Any], what: str, deadline_s: float = SYNC_DEADLINE_S) -> Any:
    end = time.monotonic() + deadline_s
    while not (value := condition()):
        if time.monotonic() > end:
            raise SystemExit(f"not within {deadline_s} s: {what}")
        time.sleep(SAMPLE_S)
    return value


def serve_command(folder: Path) -> list[str]:
    return [SCREE, "serve", "--notes", str(folder)]


def measure_bare(env: dict[str, str], runs: int, idle_s: float, log: Path) -> dict[str, Any]:
    handshakes = []
    for _ in range(runs):
        server = Stdio(BARE, env, log)
        handshakes.append(server.handshake())
        server.close()
    server = Stdio(BARE, env, log)
    server.handshake()
    idle = idle_rss(lambda: [server.ps], idle_s)
    server.close()
    return {"handshake_s": round(statistics.median(handshakes), 3), "idle_rss_mb": round(idle, 1)}


def measure_first_sync(folder: Path, env: dict[str, str], idle_s: float, log: Path) -> dict[str, Any]:
    """A new index: the handshake during the first sync, the SYNC child's RSS, then the fresh WATCH child's."""
    serve = Stdio(serve_command(folder), env, log)
    handshake = serve.handshake()
    note = serve.tool("search_docs", {"query": "sync", "mode": "keyword", "k": 1}).rsplit("\n", 1)[-1]
    first = wait_for(lambda: serve.children("spawn_main"), "the first-sync writer")[0]
    peak = last = 0.0
    while first.is_running() and first.status() != psutil.STATUS_ZOMBIE:
        try:
            last = rss_mb(first)
        except psutil.Error:
            break
        peak = max(peak, last)
        time.sleep(SAMPLE_S)
    fresh = wait_for(lambda: [p for p in serve.children("spawn_main") if p.pid != first.pid], "the watching writer")[0]
    wait_for(lambda: serve.tool("reindex", {}).startswith("Scanned "), "the watching writer answers")
    watching = idle_rss(lambda: [fresh], idle_s)
    serve.close()
    return {
        "handshake_during_first_sync_s": round(handshake, 3),
        "note_during_first_sync": note,
        "first_sync_writer_peak_rss_mb": round(peak, 1),
        "first_sync_writer_last_rss_mb": round(last, 1),
        "fresh_writer_idle_rss_mb": round(watching, 1),
        "writer_pids": [first.pid, fresh.pid],
    }


def measure_serve(folder: Path, env: dict[str, str], runs: int, idle_s: float, log: Path) -> dict[str, Any]:
    """An indexed folder: handshakes; the lock holder's reader, writer and resource tracker; a second reader."""
    handshakes = []
    for _ in range(runs):
        serve = Stdio(serve_command(folder), env, log)
        handshakes.append(serve.handshake())
        serve.close()
    holder = Stdio(serve_command(folder), env, log)
    holder.handshake()
    # No tool call before the idle sample: a reindex would load the store and search modules into the reader.
    first = wait_for(lambda: holder.children("spawn_main"), "the catch-up writer")[0]
    wait_for(lambda: [p for p in holder.children("spawn_main") if p.pid != first.pid], "the watching writer")
    other = Stdio(serve_command(folder), env, log)
    other.handshake()
    reader = idle_rss(lambda: [holder.ps], idle_s)
    other_reader = idle_rss(lambda: [other.ps], idle_s / 2)
    writer = idle_rss(lambda: holder.children("spawn_main"), idle_s / 2)
    tracker = idle_rss(lambda: holder.children("resource_tracker"), idle_s / 2)
    holder.tool("search_docs", {"query": "sync", "mode": "keyword", "k": 1})
    after_search = idle_rss(lambda: [holder.ps], idle_s / 2)
    other.close()
    holder.close()
    return {
        "handshake_s": round(statistics.median(handshakes), 3),
        "reader_idle_rss_mb": round(reader, 1),
        "second_reader_idle_rss_mb": round(other_reader, 1),
        "reader_rss_after_a_search_mb": round(after_search, 1),
        "writer_idle_rss_mb": round(writer, 1),
        "resource_tracker_rss_mb": round(tracker, 1),
    }


def run(tree_mb: float, runs: int, idle_s: float) -> dict[str, Any]:
    api = EmbedServerProcess()
    try:
        with tempfile.TemporaryDirectory(prefix="scree-bench-serve-") as tmp:
            root = Path(tmp)
            folder = root / "tree"
            folder.mkdir()
            print(f"generating a {tree_mb:g} MB markdown tree ...", file=sys.stderr)
            generate_tree(folder, int(tree_mb * 1e6), seed=21)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
            env.update(
                XDG_DATA_HOME=str(root / "data"),
                SCREE_EMBEDDER="api",
                SCREE_API_BASE=api.url,
                SCREE_API_KEY="bench-key",
                SCREE_FIRST_SYNC_MB="1000",
                SCREE_LOG_LEVEL="warning",
            )
            log = root / "stderr.log"
            bare = measure_bare(env, runs, idle_s, log)
            first = measure_first_sync(folder, env, idle_s, log)
            serve = measure_serve(folder, env, runs, idle_s, log)
    finally:
        api.stop()
    return {
        "tree_mb": tree_mb,
        "runs": runs,
        "bare": bare,
        "serve": serve,
        "first_sync": first,
        "reader_rss_over_bare_mb": round(serve["reader_idle_rss_mb"] - bare["idle_rss_mb"], 1),
        "handshake_over_bare_s": round(serve["handshake_s"] - bare["handshake_s"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree-mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=9, help="process starts per handshake median")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of quiet before and while sampling")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    result = run(args.tree_mb, args.runs, args.idle)
    bare, serve, first = result["bare"], result["serve"], result["first_sync"]
    rows = [
        ("handshake, bare SDK server", f"{bare['handshake_s']:.3f} s"),
        ("handshake, scree serve (indexed folder)", f"{serve['handshake_s']:.3f} s"),
        ("handshake, scree serve during a first sync", f"{first['handshake_during_first_sync_s']:.3f} s"),
        ("idle RSS, bare SDK server", f"{bare['idle_rss_mb']:.1f} MB"),
        ("idle RSS, scree reader (holds the lock)", f"{serve['reader_idle_rss_mb']:.1f} MB"),
        ("idle RSS, scree reader (another holds it)", f"{serve['second_reader_idle_rss_mb']:.1f} MB"),
        ("RSS, scree reader after one search", f"{serve['reader_rss_after_a_search_mb']:.1f} MB"),
        ("RSS, multiprocessing resource tracker", f"{serve['resource_tracker_rss_mb']:.1f} MB"),
        ("writer RSS, first-sync process at its peak", f"{first['first_sync_writer_peak_rss_mb']:.1f} MB"),
        ("writer RSS, first-sync process at its end", f"{first['first_sync_writer_last_rss_mb']:.1f} MB"),
        ("writer RSS, fresh process watching (idle)", f"{first['fresh_writer_idle_rss_mb']:.1f} MB"),
        ("writer RSS, watching (indexed folder)", f"{serve['writer_idle_rss_mb']:.1f} MB"),
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
    print(f"  search note during the first sync: {first['note_during_first_sync']}")
    result["bars"] = {"reader_rss_met": rss_met, "handshake_met": handshake_met}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
