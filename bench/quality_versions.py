"""Search quality on real versioned docs sites: the current version's page against its old and unreleased copies.

Run: python -m bench.quality_versions [--sets jest,etcd] [--modes keyword,semantic,hybrid] [--json PATH]

Issue 32. eval/versions holds two real repositories that keep several versions of their docs side by side (Jest,
Docusaurus: `docs/` is the unreleased "next", `website/versioned_docs/version-30.4` the current; etcd, Hugo:
`content/en/docs/vX.Y`, v3.7 current, v3.8 a draft), each with graded questions (grade 2: the current version's page
that answers it). Each tree is indexed with default settings as a checkout would be, and searched; the top 5 distinct
files are scored: MRR@5 and Hit@3 on the first grade-2 file, nDCG@5 with gains 2^grade - 1, and the count of top-5
slots held by pages of a version other than the current one (old, or newer and unreleased).

The vectors come through bench.quality's cache (bench/results/quality-cache/vectors-*.db) and the indexes are kept in
bench/results/quality-cache/versions-index/ and synced again on the next run (only changed files cost anything), so
a rerun after a ranking change costs the searches alone. Bars (issue 32): hybrid MRR@5 >= 0.85 and at most 5% of the
top-5 slots held by other versions, on each site.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import add_modes_option
from bench.quality import CACHE, EVAL, Built, CachedEmbedder, engine_for
from scree.embedders.base import Embedder

K = 5
BARS = {"mrr5": 0.85, "other_version_share": 0.05}  # hybrid, on each site


@dataclass(frozen=True)
class Site:
    """One tuning site: its archive, its questions, and which paths are copies of a version other than the current
    (the grader's knowledge, not the code under test's)."""

    name: str
    other_version: re.Pattern[str]


SITES = {
    "jest": Site("jest", re.compile(r"^(docs/|website/versioned_docs/version-(?!30\.4/))")),
    "etcd": Site("etcd", re.compile(r"^content/en/docs/v(?!3\.7/)[0-9.]+/")),
}


def questions(path: Path) -> list[tuple[str, dict[str, int]]]:
    """(question, {path: grade}) of a questions .tsv (eval/formats/README.md's format)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("question\t"):
            continue
        question, answers = line.split("\t")[:2]
        grades = {}
        for answer in answers.split(","):
            file, _, grade = answer.strip().rpartition(":")
            grades[file] = int(grade)
        out.append((question, grades))
    return out


def scores(paths: Sequence[str], grades: dict[str, int], other_version: re.Pattern[str]) -> dict[str, float]:
    """One question's metrics over the top K distinct files of its hits."""
    distinct = list(dict.fromkeys(paths))[:K]
    first = next((rank for rank, path in enumerate(distinct, start=1) if grades.get(path) == 2), None)
    dcg = sum((2 ** grades.get(path, 0) - 1) / math.log2(rank + 1) for rank, path in enumerate(distinct, start=1))
    ideal = sorted(grades.values(), reverse=True)[:K]
    idcg = sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return {
        "mrr5": 1.0 / first if first else 0.0,
        "hit3": float(first is not None and first <= 3),
        "ndcg5": dcg / idcg if idcg else 0.0,
        "other_version": float(sum(bool(other_version.match(path)) for path in distinct)),
    }


def unpack(name: str) -> Path:
    """The site's tree, unpacked once into the cache."""
    target = CACHE / "versions" / name
    marker = target / ".unpacked"
    if not marker.exists():
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(EVAL / "versions" / f"{name}-docs.tar.gz") as archive:
            archive.extractall(target, filter="data")
        marker.write_text("")
    return target


def build_kept(folder: Path, name: str, embedder: Embedder) -> Built:
    """The site's index, kept between runs and synced again (a fresh first build when there is none)."""
    from scree.config import load_settings
    from scree.content.ignore import IgnorePolicy
    from scree.index.model_policy import prepare
    from scree.store import SqliteWriter
    from scree.writer_proc.sync import Syncer

    settings = load_settings(os.environ, notes=str(folder))
    db = CACHE / "versions-index" / f"{name}.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    with SqliteWriter.open(db, folder) as store:
        prepare(store, embedder)
        Syncer(store, IgnorePolicy(folder, settings.extensions), embedder, settings.max_file_bytes).sync_all()
        _, chunks = store.counts()
    return Built(folder, db, 0.0, 0, db.stat().st_size, 0, 0, 0, chunks)


def run_site(
    site: Site, embedder: Embedder, modes: Sequence[str], search_k: int = K * 4
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, list[str]]], int]:
    folder = unpack(site.name)
    asked = questions(EVAL / "versions" / f"{site.name}-questions.tsv")
    built = build_kept(folder, site.name, embedder)
    engine = engine_for(built, embedder)
    out: dict[str, dict[str, float]] = {}
    ranked: dict[str, dict[str, list[str]]] = {}
    try:
        for mode in modes:
            totals: dict[str, float] = {}
            ranked[mode] = {}
            for question, grades in asked:
                paths = [hit.path for hit in engine.search(question, k=search_k, mode=mode).hits]
                ranked[mode][question] = list(dict.fromkeys(paths))[:K]
                for metric, value in scores(paths, grades, site.other_version).items():
                    totals[metric] = totals.get(metric, 0.0) + value
            n = len(asked)
            out[mode] = {
                metric: (value if metric == "other_version" else value / n) for metric, value in totals.items()
            }
            out[mode]["slots"] = float(n * K)
    finally:
        engine.close()
    return out, ranked, built.chunks


def report(name: str, results: dict[str, dict[str, float]]) -> list[str]:
    lines = []
    for mode, got in results.items():
        lines.append(
            f"{name:5} {mode:8}  MRR@5 {got['mrr5']:.3f}  Hit@3 {got['hit3']:.3f}  nDCG@5 {got['ndcg5']:.3f}  "
            f"other-version slots {int(got['other_version'])} of {int(got['slots'])}"
        )
    hybrid = results.get("hybrid")
    if hybrid is not None:
        share = hybrid["other_version"] / hybrid["slots"]
        mrr_ok = hybrid["mrr5"] >= BARS["mrr5"]
        share_ok = share <= BARS["other_version_share"]
        lines.append(
            f"{name:5} bars: hybrid MRR@5 {hybrid['mrr5']:.3f} >= {BARS['mrr5']}: {'met' if mrr_ok else 'MISSED'}; "
            f"other-version slots {share:.1%} <= {BARS['other_version_share']:.0%}: {'met' if share_ok else 'MISSED'}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SITES))
    add_modes_option(parser)
    parser.add_argument("--json", type=Path, default=Path("bench/results/quality_versions.json"))
    parser.add_argument("--ranked", action="store_true", help="also print each question's top-5 files (hybrid)")
    args = parser.parse_args()

    from scree.config import load_settings
    from scree.embedders.factory import make_embedder

    CACHE.mkdir(parents=True, exist_ok=True)
    settings = load_settings(os.environ, notes=str(CACHE.parent))
    inner = make_embedder(settings)
    counter: Callable[[Sequence[str]], list[int]] = getattr(inner, "count_tokens", lambda texts: [0] * len(texts))
    tag = inner.identity.replace("/", "_").replace(":", "_")
    embedder = CachedEmbedder(inner, CACHE / f"vectors-{tag}.db", counter)
    result: dict[str, Any] = {"embedder": inner.identity, "sites": {}}
    lines: list[str] = []
    for name in args.sets.split(","):
        got, ranked, chunks = run_site(SITES[name], embedder, args.modes)
        result["sites"][name] = {"modes": got, "chunks": chunks, "ranked": ranked}
        site_lines = report(name, got)
        print("\n".join(site_lines), flush=True)
        lines += site_lines
        if args.ranked and "hybrid" in ranked:
            for question, paths in ranked["hybrid"].items():
                print(f"  {question[:90]}\n    " + "\n    ".join(paths))
    result["table"] = lines
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    embedder.close()
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
