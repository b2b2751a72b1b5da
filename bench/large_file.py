"""`python -m bench.large_file [--mb 20] [--sections N] [--json FILE]`: the peak RSS of `scree reindex` on one large
markdown file (issue 25: a 20 MB file held every chunk, text and vector of it at once), with the instant hash
embedder so the figure is the sync's own memory, not a model's.

It runs the `scree` next to this Python (the checkout's, installed with pip install -e) in a fresh data folder, once
with normal ~2.5 KB sections and once with tiny ones (many chunks), and prints each run's wall time and the child's
peak RSS (getrusage of the reindex process)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCREE = str(Path(sys.executable).parent / "scree")


def _write(path: Path, megabytes: float, section_bytes: int) -> int:
    filler = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. " * 64)[:section_bytes]
    target, written, n = int(megabytes * 1_000_000), 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            part = f"## Section {n}\n\n{filler}\n\n"
            out.write(part)
            written += len(part)
            n += 1
    return n


def _run(folder: Path, data: Path, megabytes: float) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_"))}
    env.update(
        XDG_DATA_HOME=str(data),
        XDG_CONFIG_HOME=str(data / "config"),
        SCREE_EMBEDDER="hash",
        SCREE_MAX_FILE_BYTES=str(int(megabytes * 2_000_000)),
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run([SCREE, "reindex", "--notes", str(folder)], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"scree reindex failed: {proc.stderr.strip()}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": round(elapsed, 2), "peak_rss_mb": round(max(peak_kib, before) / 1024, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {}
    for name, section in (("normal sections", 2500), ("tiny sections", 40)):
        with tempfile.TemporaryDirectory(prefix="scree-bench-large-") as tmp:
            folder = Path(tmp) / "notes"
            folder.mkdir()
            sections = _write(folder / "big.md", args.mb, section)
            figures = _run(folder, Path(tmp) / "data", args.mb)
            results[name] = {"sections": sections, **figures}
            print(
                f"{args.mb:g} MB file, {name} ({sections:,}): reindex {figures['seconds']} s, "
                f"peak RSS {figures['peak_rss_mb']} MB",
                flush=True,
            )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
