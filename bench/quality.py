"""Search quality on SciFact train and on real docs trees, every mode in one table, with what quality costs.

Run: python -m bench.quality [--sets scifact,docs] [--modes keyword,semantic,hybrid] [--no-cold] [--json PATH]

- SciFact (BEIR) train: one markdown file per document (`<_id>.md`: `# <title>`, blank line, text), k = 100:
  nDCG@10 and recall@100 over the document ids in hit paths.
- docs (`eval/docs`): each library's docs/ indexed as its own folder, k = 5: MRR, Hit@1/3/5, Recall@5 and nDCG@5
  (gain 2^grade - 1 at a file's first occurrence), overall and per query intent.
- Costs: tokens the model reads per MB of markdown, index size on disk per MB, search p50/p95 end to end (query
  embedding included, with the real embedder), and (unless --no-cold) the offline first sync of the docs trees with
  no vector cache, timed.

Every run builds fresh indexes with the current chunking and ranking code. The vectors come through a cache on disk
(bench/results/quality-cache/vectors-*.db, keyed by the exact text embedded), so only text never embedded before
costs model time: the first SciFact run embeds ~5,000 abstracts (many minutes on 2 shared cores), later runs seconds.
Bars (SPEC §10). Tune on these train sets only; quality is judged on held-out data.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import sys
import tarfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from bench import add_modes_option
from scree.embedders.base import Embedder
from scree.store.sqlite_files import remove_db

EVAL = Path(os.environ.get("SCREE_EVAL_DIR") or Path(__file__).resolve().parent.parent.parent / "shared" / "eval")
CACHE = Path(__file__).resolve().parent / "results" / "quality-cache"
SCIFACT_BARS = {"hybrid": 0.74, "keyword": 0.69, "semantic": 0.65}  # nDCG@10, SPEC §10
DOCS_BARS = {"mrr": 0.88, "hit3": 0.93}  # hybrid, SPEC §10
SCIFACT_DEPTH = 100
DOCS_K = 5
LATENCY_ROUNDS = 2  # docs queries per mode, each timed this many times
BYTES_PER_MB = 1_000_000


class CachedEmbedder(Embedder):
    """The real embedder behind a vector cache on disk keyed by sha256 of the text: identical text, identical vector.

    It records the same identity as the embedder it wraps, so an index it builds is that model's index. The inner
    model is loaded only when a text is missing from the cache. `tokens` counts what the model reads of each text
    that reached embed() (after the syncer's own dedupe), cached or not: the cost of a cold index.
    """

    def __init__(self, inner: Embedder, path: Path, count_tokens: Callable[[Sequence[str]], list[int]]) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.model_id = inner.model_id
        self.dims = inner.dims
        self.batch_size = inner.batch_size
        self._count = count_tokens
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = apsw.Connection(str(path))
        self._db.setbusytimeout(30_000)
        self._db.execute("pragma journal_mode = wal")
        self._db.execute("create table if not exists v(h text primary key, vector blob not null)")
        self.tokens = 0
        self.texts = 0
        self.embedded = 0  # texts the model actually ran on

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        return self._cached(texts, count=True)

    def embed_query(self, text: str) -> bytes:
        return self._cached([text], count=False)[0]

    def _cached(self, texts: Sequence[str], *, count: bool) -> list[bytes]:
        keys = [hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() for text in texts]
        found: dict[str, bytes] = {}
        for key in dict.fromkeys(keys):
            row = self._db.execute("select vector from v where h = ?", (key,)).fetchone()
            if row is not None:
                found[key] = bytes(row[0])
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            vectors = self.inner.embed([texts[i] for i in missing])
            with self._db:
                for i, vector in zip(missing, vectors, strict=True):
                    found[keys[i]] = vector
                    self._db.execute("insert or replace into v(h, vector) values (?, ?)", (keys[i], vector))
            self.embedded += len(missing)
        if count:
            self.texts += len(texts)
            self.tokens += sum(self._count(texts))
        return [found[key] for key in keys]

    def close(self) -> None:
        self._db.close()


# --- scoring (pure) ---


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """BEIR's nDCG@k: linear gain (the grade), distinct documents in rank order."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    hits = len(set(ranked[:k]) & {d for d, r in relevant.items() if r > 0})
    return hits / max(1, sum(1 for r in relevant.values() if r > 0))


def docs_scores(paths: Sequence[str], grades: dict[str, int], k: int = DOCS_K) -> dict[str, float]:
    """The docs set's metrics for one query's ranked hit paths (a file may repeat; ranks count hits)."""
    paths = list(paths[:k])
    first = next((rank for rank, path in enumerate(paths, start=1) if path in grades), None)
    seen: set[str] = set()
    dcg = 0.0
    for rank, path in enumerate(paths, start=1):
        if path in grades and path not in seen:
            dcg += (2 ** grades[path] - 1) / math.log2(rank + 1)
        seen.add(path)
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return {
        "mrr": 1.0 / first if first else 0.0,
        "hit1": float(first is not None and first <= 1),
        "hit3": float(first is not None and first <= 3),
        "hit5": float(first is not None and first <= 5),
        "recall5": len(set(paths) & set(grades)) / len(grades),
        "ndcg5": dcg / idcg if idcg else 0.0,
    }


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


# --- data ---


def write_scifact(data: Path, folder: Path) -> int:
    """One markdown file per document; rewritten only when it differs, so mtimes stay put between runs."""
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


def scifact_queries(data: Path) -> list[tuple[str, str, dict[str, int]]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (data / "train" / "qrels.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            qrels[query_id][doc_id] = int(score)
    queries = [json.loads(line) for line in (data / "train" / "queries.jsonl").open(encoding="utf-8")]
    return [(q["_id"], q["text"], qrels[q["_id"]]) for q in queries if q["_id"] in qrels]


def unpack_docs(data: Path, target: Path) -> dict[str, Path]:
    """The docs trees, unpacked once: library name -> its docs/ folder."""
    marker = target / ".unpacked"
    if not marker.exists():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        with tarfile.open(data / "corpora.tar.gz") as archive:
            archive.extractall(target, filter="data")
        marker.write_text("")
    return {lib.name: lib / "docs" for lib in sorted(target.iterdir()) if (lib / "docs").is_dir()}


TRANSLATED = Path(__file__).resolve().parent / "translated_tree.json"
TRANSLATED_TOP = 3


def write_translated(english: Path, target: Path, *, translations: bool) -> list[tuple[str, str]]:
    """FastAPI's layout from the uv docs: docs/en/<page> for every English page, and (with `translations`)
    docs/<lang>/<page> for the hand-made German, Spanish and Turkish pages. Returns (query, English path)."""
    spec = json.loads(TRANSLATED.read_text(encoding="utf-8"))
    wanted: dict[str, str] = {}
    for page in sorted(english.rglob("*.md")):
        wanted[f"docs/en/{page.relative_to(english)}"] = page.read_text(encoding="utf-8")
    if translations:
        wanted.update({f"docs/{rel}": text for rel, text in spec["pages"].items()})
    for rel, text in wanted.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return [(q["query"], f"docs/en/{q['page']}") for q in spec["queries"]]


# --- indexing and searching ---


@dataclass
class Built:
    folder: Path
    db: Path
    seconds: float
    markdown_bytes: int
    index_bytes: int
    tokens: int
    texts: int
    embedded: int
    chunks: int


DATABASE_URL: str | None = None  # --database-url: build and search each index as a PostgreSQL collection (issue 31)


def _collection(name: str) -> str:
    return f"quality/{os.getpid()}/{name}"


def fresh_db(name: str) -> Path:
    """A new index file for this run only: the run folder is per process, since bench/results may be shared by
    several checkouts running this benchmark at once."""
    db = CACHE / "run" / str(os.getpid()) / f"{name}.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    remove_db(db)
    return db


def build(folder: Path, name: str, embedder: CachedEmbedder | Embedder) -> Built:
    """A new index of `folder` with the current code: chunked, embedded (through the cache) and written."""
    from scree.config import load_settings
    from scree.content.ignore import IgnorePolicy
    from scree.index.model_policy import prepare
    from scree.store import SqliteWriter
    from scree.writer_proc.sync import Syncer, markdown_bytes

    settings = load_settings(os.environ, notes=str(folder))
    db = fresh_db(name)
    before = (embedder.tokens, embedder.texts, embedder.embedded) if isinstance(embedder, CachedEmbedder) else None
    started = time.perf_counter()
    if DATABASE_URL is not None:
        from scree.store.pg_writer import PgWriter, drop_collection

        drop_collection(DATABASE_URL, _collection(name))
        store: Any = PgWriter.open_writer(DATABASE_URL, _collection(name), folder, None)
    else:
        store = SqliteWriter.open(db, folder)
    with store:
        prepare(store, embedder)
        Syncer(store, IgnorePolicy(folder), embedder, settings.max_file_bytes).sync_all()
        _, chunks = store.counts()
    seconds = time.perf_counter() - started
    if DATABASE_URL is None:
        conn = apsw.Connection(str(db))
        conn.execute("pragma wal_checkpoint(truncate)").fetchall()
        conn.close()
    tokens = texts = embedded = 0
    if isinstance(embedder, CachedEmbedder) and before is not None:
        tokens, texts, embedded = (
            embedder.tokens - before[0],
            embedder.texts - before[1],
            embedder.embedded - before[2],
        )
    return Built(
        folder=folder,
        db=db,
        seconds=seconds,
        markdown_bytes=markdown_bytes(IgnorePolicy(folder)),
        index_bytes=db.stat().st_size if DATABASE_URL is None else 0,
        tokens=tokens,
        texts=texts,
        embedded=embedded,
        chunks=chunks,
    )


@dataclass
class ModeResult:
    scores: dict[str, float] = field(default_factory=dict)
    per_intent: dict[str, dict[str, float]] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)


def engine_for(built: Built, embedder: Embedder) -> Any:
    from scree.config import load_settings
    from scree.content.ignore import IgnorePolicy
    from scree.search.engine import SearchEngine
    from scree.store import SqliteReader

    settings = load_settings(os.environ, notes=str(built.folder))
    if DATABASE_URL is not None:
        from scree.store.pg_reader import PgReader

        store: Any = PgReader.open(DATABASE_URL, _collection(built.db.stem), built.folder)
    else:
        store = SqliteReader.open(built.db, built.folder)
    return SearchEngine(store, IgnorePolicy(built.folder), built.folder, settings.max_file_bytes, lambda: embedder)


def run_scifact(
    built: Built, queries: list[tuple[str, str, dict[str, int]]], embedder: Embedder, modes: list[str]
) -> dict[str, ModeResult]:
    engine = engine_for(built, embedder)
    out: dict[str, ModeResult] = {}
    try:
        for mode in modes:
            ndcg = recall = 0.0
            for _, text, qrels in queries:
                hits = engine.search(text, k=SCIFACT_DEPTH, mode=mode, max_k=SCIFACT_DEPTH).hits
                ranked = list(dict.fromkeys(Path(hit.path).stem for hit in hits))
                ndcg += ndcg_at(ranked, qrels)
                recall += recall_at(ranked, qrels, SCIFACT_DEPTH)
            out[mode] = ModeResult(scores={"ndcg10": ndcg / len(queries), "recall100": recall / len(queries)})
    finally:
        engine.close()
    return out


def run_docs(
    built: dict[str, Built], dataset: list[dict[str, Any]], embedder: Embedder, modes: list[str]
) -> tuple[dict[str, ModeResult], dict[str, dict[str, list[str]]]]:
    engines = {lib: engine_for(b, embedder) for lib, b in built.items()}
    out: dict[str, ModeResult] = {}
    ranked_paths: dict[str, dict[str, list[str]]] = {}
    try:
        for mode in modes:
            totals: dict[str, float] = defaultdict(float)
            intents: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
            counts: dict[str, int] = defaultdict(int)
            ranked_paths[mode] = {}
            for item in dataset:
                hits = engines[item["library"]].search(item["query"], k=DOCS_K, mode=mode).hits
                paths = [hit.path for hit in hits]
                ranked_paths[mode][f"{item['library']}: {item['query']}"] = paths
                scores = docs_scores(paths, {q["path"]: q["grade"] for q in item["qrels"]})
                counts[item["intent"]] += 1
                for name, value in scores.items():
                    totals[name] += value
                    intents[item["intent"]][name] += value
            out[mode] = ModeResult(
                scores={name: value / len(dataset) for name, value in totals.items()},
                per_intent={
                    intent: {name: value / counts[intent] for name, value in values.items()}
                    for intent, values in intents.items()
                },
            )
    finally:
        for engine in engines.values():
            engine.close()
    return out, ranked_paths


def run_translated(
    built: Built, queries: list[tuple[str, str]], embedder: Embedder, modes: list[str]
) -> dict[str, Any]:
    """Per mode: questions whose English page is in the top 3, and the share of top-3 hits in another language."""
    engine = engine_for(built, embedder)
    out: dict[str, Any] = {}
    try:
        for mode in modes:
            found = foreign = 0
            for query, page in queries:
                paths = [hit.path for hit in engine.search(query, k=TRANSLATED_TOP, mode=mode).hits]
                found += page in paths
                foreign += sum(not path.startswith("docs/en/") for path in paths)
            out[mode] = {"found": found, "of": len(queries), "foreign_top3": foreign / (len(queries) * TRANSLATED_TOP)}
    finally:
        engine.close()
    return out


def time_searches(
    built: dict[str, Built], dataset: list[dict[str, Any]], embedder: Embedder, modes: list[str]
) -> dict[str, list[float]]:
    """End-to-end search time per query with the real embedder (no vector cache), model loaded first."""
    engines = {lib: engine_for(b, embedder) for lib, b in built.items()}
    timings: dict[str, list[float]] = {mode: [] for mode in modes}
    try:
        embedder.embed_query("warm up")
        for _ in range(LATENCY_ROUNDS):
            for mode in modes:
                for item in dataset:
                    started = time.perf_counter()
                    engines[item["library"]].search(item["query"], k=DOCS_K, mode=mode)
                    timings[mode].append((time.perf_counter() - started) * 1000)
    finally:
        for engine in engines.values():
            engine.close()
    return timings


# --- report ---


def table(
    modes: list[str],
    scifact: dict[str, ModeResult] | None,
    docs: dict[str, ModeResult] | None,
    timings: dict[str, list[float]] | None,
) -> list[str]:
    head = f"{'mode':9}"
    if scifact:
        head += f" | {'SF nDCG@10':>10} {'R@100':>6}"
    if docs:
        head += f" | {'MRR':>6} {'Hit@1':>6} {'Hit@3':>6} {'Hit@5':>6} {'R@5':>6} {'nDCG@5':>6}"
    if timings:
        head += f" | {'p50 ms':>6} {'p95 ms':>6}"
    lines = [head, "-" * len(head)]
    for mode in modes:
        row = f"{mode:9}"
        if scifact:
            s = scifact[mode].scores
            row += f" | {s['ndcg10']:10.4f} {s['recall100']:6.4f}"
        if docs:
            d = docs[mode].scores
            row += (
                f" | {d['mrr']:6.3f} {d['hit1']:6.3f} {d['hit3']:6.3f} {d['hit5']:6.3f} {d['recall5']:6.3f} "
                f"{d['ndcg5']:6.3f}"
            )
        if timings:
            row += f" | {statistics.median(timings[mode]):6.1f} {percentile(timings[mode], 0.95):6.1f}"
        lines.append(row)
    if docs:
        intents = sorted(docs[modes[0]].per_intent)
        lines.append("")
        lines.append("docs per intent, MRR / Hit@3:")
        lines.append(f"{'intent':16}" + "".join(f" {mode:>15}" for mode in modes))
        for intent in intents:
            cells = "".join(
                f" {docs[m].per_intent[intent]['mrr']:7.3f}/{docs[m].per_intent[intent]['hit3']:.3f}" for m in modes
            )
            lines.append(f"{intent:16}{cells}")
    return lines


def bars(scifact: dict[str, ModeResult] | None, docs: dict[str, ModeResult] | None) -> list[str]:
    lines = []
    if scifact:
        for mode, bar in SCIFACT_BARS.items():
            if mode in scifact:
                got = scifact[mode].scores["ndcg10"]
                lines.append(f"SciFact {mode} nDCG@10 {got:.4f} >= {bar}: {'met' if got >= bar else 'MISSED'}")
    if docs and "hybrid" in docs:
        for name, bar in DOCS_BARS.items():
            got = docs["hybrid"].scores[name]
            lines.append(f"docs hybrid {name} {got:.3f} >= {bar}: {'met' if got >= bar else 'MISSED'}")
        best = max(docs, key=lambda m: (docs[m].scores["mrr"], docs[m].scores["hit3"]))
        lines.append(f"docs best mode by MRR: {best}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="scifact,docs")
    add_modes_option(parser)
    parser.add_argument("--limit", type=int, default=0, help="SciFact: evaluate only the first N queries")
    parser.add_argument("--no-cold", action="store_true", help="skip the timed offline index of the docs trees")
    parser.add_argument("--no-latency", action="store_true", help="skip the end-to-end search timings")
    parser.add_argument("--ranked", type=Path, help="write each docs query's ranked hit paths per mode here")
    parser.add_argument("--json", type=Path, default=Path("bench/results/quality.json"))
    parser.add_argument("--database-url", help="build and search each index in PostgreSQL (issue 31)")
    args = parser.parse_args()
    global DATABASE_URL
    DATABASE_URL = args.database_url
    sets = args.sets.split(",")
    modes: list[str] = list(args.modes)

    from scree.config import load_settings
    from scree.embedders.factory import make_embedder

    CACHE.mkdir(parents=True, exist_ok=True)  # a fresh clone has no bench/results yet
    settings = load_settings(os.environ, notes=str(CACHE.parent))
    inner = make_embedder(settings)
    counter: Callable[[Sequence[str]], list[int]] = getattr(inner, "count_tokens", lambda texts: [0] * len(texts))
    tag = inner.identity.replace("/", "_").replace(":", "_")
    if inner.kind == "local":  # each precision its own vectors (issue 35: SCREE_MODEL_PRECISION)
        tag += f"_{settings.model_precision}"
    embedder = CachedEmbedder(inner, CACHE / f"vectors-{tag}.db", counter)
    result: dict[str, Any] = {"embedder": inner.identity, "precision": settings.model_precision}
    scifact = docs = None
    timings = None
    costs: list[str] = []

    if "scifact" in sets:
        data = EVAL / "scifact"
        folder = CACHE / "scifact"
        write_scifact(data, folder)
        built = build(folder, "scifact", embedder)
        print(f"scifact: indexed in {built.seconds:.1f}s, {built.embedded} texts embedded now", file=sys.stderr)
        queries = scifact_queries(data)
        if args.limit:
            queries = queries[: args.limit]
        scifact = run_scifact(built, queries, embedder, modes)
        mb = built.markdown_bytes / BYTES_PER_MB
        costs.append(
            f"scifact: {built.markdown_bytes / 1e6:.1f} MB markdown, {built.chunks} chunks, "
            f"{built.tokens / mb:,.0f} tokens embedded/MB, index {built.index_bytes / 1e6:.1f} MB "
            f"({built.index_bytes / built.markdown_bytes:.2f}x markdown)"
        )
        result["scifact"] = {m: r.scores for m, r in scifact.items()}
        result["scifact_cost"] = vars(built) | {"folder": str(built.folder), "db": str(built.db)}
        print(f"scifact: evaluated {len(queries)} queries", file=sys.stderr)

    if "docs" in sets:
        data = EVAL / "docs"
        trees = unpack_docs(data, CACHE / "docs")
        dataset = json.loads((data / "dataset.json").read_text(encoding="utf-8"))
        built_docs = {lib: build(folder, f"docs-{lib}", embedder) for lib, folder in trees.items()}
        docs, ranked = run_docs(built_docs, dataset, embedder, modes)
        if args.ranked:
            args.ranked.write_text(json.dumps(ranked, indent=1) + "\n")
        md = sum(b.markdown_bytes for b in built_docs.values())
        size = sum(b.index_bytes for b in built_docs.values())
        tokens = sum(b.tokens for b in built_docs.values())
        chunks = sum(b.chunks for b in built_docs.values())
        costs.append(
            f"docs: {md / 1e6:.2f} MB markdown, {chunks} chunks, {tokens / (md / BYTES_PER_MB):,.0f} tokens "
            f"embedded/MB, index {size / 1e6:.1f} MB ({size / md:.2f}x markdown)"
        )
        result["docs"] = {m: r.scores for m, r in docs.items()}
        result["docs_per_intent"] = {m: r.per_intent for m, r in docs.items()}
        result["docs_cost"] = {"markdown_bytes": md, "index_bytes": size, "tokens": tokens, "chunks": chunks}
        if not args.no_latency:
            timings = time_searches(built_docs, dataset, inner, modes)
            result["latency_ms"] = {
                m: {"p50": statistics.median(t), "p95": percentile(t, 0.95)} for m, t in timings.items()
            }
        if not args.no_cold:
            cold_seconds = 0.0
            for lib, folder in trees.items():
                cold = build(folder, f"cold-{lib}", inner)
                cold_seconds += cold.seconds
            costs.append(
                f"docs cold offline first sync (no vector cache): {cold_seconds:.1f}s for {md / 1e6:.2f} MB, "
                f"{md / 1e6 / cold_seconds:.3f} MB/s, {tokens / cold_seconds:,.0f} tokens/s"
            )
            result["docs_cold_seconds"] = cold_seconds

    if "translated" in sets:
        english = unpack_docs(EVAL / "docs", CACHE / "docs")["uv"]
        for name, with_translations in (("translated", True), ("english-only", False)):
            folder = CACHE / name
            queries_t = write_translated(english, folder, translations=with_translations)
            built_t = build(folder, name, embedder)
            scores = run_translated(built_t, queries_t, embedder, modes)
            result[name] = scores
            costs.append(
                f"{name} tree ({built_t.markdown_bytes / 1e6:.2f} MB): English page in the top {TRANSLATED_TOP}: "
                + ", ".join(
                    f"{m} {s['found']}/{s['of']} (other languages {s['foreign_top3']:.0%} of top {TRANSLATED_TOP})"
                    for m, s in scores.items()
                )
            )

    lines = table(modes, scifact, docs, timings)
    lines += [""] + costs + [""] + bars(scifact, docs)
    print("\n".join(lines))
    result["table"] = lines
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, default=str) + "\n")
    embedder.close()
    shutil.rmtree(CACHE / "run" / str(os.getpid()), ignore_errors=True)


if __name__ == "__main__":
    main()
