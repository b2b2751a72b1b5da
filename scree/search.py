"""The search engine shared by `scree search` and the MCP tool: retrieve, fuse, re-check, remap stale hits, collapse."""

from __future__ import annotations

import stat as stat_mod
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scree.chunking import chunk_markdown, opted_out
from scree.embedders.base import Embedder
from scree.embedders.factory import KEYWORD_ONLY, NEEDS_VECTORS, SEMANTIC_OFF
from scree.errors import ScreeError
from scree.files import FileContent, read_markdown, stat_file
from scree.hits import Hit, SearchResult
from scree.ignore import IgnorePolicy
from scree.logs import get_logger
from scree.ranking import VECTOR_WEIGHT, fuse_rrf, overfetch
from scree.scope import scope_pattern
from scree.store import FileState, Store, StoredChunk

log = get_logger(__name__)

MODES = ("hybrid", "semantic", "keyword")
PREPARED_QUERIES = 16  # query vectors kept between prepare_query() and search()
MAX_K = 50  # SPEC §8


@dataclass(frozen=True, slots=True)
class _Current:
    """What the re-check found for one file: None = drop it; ranges maps chunk text to its current line range."""

    ranges: dict[str, tuple[int, int]] | None  # None: file unchanged since indexing


class SearchEngine:
    """Answers queries over one index; the embedder is built lazily, on the first query that needs a vector."""

    def __init__(
        self,
        store: Store,
        policy: IgnorePolicy,
        root: Path,
        max_file_bytes: int,
        embedder_factory: Callable[[], Embedder] | None,
        embedder_available: Callable[[], bool] | None = None,
    ) -> None:
        """`embedder_available` says, without building one, whether an embedder with vectors exists now: it picks
        the advice on an index built keyword-only (R-E6)."""
        self._store = store
        self._embedder_available = embedder_available
        self._policy = policy
        self._root = root
        self._max_file_bytes = max_file_bytes
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        # The query embedding may wait on the API for seconds: it runs under its own lock (prepare_query), apart
        # from whatever serialises the store, so a keyword search never waits behind it (R-M3, issue 13).
        self._embed_lock = threading.Lock()
        self._prepared: OrderedDict[str, bytes | ScreeError] = OrderedDict()

    @property
    def has_index(self) -> bool:
        """False when the store is the empty stand-in for an index not built yet (Store.open, read-only)."""
        return self._store.exists

    def close(self) -> None:
        self._store.close()

    def prepare_query(self, query: str, mode: str) -> None:
        """Embed `query` now, outside any lock the caller holds on the store, for the search() that follows; the
        vector (or the error) is kept for it. Nothing to do for a keyword search or an index with no vectors."""
        if mode == "keyword" or not query.strip():
            return
        recorded = self._store.model()
        if recorded is None or recorded[0] == KEYWORD_ONLY or self._store.is_empty():
            return
        try:
            outcome: bytes | ScreeError = self._query_vector(query)
        except ScreeError as exc:
            outcome = exc
        with self._embed_lock:
            self._prepared[query] = outcome
            while len(self._prepared) > PREPARED_QUERIES:
                self._prepared.popitem(last=False)

    def _query_vector(self, query: str) -> bytes:
        with self._embed_lock:
            prepared = self._prepared.pop(query, None)
            if isinstance(prepared, ScreeError):
                raise prepared
            if prepared is not None:
                return prepared
            return self._embed_query(query)

    def _embed_query(self, query: str) -> bytes:
        if self._embedder is None:
            if self._embedder_factory is None:
                raise ScreeError(SEMANTIC_OFF)
            embedder = self._embedder_factory()
            recorded = self._store.model()
            if recorded is not None and recorded != (embedder.identity, embedder.dims):
                raise ScreeError(
                    f"semantic search is off: the index was built with {recorded[0]} but the settings select "
                    f'{embedder.identity}; run "scree reindex --all" to rebuild it'
                )
            self._embedder = embedder
        return self._embedder.embed_query(query)

    def search(
        self, query: str, k: int = 8, mode: str = "hybrid", max_k: int = MAX_K, path: str | None = None
    ) -> SearchResult:
        """Up to k hits, best first; `max_k` lets the quality benchmark look past the tool's cap of 50. `path` (a
        folder prefix or a glob, scree.scope) limits both searches to the files inside it, in SQL (R-M10)."""
        k = max(1, min(k, max_k))
        scope = scope_pattern(path) if path is not None else None
        notes: list[str] = []
        if self._store.is_empty() or not query.strip():
            return SearchResult(hits=[], notes=notes)
        limit = overfetch(k)
        vector_ids: list[int] = []
        vector_scores: dict[int, float] = {}
        recorded = self._store.model()
        if recorded is not None and recorded[0] == KEYWORD_ONLY:  # R-E6: built with no key and no offline model
            ready = self._embedder_available is not None and self._embedder_available()
            off = NEEDS_VECTORS if ready else SEMANTIC_OFF  # a model since: the index needs a reindex, not a model
            if mode == "semantic":
                raise ScreeError(off)
            notes.append(f"[{off}]")
            mode = "keyword"
        if mode in ("hybrid", "semantic"):
            try:
                found = self._store.vector_search(self._query_vector(query), limit, scope)
                vector_ids = [chunk_id for chunk_id, _ in found]
                vector_scores = {chunk_id: 1.0 - distance for chunk_id, distance in found}
            except ScreeError as exc:
                if mode == "semantic":
                    raise
                notes.append(f"[{str(exc).rstrip('.')}; showing keyword results]")
            except Exception as exc:  # R-M3: a failed vector search never fails a hybrid one (issue 13)
                log.exception("vector search failed")
                if mode == "semantic":
                    raise ScreeError(f"vector search failed: {type(exc).__name__}") from None
                notes.append(f"[vector search failed ({type(exc).__name__}); showing keyword results]")
        keyword_ids: list[int] = []
        if mode in ("hybrid", "keyword"):
            keyword_ids = [chunk_id for chunk_id, _ in self._store.keyword_search(query, limit, scope)]
        if mode == "semantic":
            ranked = [(chunk_id, vector_scores[chunk_id]) for chunk_id in vector_ids]
        elif mode == "keyword":
            ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, chunk_id in enumerate(keyword_ids)]
        else:
            ranked = fuse_rrf([vector_ids, keyword_ids], weights=(VECTOR_WEIGHT, 1.0))
        hits, dropped = self._recheck_and_collapse(ranked, k)
        return SearchResult(hits=hits, notes=notes, dropped_paths=tuple(sorted(dropped)))

    def _recheck_and_collapse(self, ranked: list[tuple[int, float]], k: int) -> tuple[list[Hit], set[str]]:
        rows = self._store.chunks_by_ids(chunk_id for chunk_id, _ in ranked)
        current: dict[str, _Current | None] = {}
        dropped: set[str] = set()
        seen_texts: set[str] = set()
        hits: list[Hit] = []
        for chunk_id, score in ranked:
            row = rows.get(chunk_id)
            if row is None or row.text in seen_texts:
                continue
            state = self._check(row.path, current)
            if state is None:
                dropped.add(row.path)
                continue
            seen_texts.add(row.text)
            hits.append(self._hit(row, score, state, current))
            if len(hits) == k:
                break
        return hits, dropped

    def _hit(self, row: StoredChunk, score: float, state: _Current, current: dict[str, _Current | None]) -> Hit:
        start, end, stale = _locate(row, state)
        also: list[str] = []
        for twin in self._store.chunks_with_text(row.text):
            if twin.path == row.path:
                continue
            twin_state = self._check(twin.path, current)
            if twin_state is None:
                continue
            t_start, t_end, t_stale = _locate(twin, twin_state)
            also.append(twin.path if t_stale else f"{twin.path}:{t_start}-{t_end}")
        return Hit(
            path=row.path,
            start=None if stale else start,
            end=None if stale else end,
            heading=row.heading,
            score=score,
            text=row.text,
            stale=stale,
            also=tuple(also),
        )

    def _check(self, path: str, cache: dict[str, _Current | None]) -> _Current | None:
        """R-M2: is `path` still indexable, and has it changed since it was indexed? Cached per query."""
        if path not in cache:
            cache[path] = self._recheck(path, self._store.file_state(path))
        return cache[path]

    def _recheck(self, path: str, indexed: FileState | None) -> _Current | None:
        if self._policy(path) is not None:
            return None
        st = stat_file(self._root, path)
        if st is None or not stat_mod.S_ISREG(st.st_mode):
            return None
        if indexed is not None and st.st_mtime_ns == indexed.mtime_ns and st.st_size == indexed.size:
            return _Current(ranges=None)
        content = read_markdown(self._root, path, self._max_file_bytes)
        if not isinstance(content, FileContent) or opted_out(content.text):
            return None
        if indexed is not None and content.sha256 == indexed.sha256:
            return _Current(ranges=None)
        return _Current(ranges={c.text: (c.start_line, c.end_line) for c in chunk_markdown(content.text)})


def _locate(row: StoredChunk, state: _Current) -> tuple[int, int, bool]:
    """R-M4: the chunk's line range now; stale when its text is no longer in the file."""
    if state.ranges is None:
        return row.start_line, row.end_line, False
    found = state.ranges.get(row.text)
    if found is None:
        return 0, 0, True
    return found[0], found[1], False
