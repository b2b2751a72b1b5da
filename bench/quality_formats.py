"""Search quality on real docs trees of other formats (issue 33): a Sphinx tree (.rst) and an AsciiDoc tree.

Run: python -m bench.quality_formats [--eval DIR] [--sets flask,asciidoctor] [--modes keyword,semantic,hybrid]
     [--ranked PATH] [--json PATH]

Each tree of `eval/formats/` is indexed as its own folder with the current code (bench.quality's build: the real
syncer, the vectors through bench.quality's cache on disk) and each graded question searched with k = 5 per mode.
Scores, as eval/formats/README.md defines them: MRR@5 and Hit@3 on the first grade-2 file, nDCG@5 with gains
2^grade - 1 over distinct files. Bars (issue 33): hybrid MRR@5 >= 0.85 and Hit@3 >= 0.90 on each tree. Tune on these
trees only with general techniques: held-out trees of both formats judge it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import add_modes_option
from bench.quality import CACHE, EVAL, CachedEmbedder, build, docs_scores, engine_for

SETS = {"flask": "flask", "asciidoctor": "asciidoctor"}  # set name -> file stem in eval/formats/
K = 5
BARS = {"mrr5": 0.85, "hit3": 0.90}  # hybrid, each tree (issue 33)


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    grades: dict[str, int]  # path -> 2 (the page that answers) or 1 (a page that helps)
    section: str


def read_questions(path: Path) -> list[Question]:
    """The .tsv: a `#` comment line, a header, then `question<TAB>path:grade,...<TAB>section` lines."""
    questions = []
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line and not line.startswith("#")]
    for line in lines[1:]:
        text, answers, section = (line.split("\t") + ["", ""])[:3]
        grades = {}
        for answer in answers.split(","):
            where, _, grade = answer.strip().rpartition(":")
            grades[where] = int(grade)
        questions.append(Question(text, grades, section))
    return questions


def unpack(archive: Path, target: Path) -> Path:
    """The tree, unpacked once (mtimes kept between runs, so cached vectors are reused)."""
    marker = target / ".unpacked"
    if not marker.exists():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
        marker.write_text("")
    return target


def scores(paths: list[str], grades: dict[str, int]) -> dict[str, float]:
    """MRR@5 and Hit@3 on the first grade-2 file, nDCG@5 over all graded files (bench.quality.docs_scores)."""
    best = {path for path, grade in grades.items() if grade >= 2}
    first = next((rank for rank, path in enumerate(paths[:K], start=1) if path in best), None)
    return {
        "mrr5": 1.0 / first if first else 0.0,
        "hit3": float(first is not None and first <= 3),
        "ndcg5": docs_scores(paths, grades, K)["ndcg5"],
    }


def evaluate(folder: Path, name: str, questions: list[Question], embedder: Any, modes: list[str]) -> dict[str, Any]:
    built = build(folder, f"formats-{name}", embedder)
    print(f"{name}: {built.chunks} chunks, indexed in {built.seconds:.1f}s", file=sys.stderr)
    engine = engine_for(built, embedder)
    out: dict[str, Any] = {"chunks": built.chunks, "bytes": built.markdown_bytes, "modes": {}, "ranked": {}}
    try:
        for mode in modes:
            totals = {"mrr5": 0.0, "hit3": 0.0, "ndcg5": 0.0}
            ranked = {}
            for question in questions:
                paths = [hit.path for hit in engine.search(question.text, k=K, mode=mode).hits]
                ranked[question.text] = paths
                for metric, value in scores(paths, question.grades).items():
                    totals[metric] += value
            out["modes"][mode] = {metric: value / len(questions) for metric, value in totals.items()}
            out["ranked"][mode] = ranked
    finally:
        engine.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval", type=Path, default=EVAL, help="the shared eval folder (holds formats/)")
    parser.add_argument("--sets", default=",".join(SETS))
    add_modes_option(parser)
    parser.add_argument("--ranked", type=Path, help="write each question's ranked hit paths per mode here")
    parser.add_argument("--json", type=Path, default=Path("bench/results/quality_formats.json"))
    args = parser.parse_args()
    modes: list[str] = list(args.modes)

    import os

    from scree.config import load_settings
    from scree.embedders.factory import make_embedder

    CACHE.mkdir(parents=True, exist_ok=True)
    settings = load_settings(os.environ, notes=str(CACHE.parent))
    inner = make_embedder(settings)
    counter = getattr(inner, "count_tokens", lambda texts: [0] * len(texts))
    tag = inner.identity.replace("/", "_").replace(":", "_")
    embedder = CachedEmbedder(inner, CACHE / f"vectors-{tag}.db", counter)
    result: dict[str, Any] = {"embedder": inner.identity, "sets": {}}
    lines = [f"{'set':12} {'mode':9} | {'MRR@5':>6} {'Hit@3':>6} {'nDCG@5':>6}", "-" * 48]
    verdicts = []
    try:
        for name in args.sets.split(","):
            stem = SETS[name]
            folder = unpack(args.eval / "formats" / f"{stem}-docs.tar.gz", CACHE / "formats" / stem)
            questions = read_questions(args.eval / "formats" / f"{stem}-questions.tsv")
            found = evaluate(folder, name, questions, embedder, modes)
            result["sets"][name] = {key: found[key] for key in ("chunks", "bytes", "modes")}
            if args.ranked:
                result.setdefault("ranked", {})[name] = found["ranked"]
            for mode in modes:
                got = found["modes"][mode]
                lines.append(f"{name:12} {mode:9} | {got['mrr5']:6.3f} {got['hit3']:6.3f} {got['ndcg5']:6.3f}")
            if "hybrid" in found["modes"]:
                for metric, bar in BARS.items():
                    got_value = found["modes"]["hybrid"][metric]
                    verdicts.append(
                        f"{name} hybrid {metric} {got_value:.3f} >= {bar}: {'met' if got_value >= bar else 'MISSED'}"
                    )
    finally:
        embedder.close()
        shutil.rmtree(CACHE / "run" / str(os.getpid()), ignore_errors=True)
    lines += ["", *verdicts]
    print("\n".join(lines))
    result["table"] = lines
    if args.ranked:
        args.ranked.write_text(json.dumps(result.pop("ranked", {}), indent=1) + "\n")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
