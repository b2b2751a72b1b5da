"""`scree bench` (R-L3): every figure of SPEC §10 measured in one run on one folder, each beside its bar.

The folder is a copy of the files scree would index in `--notes DIR` (never the folder itself: the edit benchmark
appends to notes), or a generated tree (bench.corpus). Every index lives in a temporary XDG_DATA_HOME, and the API
embedder talks to bench.stub_api, so no key, network or user index is touched. Each part is a module that runs alone
too (`python -m bench.NAME`); this module only orders them, shares the folder and the stub, and judges the bars.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from scree.benchmarks import (
    edit_latency,
    embed_local,
    search_latency,
    second_checkout,
    serve_footprint,
    sessions,
    sync_throughput,
    writer_idle,
)
from scree.benchmarks.corpus import generate_tree
from scree.benchmarks.stub_api import StubApiProcess
from scree.config import DEBOUNCE_SECONDS, DEFAULT_BATCH, load_settings
from scree.content.ignore import IgnorePolicy
from scree.embedders.model_install import check_model
from scree.errors import ModelMissingError, ScreeError

Values = Mapping[str, float | None]
Progress = Callable[[str], None]

RSS_OVER_BARE_MB = 10.0  # SPEC §10: reader idle RSS within this of a bare SDK server
HANDSHAKE_OVER_BARE_S = 0.2  # SPEC §10
WRITER_IDLE_API_MB = 40.0  # SPEC §10
STORE_P50_MS = {"10k": 10.0, "100k": 50.0}  # SPEC §10: store part of search, median
SYNC_MB_PER_S = 5.0  # SPEC §10, instant embedder
EDIT_OVER_DEBOUNCE_S = 0.5  # SPEC §10
OFFLINE_QUERY_P50_MS = 30.0  # SPEC §10
OFFLINE_TOKENS_PER_S = 5000.0  # SPEC §10
OFFLINE_FIRST_SYNC_PEAK_MB = 300.0  # SPEC §10


@dataclass(frozen=True, slots=True)
class Plan:
    """How much of each measurement to do; `quick` trades precision for a run of about a minute."""

    tree_bytes: int  # the generated folder, when no --notes
    sync_tree_bytes: int  # sync throughput is timed on at least this much, so start-up and load spikes even out
    sizes: tuple[int, ...]  # generated indexes for store and end-to-end search latency
    skipped_sizes: tuple[int, ...]
    queries: int
    handshake_runs: int
    idle_s: float
    offline_sample_bytes: int  # the offline first sync indexes this much of the folder (it runs ~20-40 KB/s)
    offline_chunks: int
    edits: int
    debounce_s: float
    session_queries: int = sessions.QUERIES  # timed semantic searches per session after the first (issue 24)


FULL = Plan(2_000_000, 10_000_000, (10_000, 100_000), (), 100, 7, 3.0, 500_000, 200, 20, DEBOUNCE_SECONDS)
QUICK = Plan(300_000, 300_000, (10_000,), (100_000,), 20, 1, 0.5, 30_000, 8, 3, 0.3, 1)


@dataclass(frozen=True, slots=True)
class Bar:
    """A bar as the table shows it, and whether a value meets it."""

    text: str
    limit: float
    at_most: bool = True

    def met(self, value: float) -> bool:
        return value <= self.limit if self.at_most else value >= self.limit


# Issue 17's next bars, where a user waits: shown beside the design's, judged apart (--check keeps to SPEC §10).
NEXT_BARS = {
    "search_e2e_p50_ms_100k": Bar("≤ 50 ms", 50.0),
    "search_e2e_p95_ms_100k": Bar("≤ 100 ms", 100.0),
    "offline_query_p50_ms": Bar("≤ 15 ms", 15.0),
    "offline_embed_tokens_per_s": Bar("≥ 7,000 tokens/s", 7000.0, at_most=False),
    "offline_first_sync_mb_per_min": Bar("≥ 3 MB/min", 3.0, at_most=False),
    "sync_mb_per_s": Bar("≥ 8 MB/s", 8.0, at_most=False),
    "writer_idle_rss_mb_api": Bar("≤ 30 MB", 30.0),
}


@dataclass(frozen=True, slots=True)
class Spec:
    """One figure: its JSON key (units in the name), its row label and unit, and its bar given every value."""

    key: str
    label: str
    unit: str
    bar: Callable[[Values], Bar | None] | None = None


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured row: value None when it was not measured, `note` says why; `met` None when there is no bar."""

    spec: Spec
    value: float | None
    bar: Bar | None
    met: bool | None
    note: str = ""

    @property
    def next_bar(self) -> Bar | None:
        return NEXT_BARS.get(self.spec.key)

    @property
    def next_met(self) -> bool | None:
        bar = self.next_bar
        return None if bar is None or self.value is None else bar.met(self.value)


def _fixed(limit: float, unit: str, at_most: bool = True) -> Callable[[Values], Bar]:
    sign = "≤" if at_most else "≥"
    return lambda _values: Bar(f"{sign} {limit:,g} {unit}", limit, at_most)


def _over(base_key: str, extra: float, unit: str, base_name: str) -> Callable[[Values], Bar | None]:
    def bar(values: Values) -> Bar | None:
        base = values.get(base_key)
        return None if base is None else Bar(f"≤ {base_name} + {extra:g} {unit} = {base + extra:.3g}", base + extra)

    return bar


def _requests_bar(values: Values) -> Bar | None:
    chunks = values.get("index_chunks")
    if chunks is None:
        return None
    ideal = math.ceil(chunks / DEFAULT_BATCH)
    return Bar(f"≤ ceil(chunks / {DEFAULT_BATCH}) = {ideal}", ideal)


def _label(size: int) -> str:
    return f"{size // 1000}k"


_NEAR_BARE_RSS = _over("bare_mcp_idle_rss_mb", RSS_OVER_BARE_MB, "MB", "bare")
_NEAR_BARE_HANDSHAKE = _over("bare_mcp_handshake_s", HANDSHAKE_OVER_BARE_S, "s", "bare")
SERVE = [
    Spec("bare_mcp_idle_rss_mb", "bare mcp SDK server, idle RSS", "MB"),
    Spec("bare_mcp_idle_uss_mb", "bare mcp SDK server, idle USS", "MB"),
    Spec("reader_idle_rss_mb", "scree reader, idle RSS", "MB", _NEAR_BARE_RSS),
    Spec("reader_idle_uss_mb", "scree reader, idle USS", "MB"),
    Spec("bare_mcp_handshake_s", "bare mcp SDK server, handshake", "s"),
    Spec("reader_handshake_s", "scree serve, handshake", "s", _NEAR_BARE_HANDSHAKE),
    Spec("reader_handshake_first_sync_s", "scree serve, handshake, first sync due", "s", _NEAR_BARE_HANDSHAKE),
    Spec("serve_writer_first_sync_peak_rss_mb", "serve's first-sync writer, peak RSS", "MB"),
    Spec("serve_writer_watching_rss_mb", "serve's writer after it is replaced, idle RSS", "MB"),
]
WRITER_API = [
    Spec("writer_idle_rss_mb_api", "writer watching, API embedder, idle RSS", "MB", _fixed(WRITER_IDLE_API_MB, "MB")),
    Spec("writer_first_sync_peak_rss_mb_api", "writer first sync, API embedder, peak RSS", "MB"),
    Spec("index_chunks", "chunks in the index", "chunks"),
    Spec("first_sync_api_requests", "API requests in the first sync", "requests", _requests_bar),
]


def _second_checkout_bar(values: Values) -> Bar | None:
    first = values.get("first_checkout_sync_s")
    if first is None:
        return None
    limit = second_checkout.bar_s(first)
    return Bar(f"≤ max({second_checkout.BAR_FLOOR_S:g} s, first / 5) = {limit:.3g} s", limit)


SECOND_CHECKOUT = [  # issue 24: the machine-wide vector cache
    Spec("first_checkout_sync_s", "first checkout, first sync, API embedder", "s"),
    Spec("second_checkout_sync_s", "its git worktree, first sync", "s", _second_checkout_bar),
    Spec("first_checkout_api_requests", "API requests, first checkout's first sync", "requests"),
    Spec("second_checkout_api_requests", "API requests, the worktree's first sync", "requests", _fixed(0, "requests")),
    Spec("vector_cache_mb", "vector cache on disk after both", "MB"),
]
SEARCH_INDEX = [
    Spec("search_store_p50_ms_index", "search at the index's size, store part, p50", "ms"),
    Spec("search_store_p95_ms_index", "search at the index's size, store part, p95", "ms"),
    Spec("search_e2e_p50_ms_index", "search at the index's size, end to end, p50", "ms"),
    Spec("search_e2e_p95_ms_index", "search at the index's size, end to end, p95", "ms"),
]


def _search_specs(size: int) -> list[Spec]:
    label = _label(size)
    bar = STORE_P50_MS.get(label)
    return [
        Spec(
            f"search_store_p50_ms_{label}",
            f"search at {label} chunks, store part, p50",
            "ms",
            _fixed(bar, "ms") if bar is not None else None,
        ),
        Spec(f"search_store_p95_ms_{label}", f"search at {label} chunks, store part, p95", "ms"),
        Spec(f"search_e2e_p50_ms_{label}", f"search at {label} chunks, end to end, p50", "ms"),
        Spec(f"search_e2e_p95_ms_{label}", f"search at {label} chunks, end to end, p95", "ms"),
    ]


def _sync_specs(where: str) -> list[Spec]:
    bar = _fixed(SYNC_MB_PER_S, "MB/s", at_most=False)
    return [
        Spec("sync_mb_per_s", f"sync throughput, instant embedder{where}", "MB/s", bar),
        Spec("sync_mb_per_cpu_s", f"sync, instant embedder, per CPU-second{where}", "MB/s"),
        Spec("sync_peak_rss_mb", f"sync, instant embedder, peak RSS{where}", "MB"),
    ]


WRITER_OFFLINE = [
    Spec("writer_idle_rss_mb_offline", "writer watching, offline model, idle RSS", "MB"),
    Spec(
        "writer_first_sync_peak_rss_mb_offline",
        "writer first sync, offline model, peak RSS",
        "MB",
        _fixed(OFFLINE_FIRST_SYNC_PEAK_MB, "MB"),
    ),
    Spec("offline_first_sync_mb_per_min", "writer first sync, offline model, markdown per minute", "MB/min"),
    Spec("offline_first_sync_tokens_per_mb", "writer first sync, offline model, tokens embedded per MB", "tokens/MB"),
]
SESSIONS = [
    Spec("bare_sessions_uss_mb", f"{sessions.DEFAULT_SESSIONS} bare mcp SDK servers, USS in all", "MB"),
    Spec(
        "sessions_uss_mb",
        f"{sessions.DEFAULT_SESSIONS} x scree serve after a search, offline model, USS in all",
        "MB",
        _over("bare_sessions_uss_mb", sessions.BAR_OVER_BARE_MB, "MB", f"{sessions.DEFAULT_SESSIONS} bare"),
    ),
    Spec("sessions_readers_uss_mb", "  of which the readers", "MB"),
    Spec("sessions_writer_uss_mb", "  of which the writer child", "MB"),
    Spec("sessions_resource_tracker_uss_mb", "  of which multiprocessing's resource tracker", "MB"),
    Spec("sessions_reader_over_bare_mb", "  each reader over a bare server (what one more session adds)", "MB"),
    Spec("sessions_semantic_p50_ms", "those sessions' semantic search, end to end, p50", "ms"),
]
OFFLINE_MODEL = [
    Spec("offline_model_load_s", "offline model, load", "s"),
    Spec("offline_query_p50_ms", "offline model, query embedding, p50", "ms", _fixed(OFFLINE_QUERY_P50_MS, "ms")),
    Spec(
        "offline_embed_tokens_per_s",
        "offline model, chunk embedding",
        "tokens/s",
        _fixed(OFFLINE_TOKENS_PER_S, "tokens/s", at_most=False),
    ),
    Spec("offline_embed_peak_rss_mb", "offline model, peak RSS while embedding", "MB"),
    Spec("offline_precision_bits", "offline model, precision picked (16 bf16, 8 int8, 32 fp32)", "bits"),
    Spec("offline_embed_tokens_per_cpu_s", "offline model, chunk embedding per CPU-second", "tokens/CPU-s"),
    Spec("offline_numpy_tokens_per_cpu_s", "  numpy float32, 1 BLAS thread, same chunks interleaved", "tokens/CPU-s"),
    Spec(
        "offline_embed_ratio_to_numpy",
        "  offline model over numpy float32",
        "x",
        lambda v: Bar(
            f"≥ {embed_local.ratio_bar(v.get('offline_precision_bits') or 32)}x",
            embed_local.ratio_bar(v.get("offline_precision_bits") or 32),
            at_most=False,
        ),
    ),
    Spec("offline_query_cpu_ms", "offline model, query embedding, CPU time", "ms"),
    Spec("offline_numpy_query_cpu_ms", "  numpy float32, same queries interleaved", "ms"),
]


def _edit_specs(debounce_s: float) -> list[Spec]:
    bar = _fixed(debounce_s + EDIT_OVER_DEBOUNCE_S, "s")
    return [
        Spec("edit_to_searchable_p50_s", f"edit to searchable, p50 (debounce {debounce_s:g} s)", "s", bar),
        Spec("edit_to_searchable_p95_s", f"edit to searchable, p95 (debounce {debounce_s:g} s)", "s", bar),
    ]


def _copy_indexable(source: Path, extensions: tuple[str, ...], target: Path, budget: int | None = None) -> int:
    """Copy the files scree would index from `source` to `target` (up to `budget` bytes); returns bytes copied."""
    copied = 0
    for rel in sorted(IgnorePolicy(source, extensions).walk()):
        size = (source / rel).stat().st_size
        if budget is not None and copied and copied + size > budget:
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, target / rel)
        copied += size
        if budget is not None and copied >= budget:
            break
    return copied


class BenchRun:
    """One `scree bench` run: the folder, the stub API, a temporary root, and the figures gathered so far."""

    def __init__(self, root: Path, folder: Path, prepared: Prepared, plan: Plan, progress: Progress) -> None:
        self.root = root
        self.folder = folder
        self.extensions = prepared.extensions
        self.folder_bytes = prepared.bytes
        self.plan = plan
        self.progress = progress
        self.values: dict[str, float | None] = {}
        self.notes: dict[str, str] = {}
        self.specs: list[Spec] = []
        self.failed = False
        self.precision: str | None = None  # the offline model's, and why (issue 35), once measured

    def step(self, title: str, specs: Sequence[Spec], measure: Callable[[], Mapping[str, float]]) -> None:
        """Run one measurement; a failure (or a missing model) leaves its figures empty with the reason beside them."""
        self.specs.extend(specs)
        self.progress(title)
        try:
            found = measure()
            note = ""
        except ModelMissingError as exc:
            found, note = {}, str(exc) if "not installed" in str(exc) else f"not installed: {exc}"
        except Exception as exc:  # a benchmark that breaks must not hide the figures measured before it
            found, note = {}, f"failed: {type(exc).__name__}: {' '.join(str(exc).split())}"
            self.failed = True
        for spec in specs:
            self.values[spec.key] = found.get(spec.key)
            if note:
                self.notes[spec.key] = note

    def skip(self, specs: Sequence[Spec], note: str) -> None:
        self.specs.extend(specs)
        for spec in specs:
            self.values[spec.key] = None
            self.notes[spec.key] = note

    def data(self, name: str) -> Path:
        """A fresh XDG_DATA_HOME for one measurement's index."""
        return self.root / f"data-{name}"

    def figures(self) -> list[Figure]:
        out = []
        for spec in self.specs:
            value = self.values[spec.key]
            bar = spec.bar(self.values) if spec.bar is not None else None
            met = bar.met(value) if bar is not None and value is not None else None
            if bar is not None and value is None and self.notes.get(spec.key, "").startswith("failed"):
                met = False
            out.append(Figure(spec, value, bar, met, self.notes.get(spec.key, "")))
        return out


def _measure_serve(run: BenchRun, api: StubApiProcess) -> dict[str, float]:
    found = serve_footprint.measure(run.folder, api.url, run.data("serve"), run.plan.handshake_runs, run.plan.idle_s)
    return {
        "bare_mcp_idle_rss_mb": found["bare_idle_rss_mb"],
        "bare_mcp_idle_uss_mb": found["bare_idle_uss_mb"],
        "reader_idle_rss_mb": found["serve_reader_idle_rss_mb"],
        "reader_idle_uss_mb": found["serve_reader_idle_uss_mb"],
        "bare_mcp_handshake_s": found["bare_handshake_s"],
        "reader_handshake_s": found["serve_handshake_s"],
        "reader_handshake_first_sync_s": found["first_sync_handshake_s"],
        "serve_writer_first_sync_peak_rss_mb": found["first_sync_writer_peak_rss_mb"],
        "serve_writer_watching_rss_mb": found["first_sync_fresh_writer_idle_rss_mb"],
    }


def _measure_writer_api(run: BenchRun, api: StubApiProcess) -> dict[str, float]:
    found = writer_idle.measure(run.folder, run.data("api"), api=api, idle_s=run.plan.idle_s)
    return {
        "writer_idle_rss_mb_api": found["idle_rss_mb"],
        "writer_first_sync_peak_rss_mb_api": found["peak_rss_mb"],
        "index_chunks": found["chunks"],
        "first_sync_api_requests": found["api_requests"],
    }


def _measure_second_checkout(run: BenchRun, api: StubApiProcess) -> dict[str, float]:
    found = second_checkout.measure(run.folder, run.data("checkouts"), api=api)
    return {spec.key: found[spec.key] for spec in SECOND_CHECKOUT}


def _measure_search_index(run: BenchRun) -> dict[str, float]:
    """Over the index the API writer built (its model is the stub's, so the query vectors are like its vectors)."""
    settings = load_settings(writer_idle.clean_env(run.data("api")), notes=str(run.folder))
    found = search_latency.measure(settings.db_path, settings.folder, run.plan.queries)
    return {f"search_{key}_index": value for key, value in found.items() if key != "chunks"}


def _measure_search_generated(run: BenchRun) -> dict[str, float]:
    from scree.benchmarks import store_search  # numpy: imported after the sessions step (sessions.measure)

    found = store_search.measure(run.plan.sizes, run.plan.queries)
    out = {}
    for size in run.plan.sizes:
        label = _label(size)
        for part in ("store_p50_ms", "store_p95_ms", "e2e_p50_ms", "e2e_p95_ms"):
            out[f"search_{part}_{label}"] = found[f"{part}_{label}"]
    return out


def _sync_folder(run: BenchRun) -> tuple[Path, str]:
    """The folder to time a sync on: the bench's own, unless it is too small to time, then a generated tree."""
    if run.folder_bytes >= run.plan.sync_tree_bytes:
        return run.folder, ""
    return run.root / "sync-tree", f" (a generated {run.plan.sync_tree_bytes / 1e6:g} MB tree)"


def _measure_sync(run: BenchRun) -> dict[str, float]:
    folder, _ = _sync_folder(run)
    if folder != run.folder:
        folder.mkdir()
        generate_tree(folder, run.plan.sync_tree_bytes, seed=1)
    found = sync_throughput.measure(folder)
    return {
        "sync_mb_per_s": found["mb_per_s"],
        "sync_mb_per_cpu_s": found["mb_per_cpu_s"],
        "sync_peak_rss_mb": found["peak_rss_mb"],
    }


def _measure_writer_offline(run: BenchRun, model: Path) -> dict[str, float]:
    check_model(model)
    sample = run.root / "offline-sample"
    sample.mkdir()
    _copy_indexable(run.folder, run.extensions, sample, run.plan.offline_sample_bytes)
    found = writer_idle.measure(sample, run.data("offline"), model_dir=model, idle_s=run.plan.idle_s)
    # The writer's own clock for its first sync: loading the model, chunking, embedding and writing every file.
    # Tokens per MB say how dense the folder is for the model (real docs ~190,000, the generated tree ~140,000).
    megabytes = found["markdown_bytes"] / 1e6
    figures = {
        "writer_idle_rss_mb_offline": found["idle_rss_mb"],
        "writer_first_sync_peak_rss_mb_offline": found["peak_rss_mb"],
        "offline_first_sync_tokens_per_mb": round(embedded_tokens(sample, model) / megabytes),
    }
    if found["first_sync_s"] > 0:
        figures["offline_first_sync_mb_per_min"] = round(megabytes / found["first_sync_s"] * 60, 3)
    return figures


def _measure_sessions(run: BenchRun, model: Path) -> dict[str, float]:
    """Issue 24: N serves in a sample of the folder (indexed here by `scree reindex`) beside N bare servers; before
    any step loads numpy, tokenizers or openvino into this process (sessions.measure says why)."""
    check_model(model)
    sample = run.root / "sessions-sample"
    sample.mkdir()
    _copy_indexable(run.folder, run.extensions, sample, run.plan.offline_sample_bytes)
    found = sessions.measure(
        sample, run.data("sessions"), model, idle_s=min(run.plan.idle_s, 3.0), queries=run.plan.session_queries
    )
    return {spec.key: found[spec.key] for spec in SESSIONS}


def embedded_tokens(folder: Path, model: Path) -> int:
    """Tokens the offline model reads for the distinct chunk texts of `folder` (what its first sync embeds)."""
    from tokenizers import Tokenizer

    from scree.content.formats import DocFormat, detect, embedded_text
    from scree.embedders.local import MAX_TOKENS
    from scree.embedders.model_install import TOKENIZER_FILE

    tokenizer = Tokenizer.from_file(str(model / TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    texts: dict[str, None] = {}
    for path in sorted(folder.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(folder).as_posix()
        row = detect(rel, text)
        if isinstance(row, DocFormat):
            texts.update(dict.fromkeys(embedded_text(rel, c, row) for c in row.chunks(text)))
    return sum(len(encoding.ids) for encoding in tokenizer.encode_batch(list(texts)))


def measure_offline_model(run: BenchRun, model: Path) -> dict[str, float]:
    """bench.embed_local in a process of its own, so the peak RSS it reports is the model's and not this one's."""
    check_model(model)
    out = run.root / "embed_local.json"
    command = [sys.executable, "-m", "scree.benchmarks.embed_local", "--model-dir", str(model), "--json", str(out)]
    proc = subprocess.run([*command, "--chunks", str(run.plan.offline_chunks)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"bench.embed_local exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")
    found: dict[str, float] = json.loads(out.read_text(encoding="utf-8"))
    run.precision = f"{found['precision']} ({found['precision_why']})"
    return {
        "offline_model_load_s": found["model_load_s"],
        "offline_query_p50_ms": found["query_ms_median"],
        "offline_embed_tokens_per_s": found["tokens_per_s"],
        "offline_embed_peak_rss_mb": found["rss_peak_embedding_mb"],
        "offline_precision_bits": found["precision_bits"],
        "offline_embed_tokens_per_cpu_s": found["tokens_per_cpu_s_scree"],
        "offline_numpy_tokens_per_cpu_s": found["tokens_per_cpu_s_numpy"],
        "offline_embed_ratio_to_numpy": found["ratio_to_numpy"],
        "offline_query_cpu_ms": found["query_cpu_ms"],
        "offline_numpy_query_cpu_ms": found["query_cpu_ms_numpy"],
    }


def _measure_edits(run: BenchRun) -> dict[str, float]:
    found = edit_latency.measure(run.folder, run.data("edit"), run.plan.edits, run.plan.debounce_s)
    return {"edit_to_searchable_p50_s": found["p50_s"], "edit_to_searchable_p95_s": found["p95_s"]}


@dataclass(frozen=True, slots=True)
class Prepared:
    """The folder the bench measures: what it is (one line), its bytes of notes, the extensions scree indexes."""

    what: str
    bytes: int
    extensions: tuple[str, ...]


def prepare_folder(notes: Path | None, target: Path, plan: Plan) -> Prepared:
    """Fill `target` with a copy of what scree would index in `notes`, or a generated tree (SCREE_EXTENSIONS counts,
    as in every other command)."""
    target.mkdir()
    settings = load_settings(notes=str(notes) if notes is not None else str(target))
    if notes is None:
        files = generate_tree(target, plan.tree_bytes)
        size = sum(p.stat().st_size for p in target.rglob("*.md"))
        return Prepared(f"a generated tree of {files} notes, {size / 1e6:.2f} MB", size, settings.extensions)
    copied = _copy_indexable(settings.folder, settings.extensions, target)
    if copied == 0:
        raise ScreeError(f"no markdown for scree to index under {settings.folder}: nothing to measure")
    return Prepared(f"a copy of the notes in {settings.folder}, {copied / 1e6:.2f} MB", copied, settings.extensions)


def run_bench(notes: Path | None, *, quick: bool = False, progress: Progress | None = None) -> tuple[str, list[Figure]]:
    """Measure every figure; returns what was measured (one line) and the figures in table order."""
    plan = QUICK if quick else FULL
    say = progress or (lambda _title: None)
    model = embed_local.default_model_dir()
    with tempfile.TemporaryDirectory(prefix="scree-bench-") as tmp:
        root = Path(tmp)
        say("preparing the folder")
        prepared = prepare_folder(notes, root / "notes", plan)
        run = BenchRun(root, root / "notes", prepared, plan, say)
        run.step("sessions sharing the offline model", SESSIONS, lambda: _measure_sessions(run, model))
        with StubApiProcess() as api:
            sync_specs = _sync_specs(_sync_folder(run)[1])
            run.step("sync throughput, instant embedder", sync_specs, lambda: _measure_sync(run))
            run.step("scree watch with the API embedder", WRITER_API, lambda: _measure_writer_api(run, api))
            run.step("search latency at the index's size", SEARCH_INDEX, lambda: _measure_search_index(run))
            run.step("a second checkout's first sync", SECOND_CHECKOUT, lambda: _measure_second_checkout(run, api))
            run.step("scree serve beside a bare mcp server", SERVE, lambda: _measure_serve(run, api))
        specs = [spec for size in plan.sizes for spec in _search_specs(size)]
        sizes = " and ".join(_label(size) for size in plan.sizes)
        run.step(f"search latency at {sizes} generated chunks", specs, lambda: _measure_search_generated(run))
        for size in plan.skipped_sizes:
            run.skip(_search_specs(size), "skipped (--quick)")
        run.step("scree watch with the offline model", WRITER_OFFLINE, lambda: _measure_writer_offline(run, model))
        run.step("offline model speed", OFFLINE_MODEL, lambda: measure_offline_model(run, model))
        run.step("edit to searchable", _edit_specs(plan.debounce_s), lambda: _measure_edits(run))
        say("")
        what = prepared.what if run.precision is None else f"{prepared.what}; the offline model in {run.precision}"
        return what, run.figures()


def _value_text(figure: Figure) -> str:
    if figure.value is None:
        return "-"
    unit = "" if figure.spec.unit in ("chunks", "requests") else f" {figure.spec.unit}"
    return f"{figure.value:,.4g}{unit}" if figure.value < 10_000 else f"{figure.value:,.0f}{unit}"


def _verdict(figure: Figure) -> str:
    if figure.note and figure.value is None:
        return figure.note
    return "-" if figure.met is None else "met" if figure.met else "MISSED"


def render_table(what: str, figures: Sequence[Figure]) -> str:
    """The table `scree bench` prints: figure, value, bar, verdict, and issue 17's next bar with its verdict."""
    rows = [("figure", "value", "bar (the design, §10)", "", "next bar (#17)", "")]
    rows += [
        (
            f.spec.label,
            _value_text(f),
            f.bar.text if f.bar else "",
            _verdict(f),
            f.next_bar.text if f.next_bar else "",
            "" if f.next_met is None else "met" if f.next_met else "not yet",
        )
        for f in figures
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [f"scree bench on {what}"]
    for label, value, bar, verdict, next_bar, next_verdict in rows:
        lines.append(
            f"{label:<{widths[0]}}  {value:>{widths[1]}}  {bar:<{widths[2]}}  {verdict:<{widths[3]}}  "
            f"{next_bar:<{widths[4]}}  {next_verdict}".rstrip()
        )
    missed = [f.spec.label for f in figures if f.met is False]
    lines.append(f"bars missed: {len(missed)}" + (f" ({'; '.join(missed)})" if missed else ""))
    ahead = [f.spec.label for f in figures if f.next_met is False]
    lines.append(f"next bars (#17) not yet met: {len(ahead)}" + (f" ({'; '.join(ahead)})" if ahead else ""))
    return "\n".join(lines)


def to_json(figures: Sequence[Figure]) -> dict[str, float | None]:
    """One key per figure, units in the name; null for a figure that was not measured."""
    return {figure.spec.key: figure.value for figure in figures}


def missed(figures: Sequence[Figure]) -> list[Figure]:
    """Figures that miss their bar, or whose measurement failed."""
    return [figure for figure in figures if figure.met is False]


def failed(figures: Sequence[Figure]) -> list[Figure]:
    return [figure for figure in figures if figure.note.startswith("failed")]


def terminal_progress(stream: TextIO = sys.stderr) -> Progress | None:
    """R-L1: one line on a terminal saying which measurement runs and for how long the run has gone; None elsewhere."""
    if not stream.isatty():
        return None
    started = time.monotonic()

    def show(title: str) -> None:
        text = f"scree bench: {title} ({time.monotonic() - started:.0f} s)" if title else ""
        stream.write(f"\r\x1b[K{text}")
        stream.flush()

    return show
