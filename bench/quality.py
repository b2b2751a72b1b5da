"""Search quality on SciFact (BEIR) train: nDCG@10 and recall@100 per mode, through scree's own search engine.

Run: python -m bench.quality [--data ../shared/eval/scifact] [--json PATH] [--limit N]
The corpus becomes one markdown file per document (`<_id>.md`: `# <title>`, blank line, text), indexed with the
embedder the settings select (the offline model by default); queries go through SearchEngine, as the MCP tool's do.
Bars (SPEC §10): hybrid >= 0.72, keyword >= 0.69, semantic >= 0.65 nDCG@10 on train. Train only: never tune on test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "scifact"
CACHE = Path(__file__).resolve().parent / "results" / "quality-cache"
MODES = ("keyword", "semantic", "hybrid")
BARS = {"hybrid": 0.72, "keyword": 0.69, "semantic": 0.65}
DEPTH = 100


def write_corpus(data: Path, folder: Path) -> int:
    """One markdown file per document; rewritten only when missing, so a cached index stays valid."""
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    with (data / "corpus.jsonl").open(encoding="utf-8") as corpus:
        for line in corpus:
            doc = json.loads(line)
            target = folder / f"{doc['_id']}.md"
            text = f"# {doc['title'].strip()}\n\n{doc['text'].strip()}\n"
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                target.write_text(text, encoding="utf-8")
            count += 1
    return count


def load_qrels(data: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (data / "train" / "qrels.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            qrels[query_id][doc_id] = int(score)
    return qrels


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = DEPTH) -> float:
    hits = len(set(ranked[:k]) & {d for d, r in relevant.items() if r > 0})
    return hits / max(1, sum(1 for r in relevant.values() if r > 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", default="bench/results/quality.json")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N queries")
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()

    from scree.config import load_settings
    from scree.embedders.factory import make_embedder
    from scree.ignore import IgnorePolicy
    from scree.search import SearchEngine
    from scree.store import Store
    from scree.writer_proc.sync import Syncer

    folder = CACHE / "corpus"
    documents = write_corpus(args.data, folder)
    settings = load_settings(os.environ, notes=str(folder))
    embedder = make_embedder(settings)
    db = CACHE / f"index-{embedder.identity.replace('/', '_').replace(':', '_')}.db"
    started = time.perf_counter()
    with Store.open(db, folder) as store:
        store.prepare(embedder)
        report = Syncer(store, IgnorePolicy(folder), embedder, settings.max_file_bytes).sync_all()
    print(
        f"indexed {documents} documents with {embedder.identity}: {report.indexed} (re)embedded "
        f"in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )

    qrels = load_qrels(args.data)
    queries = [json.loads(line) for line in (args.data / "train" / "queries.jsonl").open(encoding="utf-8")]
    queries = [q for q in queries if q["_id"] in qrels]
    if args.limit:
        queries = queries[: args.limit]
    results: dict[str, float] = {}
    with Store.open(db, folder, readonly=True) as store:
        engine = SearchEngine(store, IgnorePolicy(folder), folder, settings.max_file_bytes, lambda: embedder)
        for mode in args.modes.split(","):
            ndcg = recall = 0.0
            started = time.perf_counter()
            for query in queries:
                hits = engine.search(query["text"], k=DEPTH, mode=mode, max_k=DEPTH).hits
                ranked = list(dict.fromkeys(Path(hit.path).stem for hit in hits))
                ndcg += ndcg_at(ranked, qrels[query["_id"]])
                recall += recall_at(ranked, qrels[query["_id"]])
            elapsed = time.perf_counter() - started
            results[f"ndcg_at_10_{mode}"] = round(ndcg / len(queries), 4)
            results[f"recall_at_100_{mode}"] = round(recall / len(queries), 4)
            results[f"query_ms_{mode}"] = round(elapsed / len(queries) * 1000, 1)
    results["queries"] = len(queries)
    print(f"{'mode':10} {'nDCG@10':>8} {'recall@100':>11} {'bar':>6}  {'ms/query':>8}")
    for mode in args.modes.split(","):
        ndcg = results[f"ndcg_at_10_{mode}"]
        verdict = "met" if ndcg >= BARS[mode] else "MISSED"
        print(
            f"{mode:10} {ndcg:8.4f} {results[f'recall_at_100_{mode}']:11.4f} {BARS[mode]:6.2f}  "
            f"{results[f'query_ms_{mode}']:8.1f}  {verdict}"
        )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
