"""A second checkout's first sync against the first's (issue 24): what the machine-wide vector cache saves.

Run: python -m bench.second_checkout [--notes DIR] [--mb 2] [--offline] [--json PATH]
The tree (a copy of DIR's markdown, or a generated one) becomes a git repository; `scree reindex` indexes it, then a
`git worktree` of it (a copy when git is missing), each through the real command line in its own process, with the
API embedder against bench.stub_api (requests counted) or, with --offline, the offline model. Bar (issue 24): the
second checkout's first sync takes at most max(10 s, first / 5) and sends no API request.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scree.benchmarks import RESULTS
from scree.benchmarks.corpus import folder_to_measure
from scree.benchmarks.embed_local import default_model_dir
from scree.benchmarks.stub_api import StubApiProcess
from scree.benchmarks.writer_idle import clean_env
from scree.embedders.model_install import check_model
from scree.index.folder import vector_cache_path
from scree.paths import data_home
from scree.store.vector_cache import size_on_disk

BAR_FLOOR_S = 10.0  # issue 24: at most max(10 s, a fifth of the first checkout's)
BAR_SHARE = 0.2
BENCH_KEY = "sk-bench-not-a-key"
GIT_IDENTITY = ["-c", "user.name=scree bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]


def bar_s(first_s: float) -> float:
    """The second checkout's bar for a first checkout that took `first_s`."""
    return max(BAR_FLOOR_S, first_s * BAR_SHARE)


def make_checkouts(source: Path, root: Path) -> tuple[Path, Path, str]:
    """`source`'s files as a git repository under `root` and a worktree of it (a plain copy without git)."""
    first, second = root / "checkout", root / "worktree"
    shutil.copytree(source, first, ignore=shutil.ignore_patterns(".git"))
    git = shutil.which("git")
    if git is None:
        shutil.copytree(first, second)
        return first, second, "a copy"
    quiet = {"capture_output": True, "check": True}
    subprocess.run([git, "init", "-q", str(first)], **quiet)  # type: ignore[call-overload]
    subprocess.run([git, "-C", str(first), "add", "-A"], **quiet)  # type: ignore[call-overload]
    subprocess.run([git, *GIT_IDENTITY, "-C", str(first), "commit", "-q", "-m", "bench"], **quiet)  # type: ignore[call-overload]
    subprocess.run([git, "-C", str(first), "worktree", "add", "-q", str(second)], **quiet)  # type: ignore[call-overload]
    return first, second, "a git worktree"


def _reindex(folder: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "scree.cli", "reindex", "--notes", str(folder)], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"scree reindex exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return seconds


def measure(
    folder: Path, data: Path, api: StubApiProcess | None = None, model_dir: Path | None = None
) -> dict[str, float]:
    """Index a repository made of `folder`'s files, then a worktree of it, in the data home `data`; both times,
    both request counts (API) and the vector cache's size afterwards."""
    env = clean_env(data)
    if api is not None:
        env.update(SCREE_EMBEDDER="api", SCREE_API_BASE=api.url, SCREE_API_KEY=BENCH_KEY)
    else:  # the offline model where this user has it (the data home here is the bench's own)
        model = model_dir or default_model_dir()
        check_model(model)  # missing, the command would quietly fall back to keyword search: nothing to measure
        env.update(SCREE_EMBEDDER="local", SCREE_LOCAL_MODEL_DIR=str(model))
    with tempfile.TemporaryDirectory(prefix="scree-bench-checkouts-") as tmp:
        first, second, _ = make_checkouts(folder, Path(tmp))
        before = api.stats()["requests"] if api is not None else 0
        first_s = _reindex(first, env)
        middle = api.stats()["requests"] if api is not None else 0
        second_s = _reindex(second, env)
        after = api.stats()["requests"] if api is not None else 0
    figures = {
        "first_checkout_sync_s": round(first_s, 3),
        "second_checkout_sync_s": round(second_s, 3),
        "second_checkout_bar_s": round(bar_s(first_s), 3),
        "vector_cache_mb": round(size_on_disk(vector_cache_path(data_home(env))) / 1e6, 3),
    }
    if api is not None:
        figures["first_checkout_api_requests"] = middle - before
        figures["second_checkout_api_requests"] = after - middle
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=Path, help="copy this folder's files (default: a generated tree)")
    parser.add_argument("--mb", type=float, default=2.0, help="size of the generated tree in MB")
    parser.add_argument("--offline", action="store_true", help="the offline model instead of the stub API")
    parser.add_argument("--json", type=Path, default=RESULTS / "second_checkout.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scree-bench-second-") as tmp:
        folder = folder_to_measure(args.notes, Path(tmp), int(args.mb * 1e6), seed=24)
        if args.offline:
            result = measure(folder, Path(tmp) / "data")
        else:
            with StubApiProcess() as api:
                result = measure(folder, Path(tmp) / "data", api=api)
    met = result["second_checkout_sync_s"] <= result["second_checkout_bar_s"]
    met = met and not result.get("second_checkout_api_requests", 0)
    for key, value in result.items():
        print(f"{key:36} {value}")
    print(f"{'bar: second <= max(10 s, first/5), 0 requests':36} {'met' if met else 'MISSED'}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({**result, "bar_met": met}, indent=2) + "\n")


if __name__ == "__main__":
    main()
