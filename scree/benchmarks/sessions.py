"""What N sessions cost together (issue 24): N `scree serve` in one folder, each after a semantic search with the
offline model, beside N bare MCP SDK stdio servers, each after a tool call. USS (memory no other process shares), so
pages shared between processes (the interpreter, the page cache) are not counted N times.

Run: python -m scree.benchmarks.sessions [--sessions 5] [--tree-kb 40 | --folder DIR] [--idle 3] [--json PATH]
Bar (issue 24): the N sessions' processes (readers, the writer child, multiprocessing's resource tracker) use at most
N x a bare SDK server + 80 MB of USS in all. The writer and the tracker are there once whatever N is; "each reader
over a bare server" is what one more session adds. The folder is indexed first by `scree reindex` with the offline
model, so the serves only catch up. Each serve answers one semantic search (the one that makes a reader embed a
query), then QUERIES more, whose end-to-end times (tool call to reply, over stdio) give the p50 and p95.

USS leaves out every page another process maps too, whichever process it is: one that has loaded numpy, tokenizers
or openvino hides the writer's pages of them (~11 MB of numpy's and tokenizers' code, and what of OpenVINO's is
resident). `measure` refuses to run in such a process (`scree bench` measures the
sessions before any step that imports them), and a figure taken while another program on the machine has them
loaded (a test run, a notebook) is too low by as much.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import folder_to_measure
from scree.benchmarks.serve_footprint import BARE, MB, TRACKER_MARKER, WRITER_MARKER, Stdio, serve_command
from scree.benchmarks.writer_idle import clean_env
from scree.embedders.runtime import QUIET_S

BAR_OVER_BARE_MB = 80.0  # issue 24: N sessions within N bare servers + this
DEFAULT_SESSIONS = 5
QUERIES = 10  # timed semantic searches per session, after the first
QUERY_WORDS = ("sync", "watch", "index", "query", "model", "search", "notes", "writer", "lock", "folder")
SAMPLE_S = 0.1
MODEL_MODULES = frozenset({"numpy", "tokenizers", "openvino"})  # the offline model's libraries (module docstring)
DEFAULT_JSON = RESULTS / "sessions.json"


ROLES = ("readers", "writer", "resource_tracker")


def role(proc: psutil.Process) -> str:
    """Which part of a session `proc` is, from its command line: multiprocessing's resource tracker, the writer child
    (a spawn child), or a reader (a `scree serve`)."""
    command = " ".join(proc.cmdline())
    if TRACKER_MARKER in command:
        return "resource_tracker"
    return "writer" if WRITER_MARKER in command else "readers"


def tree_uss_mb(procs: list[psutil.Process]) -> dict[str, float]:
    """Summed USS of `procs` and all their descendants (the writer child and the resource tracker) by role, and in
    all under "total", in MiB."""
    seen: dict[int, psutil.Process] = {}
    for proc in procs:
        try:
            for one in [proc, *proc.children(recursive=True)]:
                seen[one.pid] = one
        except psutil.Error:
            continue
    totals = dict.fromkeys(("total", *ROLES), 0.0)
    for one in seen.values():
        try:
            uss = float(one.memory_full_info().uss) / MB
            totals[role(one)] += uss
        except psutil.Error:
            continue
        totals["total"] += uss
    return totals


def sampled_uss_mb(procs: list[psutil.Process], idle_s: float) -> dict[str, float]:
    """Median summed USS (in all and by role) over idle_s seconds, after idle_s seconds of quiet."""
    time.sleep(idle_s)
    samples = []
    for _ in range(max(1, int(idle_s / SAMPLE_S))):
        samples.append(tree_uss_mb(procs))
        time.sleep(SAMPLE_S)
    return {key: statistics.median(sample[key] for sample in samples) for key in samples[0]}


def index_folder(folder: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scree.cli", "reindex", "--notes", str(folder)], env=env, text=True, capture_output=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"scree reindex exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")


def semantic(server: Stdio, query: str) -> float:
    """Milliseconds for one semantic search, tool call to reply; an error reply stops the bench."""
    started = time.monotonic()
    reply = server.request("tools/call", {"name": "search_docs", "arguments": {"query": query, "mode": "semantic"}})
    elapsed = (time.monotonic() - started) * 1000
    result = reply.get("result", {})
    if result.get("isError") or "semantic search is off" in json.dumps(result):
        raise RuntimeError(f"the semantic search failed: {json.dumps(reply)[:300]}")
    return elapsed


def measure(
    folder: Path,
    data: Path,
    model_dir: Path,
    sessions: int = DEFAULT_SESSIONS,
    idle_s: float = 3.0,
    queries: int = QUERIES,
) -> dict[str, float]:
    """N serves then N bare servers, one set at a time; `folder` is indexed under `data` first if it is not yet. The
    serves are sampled after at least the writer's quiet spell (runtime.QUIET_S) and half a second more: sampled
    sooner, the writer still holds the code pages it lets go then (`scree bench --quick` counted 25 MB more)."""
    idle_s = max(idle_s, QUIET_S + 0.5)
    shared = sorted(MODEL_MODULES & set(sys.modules))
    if shared:
        raise RuntimeError(f"this process has loaded {', '.join(shared)}: the writer's pages of it would not count")
    env = clean_env(data)
    env.update(SCREE_EMBEDDER="local", SCREE_LOCAL_MODEL_DIR=str(model_dir), SCREE_LOG_LEVEL="warning")
    data.mkdir(parents=True, exist_ok=True)
    log = data / "sessions-stderr.log"
    index_folder(folder, env)
    serves: list[Stdio] = []
    times: list[float] = []
    try:
        for _ in range(sessions):
            serve = Stdio(serve_command(folder), env, log)
            serves.append(serve)
            serve.handshake()
        for serve in serves:
            semantic(serve, "how does the writer sync the folder")
        for n in range(queries):
            for serve in serves:
                times.append(semantic(serve, f"{QUERY_WORDS[n % len(QUERY_WORDS)]} notes {n}"))
        serve_uss = sampled_uss_mb([s.ps for s in serves], idle_s)
        processes = len({p.pid for s in serves for p in [s.ps, *s.ps.children(recursive=True)]})
    finally:
        for serve in serves:
            serve.close()
    bares: list[Stdio] = []
    try:
        for _ in range(sessions):
            bare = Stdio(BARE, env, log)
            bares.append(bare)
            bare.handshake()
            bare.tool("echo", {"text": "hello"})
        bare_uss = sampled_uss_mb([b.ps for b in bares], idle_s)["total"]
    finally:
        for bare in bares:
            bare.close()
    times.sort()
    return {
        "sessions": float(sessions),
        "sessions_processes": float(processes),
        "sessions_uss_mb": round(serve_uss["total"], 1),
        **{f"sessions_{key}_uss_mb": round(serve_uss[key], 1) for key in ROLES},
        "bare_sessions_uss_mb": round(bare_uss, 1),
        "sessions_uss_over_bare_mb": round(serve_uss["total"] - bare_uss, 1),
        # what one more session costs: the writer and the tracker are there once, whatever N is
        "sessions_reader_over_bare_mb": round((serve_uss["readers"] - bare_uss) / sessions, 1),
        "sessions_semantic_p50_ms": round(statistics.median(times), 1),
        "sessions_semantic_p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))], 1),
    }


def main() -> None:
    from scree.benchmarks.embed_local import default_model_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument("--tree-kb", type=float, default=40.0, help="size of the generated tree to measure in")
    parser.add_argument("--folder", type=Path, default=None, help="measure in this folder instead of a generated tree")
    parser.add_argument("--data", type=Path, default=None, help="where its index goes (default: a temporary folder)")
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of quiet before and while sampling")
    parser.add_argument("--queries", type=int, default=QUERIES, help="timed semantic searches per session")
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    model_dir = args.model_dir or default_model_dir()
    with tempfile.TemporaryDirectory(prefix="scree-bench-sessions-") as tmp:
        folder = folder_to_measure(args.folder, Path(tmp), int(args.tree_kb * 1000), seed=24)
        data = args.data or Path(tmp) / "data"
        result = measure(folder, data, model_dir, args.sessions, args.idle, args.queries)
    n = args.sessions
    bar = result["bare_sessions_uss_mb"] + BAR_OVER_BARE_MB
    met = result["sessions_uss_mb"] <= bar
    print(f"{n} sessions in one folder, offline model, each after a semantic search")
    rows = [
        (f"USS, {n} x scree serve ({result['sessions_processes']:g} processes)", result["sessions_uss_mb"]),
        ("  of which the readers", result["sessions_readers_uss_mb"]),
        ("  of which the writer child", result["sessions_writer_uss_mb"]),
        ("  of which the resource tracker", result["sessions_resource_tracker_uss_mb"]),
        (f"USS, {n} x bare SDK server", result["bare_sessions_uss_mb"]),
        ("each reader over a bare server", result["sessions_reader_over_bare_mb"]),
    ]
    for label, value in rows:
        print(f"  {label:<40} {value:8.1f} MB")
    print(f"  bar: <= bare + {BAR_OVER_BARE_MB:g} MB = {bar:.1f} MB: {'met' if met else 'MISSED'}")
    print(
        f"  semantic search end to end: p50 {result['sessions_semantic_p50_ms']:.1f} ms, "
        f"p95 {result['sessions_semantic_p95_ms']:.1f} ms"
    )
    payload: dict[str, Any] = {**result, "bar_uss_mb": round(bar, 1), "bar_met": met}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
