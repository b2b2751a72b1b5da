"""What the docs map in the instructions costs at the handshake (issue 36): `scree serve` beside a bare MCP SDK server,
and optionally beside the serve of another scree source tree (the code before the map), on one indexed folder.

Run: python -m bench.instructions_map [--folder DIR] [--tree-mb 5] [--runs 15] [--before-src DIR] [--json PATH]
     [--database-url URL]

With --database-url (issue 31) the index is a collection in that database, and a third kind joins each round: a
serve on "another machine" (its own data folder, so no map file beside a local index) that reads the map kept with
the collection at its handshake.
Bar (SPEC §10): handshake within 0.2 s of the bare server. Each round starts one of each kind, side by side (the
machine's load swings more than the bar between minutes); the figure is the median. Also printed: the instructions'
length (at most 2,000 characters) and the reader's RSS just after the handshake.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import folder_to_measure
from scree.benchmarks.serve_footprint import BAR_HANDSHAKE_S, BARE, Stdio, rss_mb
from scree.benchmarks.writer_idle import clean_env

DEFAULT_JSON = RESULTS / "instructions_map.json"
SETTLE_S = 0.3  # after the handshake, before the RSS sample: the reply written, nothing else running yet


def serve_command(folder: Path) -> list[str]:
    return [sys.executable, "-P", "-m", "scree", "serve", "--notes", str(folder)]  # -P: PYTHONPATH before the cwd


def one_start(command: list[str], env: dict[str, str], log: Path) -> tuple[float, float, str]:
    """Seconds to the initialize reply, RSS (MB) just after it, and the instructions."""
    server = Stdio(command, env, log)
    try:
        reply = server.request("initialize", {**_hello()})
        elapsed = time.monotonic() - server.started
        time.sleep(SETTLE_S)
        rss = rss_mb(server.ps)
        return elapsed, rss, str(reply["result"].get("instructions", ""))
    finally:
        server.close()


def _hello() -> dict[str, Any]:
    return {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


SHARED_COLLECTION = "bench/instructions-map"


def measure(
    folder: Path, data: Path, runs: int, before_src: Path | None, database_url: str | None = None
) -> dict[str, Any]:
    quiet = {"SCREE_EMBEDDER": "hash", "SCREE_LOG_LEVEL": "warning"}
    if database_url is not None:
        quiet |= {"SCREE_DATABASE_URL": database_url, "SCREE_COLLECTION": SHARED_COLLECTION}
    env = clean_env(data) | quiet
    data.mkdir(parents=True, exist_ok=True)
    log = data / "serve-stderr.log"
    done = subprocess.run(serve_command(folder)[:4] + ["reindex", "--notes", str(folder)], env=env, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"scree reindex failed: {done.stderr.decode(errors='replace')[-300:]}")
    kinds: dict[str, tuple[list[str], dict[str, str]]] = {"bare": (BARE, env), "serve": (serve_command(folder), env)}
    if before_src is not None:
        kinds["before"] = (serve_command(folder), env | {"PYTHONPATH": str(before_src)})
    if database_url is not None:  # another machine: no docs-map.json of its own, the map read from the database
        kinds["shared"] = (serve_command(folder), clean_env(data / "other-machine") | quiet)
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    rss: dict[str, list[float]] = {kind: [] for kind in kinds}
    shown: dict[str, str] = {}
    for _ in range(runs):
        for kind, (command, run_env) in kinds.items():
            elapsed, resident, instructions = one_start(command, run_env, log)
            times[kind].append(elapsed)
            rss[kind].append(resident)
            shown[kind] = instructions
    result: dict[str, Any] = {"runs": runs, "files": sum(1 for _ in folder.rglob("*.md"))}
    for kind in kinds:
        result[f"{kind}_handshake_s"] = round(statistics.median(times[kind]), 3)
        result[f"{kind}_rss_mb"] = round(statistics.median(rss[kind]), 1)
        result[f"{kind}_instructions_chars"] = len(shown[kind])
    result["serve_over_bare_s"] = round(result["serve_handshake_s"] - result["bare_handshake_s"], 3)
    if before_src is not None:
        result["before_over_bare_s"] = round(result["before_handshake_s"] - result["bare_handshake_s"], 3)
        result["serve_over_before_s"] = round(result["serve_handshake_s"] - result["before_handshake_s"], 3)
        result["serve_over_before_rss_mb"] = round(result["serve_rss_mb"] - result["before_rss_mb"], 1)
    if database_url is not None:
        result["shared_over_serve_s"] = round(result["shared_handshake_s"] - result["serve_handshake_s"], 3)
        result["shared_map_shown"] = "Docs map (" in shown["shared"]
    result["instructions"] = shown["serve"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, default=None, help="measure on this folder instead of a generated tree")
    parser.add_argument("--tree-mb", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=15, help="rounds of handshakes (one start of each kind a round)")
    parser.add_argument("--before-src", type=Path, default=None, help="a scree source tree to compare (its parent dir)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--database-url", default=None, help="index into this PostgreSQL database (issue 31)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scree-bench-map-") as tmp:
        folder = folder_to_measure(args.folder, Path(tmp), int(args.tree_mb * 1e6), seed=36)
        result = measure(folder.resolve(), Path(tmp) / "data", args.runs, args.before_src, args.database_url)
    print(f"handshake with the docs map, {result['files']} markdown files, median of {args.runs} rounds")
    kinds = ["bare", "serve"] + (["before"] if args.before_src else []) + (["shared"] if args.database_url else [])
    for kind in kinds:
        seconds, rss, chars = (result[f"{kind}_{key}"] for key in ("handshake_s", "rss_mb", "instructions_chars"))
        print(f"  {kind:<7} handshake {seconds:.3f} s   RSS after it {rss:.1f} MB   instructions {chars} chars")
    met = result["serve_over_bare_s"] <= BAR_HANDSHAKE_S
    verdict = "met" if met else "MISSED"
    print(f"  serve over bare: {result['serve_over_bare_s']:+.3f} s (bar {BAR_HANDSHAKE_S:g} s): {verdict}")
    if args.before_src:
        print(
            f"  serve over before: {result['serve_over_before_s']:+.3f} s, "
            f"{result['serve_over_before_rss_mb']:+.1f} MB RSS"
        )
    if args.database_url:
        shown = "shown" if result["shared_map_shown"] else "NOT shown"
        print(f"  another machine (map from the database, {shown}) over serve: {result['shared_over_serve_s']:+.3f} s")
    payload = {**result, "bar_met": met, "folder": os.fspath(args.folder) if args.folder else None}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
