"""The search engine shared by `scree search` and the MCP tool: retrieve, fuse, re-check, remap stale hits, collapse."""

from __future__ import annotations

import stat as stat_mod
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scree.config import Settings
from scree.content.chunking import chunk_markdown, opted_out, thin, too_little_to_show
from scree.content.files import FileContent, read_markdown, stat_file
from scree.content.ignore import IgnorePolicy
from scree.content.languages import LanguageTrees
from scree.embedders.base import KEYWORD_ONLY, Embedder
from scree.embedders.factory import (
    NEEDS_VECTORS,
    SEMANTIC_OFF,
    embedder_available,
    make_embedder,
    make_query_embedder,
)
from scree.errors import ScreeError
from scree.logs import get_logger
from scree.replies import no_markdown_note
from scree.search import MAX_K
from scree.search.hits import Hit, SearchResult
from scree.search.ranking import (
    PER_FILE,
    POOL,
    SIMILARITY_FLOORS,
    above_floor,
    add_path_signal,
    demote_thin,
    diversify,
    fuse_hybrid,
    fuse_keyword_lists,
    path_match,
    vector_weight,
)
from scree.search.scope import scope_filter
from scree.store import FileState, IndexReader, PathFilter, StoredChunk
from scree.store.keywords import content_words

log = get_logger(__name__)

PATH_NOISE = frozenset({"index", "readme", "md", "markdown", "docs", "doc"})  # path words that name no topic


@dataclass(frozen=True, slots=True)
class _Current:
    """What the re-check found for one file: None = drop it; ranges maps chunk text to its current line range."""

    ranges: dict[str, tuple[int, int]] | None  # None: file unchanged since indexing


def keyword_ranking(
    store: IndexReader, query: str, limit: int, within: PathFilter | None = None, *, floor_alone: bool = True
) -> list[tuple[int, float]]:
    """(chunk id, score) of the keyword search, best first: the store's lists of each keyword index the query
    reaches, as ranking.fuse_keyword_lists makes them one."""
    return fuse_keyword_lists(store.keyword_lists(query, limit, within, floor_alone=floor_alone), limit)


class SearchEngine:
    """Answers queries over one index; the embedder is built lazily, on the first query that needs a vector."""

    @classmethod
    def over(
        cls,
        store: IndexReader,
        settings: Settings,
        policy: IgnorePolicy | None = None,
        release_idle_s: float | None = None,
        *,
        shared_model: bool = False,
    ) -> SearchEngine:
        """The engine for `settings`' folder over an open store, as the MCP tool and `scree search` both run it:
        the configured embedder made on the first query that needs a vector (released after `release_idle_s`).
        With `shared_model` (serve's readers), offline queries are embedded by the index's writer when one answers
        (issue 24); a one-shot `scree search` loads the model itself, as before."""

        def embedder() -> Embedder:
            if shared_model:
                from scree.index.lock import lock_holder

                return make_query_embedder(
                    settings, lambda: lock_holder(settings.lock_path) is not None, release_idle_s
                )
            return make_embedder(settings, release_idle_s=release_idle_s)

        return cls(
            store,
            policy or IgnorePolicy(settings.folder, settings.extensions),
            settings.folder,
            settings.max_file_bytes,
            embedder,
            lambda: embedder_available(settings),
        )

    def __init__(
        self,
        store: IndexReader,
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
        self._path_terms: dict[str, frozenset[str]] = {}
        self._trees: tuple[int, LanguageTrees] | None = None  # (files counted, the trees then)
        # The store's connection serves one thread at a time. The query embedding may wait on the API for seconds:
        # it runs under its own lock, never under the store's, so a keyword search never waits behind it (R-M3,
        # issue 13).
        self._store_lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self._closed = False

    @property
    def has_index(self) -> bool:
        """False when the store is the empty stand-in for an index not built yet (SqliteReader.open)."""
        return self._store.exists

    def close(self) -> None:
        """Close the store; a search still running on another thread ends with no hits."""
        with self._store_lock:
            self._closed = True
            self._store.close()

    def _wants_vector(self, query: str, mode: str) -> tuple[str, int] | None:
        """The index's (model, dimensions) when a search in `mode` needs a query vector, else None."""
        if mode == "keyword" or not query.strip():
            return None
        recorded = self._store.model()
        if recorded is None or recorded[0] == KEYWORD_ONLY or self._store.is_empty():
            return None
        return recorded

    def _query_vector(self, query: str, recorded: tuple[str, int] | None) -> bytes | Exception:
        """The query's vector, or the error that stopped it, for _vector_candidates to raise where a hybrid search
        turns it into a note (R-M3); never under the store's lock (see __init__)."""
        try:
            with self._embed_lock:
                return self._embed_query(query, recorded)
        except Exception as exc:
            return exc

    def _embed_query(self, query: str, recorded: tuple[str, int] | None) -> bytes:
        if self._embedder is None:
            if self._embedder_factory is None:
                raise ScreeError(SEMANTIC_OFF)
            embedder = self._embedder_factory()
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
        folder prefix or a glob, scree.search.scope) limits both searches to the files inside it, in SQL (R-M10).

        Every step ranks the same POOL candidates whatever k is, and k only cuts the end: the first m hits of a
        k-hit reply are the first m of any larger k (#11). Safe to call from several threads: the store is read
        under its lock, the query embedded outside it.
        """
        vector: bytes | Exception | None = None
        while True:  # at most twice: a search that needs a vector embeds the query once, then looks again
            with self._store_lock:
                if self._closed:
                    return SearchResult(hits=[])
                recorded = self._wants_vector(query, mode)
                if recorded is None or vector is not None:
                    return self._search(query, k, mode, max_k, path, vector)
            vector = self._query_vector(query, recorded)

    def _search(
        self, query: str, k: int, mode: str, max_k: int, path: str | None, vector: bytes | Exception | None
    ) -> SearchResult:
        k = max(1, min(k, max_k))
        scope = scope_filter(path) if path is not None else None
        notes: list[str] = []
        if self._store.is_empty() or not query.strip():
            if self._store.is_complete() and self._store.file_count() == 0:  # issue 25: not silence
                notes.append(no_markdown_note(str(self._root), self._policy.extensions))
            return SearchResult(hits=[], notes=notes)
        limit = max(POOL, k)
        recorded = self._store.model()
        if recorded is not None and recorded[0] == KEYWORD_ONLY:  # R-E6: built with no key and no offline model
            ready = self._embedder_available is not None and self._embedder_available()
            off = NEEDS_VECTORS if ready else SEMANTIC_OFF  # a model since: the index needs a reindex, not a model
            if mode == "semantic":
                raise ScreeError(off)
            notes.append(f"[{off}]")
            mode = "keyword"
        nearest = self._vector_candidates(query, vector, mode, limit, scope, notes) if mode != "keyword" else []
        keyword: list[tuple[int, float]] = []
        if mode in ("hybrid", "keyword"):  # beside vectors, words in half of a large index add nothing alone (#17)
            keyword = keyword_ranking(self._store, query, limit, scope, floor_alone=mode == "keyword" or not nearest)
        floor = SIMILARITY_FLOORS.get(recorded[0]) if recorded is not None else None
        found_by_words = {chunk_id for chunk_id, _ in keyword}
        nearest = above_floor(nearest, found_by_words, floor)
        words = content_words(query)
        if mode == "semantic":
            ranked = nearest
        elif mode == "keyword":
            ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, chunk_id in enumerate(chunk_id for chunk_id, _ in keyword)]
        else:
            ranked = fuse_hybrid(nearest, keyword, vector_weight(len(words)))
        rows = self._store.chunks_by_ids(chunk_id for chunk_id, _ in ranked)

        def is_thin(chunk_id: int) -> bool:
            return chunk_id in rows and thin(rows[chunk_id].text)

        if mode == "hybrid":
            terms = frozenset(self._store.stems(" ".join(words)))
            ranked = add_path_signal(
                ranked, lambda chunk_id: path_match(terms, self._terms_of_path(rows, chunk_id)) if terms else 0.0
            )
        if mode != "semantic":  # issue 25: one-line and link-list chunks rank lower (ranking.THIN_RANKS)
            ranked = demote_thin(
                ranked,
                is_thin,
                lambda chunk_id: rows[chunk_id].path if chunk_id in rows else "",
                matched=found_by_words.__contains__,
            )
            if mode == "keyword":  # its scores say the rank
                ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, (chunk_id, _) in enumerate(ranked)]
        ranked, folded = self._fold_translations(ranked, rows, query)
        ranked = diversify(ranked, lambda pair: rows[pair[0]].path if pair[0] in rows else "", PER_FILE)
        hits, dropped = self._recheck_and_collapse(ranked, rows, k, folded, query)
        return SearchResult(hits=hits, notes=notes, dropped_paths=tuple(sorted(dropped)))

    def _vector_candidates(
        self,
        query: str,
        vector: bytes | Exception | None,
        mode: str,
        limit: int,
        scope: PathFilter | None,
        notes: list[str],
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the nearest chunks; in hybrid mode a failure is a note, not an error."""
        try:
            if vector is None:  # chunks without a recorded model (_wants_vector said no): embed as the settings say
                vector = self._query_vector(query, self._store.model())
            if isinstance(vector, Exception):
                raise vector
            found = self._store.vector_search(vector, limit, scope)
        except ScreeError as exc:
            if mode == "semantic":
                raise
            notes.append(f"[{str(exc).rstrip('.')}; showing keyword results]")
            return []
        except Exception as exc:  # R-M3: a failed vector search never fails a hybrid one (issue 13)
            log.exception("vector search failed")
            if mode == "semantic":
                raise ScreeError(f"vector search failed: {type(exc).__name__}") from None
            notes.append(f"[vector search failed ({type(exc).__name__}); showing keyword results]")
            return []
        return [(chunk_id, 1.0 - distance) for chunk_id, distance in found]

    def _terms_of_path(self, rows: dict[int, StoredChunk], chunk_id: int) -> frozenset[str]:
        row = rows.get(chunk_id)
        if row is None:
            return frozenset()
        if row.path not in self._path_terms:
            stem = row.path.rsplit(".", 1)[0] if "." in row.path.rsplit("/", 1)[-1] else row.path
            self._path_terms[row.path] = frozenset(self._store.stems(stem)) - PATH_NOISE
        return self._path_terms[row.path]

    def _language_trees(self) -> LanguageTrees:
        """The index's parallel language trees, worked out again only when the number of files changed."""
        files = self._store.file_count()
        if self._trees is None or self._trees[0] != files:
            self._trees = (files, LanguageTrees.of(self._store.paths()))
        return self._trees[1]

    def _fold_translations(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: str
    ) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
        """Copies of one page (other languages, old versions: languages.LanguageTrees) give way to the copy to show
        (#11, issue 25): the one in the query's language, else the original, the current version before old ones,
        among the candidates. Its chunk takes the place of the family's first chunk ranked, with that chunk's score
        (its chunk under the same heading if it has one among the candidates, else its best), and the other copies'
        chunks go.

        Also returned: the chunk that stands for each such page -> the best-ranked folded chunk of each other copy,
        so its hit can name those copies in also= (the agent learns that they exist)."""
        trees = self._language_trees()
        folded: dict[int, list[int]] = {}
        if not trees.counts:
            return ranked, folded
        wanted = trees.query_language(query)
        pages: dict[str, list[int]] = {}  # page -> positions of its chunks in ranked
        for position, (chunk_id, _) in enumerate(ranked):
            row = rows.get(chunk_id)
            copy = trees.copy(row.path) if row is not None else None
            if copy is not None:
                pages.setdefault(copy.page, []).append(position)
        drop: set[int] = set()
        moved: dict[int, tuple[int, float]] = {}
        for positions in pages.values():
            paths = {rows[ranked[p][0]].path for p in positions}
            if len(paths) < 2:
                continue
            shown = min(paths, key=lambda path: (trees.preference(path, wanted), path))
            own = [p for p in positions if rows[ranked[p][0]].path == shown]
            first = positions[0]
            heading = rows[ranked[first][0]].heading
            stand_in = next((p for p in own if rows[ranked[p][0]].heading == heading), own[0])
            if stand_in != first:
                moved[first] = (ranked[stand_in][0], ranked[first][1])
                drop.add(stand_in)
            drop.update(p for p in positions if p not in own and p != first)
            copies: dict[str, int] = {}  # path -> its best chunk, in rank order
            for p in positions:
                if p not in own:
                    copies.setdefault(rows[ranked[p][0]].path, ranked[p][0])
            folded[ranked[stand_in][0]] = list(copies.values())
        return [moved.get(p, pair) for p, pair in enumerate(ranked) if p not in drop], folded

    def _recheck_and_collapse(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        k: int,
        folded: dict[int, list[int]],
        query: str,
    ) -> tuple[list[Hit], set[str]]:
        trees = self._language_trees()
        wanted = trees.query_language(query)
        current: dict[str, _Current | None] = {}
        dropped: set[str] = set()
        seen_texts: set[str] = set()
        hits: list[Hit] = []
        for chunk_id, score in ranked:
            row = rows.get(chunk_id)
            if row is None or row.text in seen_texts or too_little_to_show(row.text):
                continue
            if trees.counts:
                row = self._preferred_twin(row, trees, wanted, current)
            state = self._check(row.path, current)
            if state is None:
                dropped.add(row.path)
                continue
            seen_texts.add(row.text)
            translations = [rows[t] for t in folded.get(chunk_id, ())]
            hits.append(self._hit(row, score, state, current, translations))
            if len(hits) == k:
                break
        return hits, dropped

    def _preferred_twin(
        self, row: StoredChunk, trees: LanguageTrees, wanted: str | None, current: dict[str, _Current | None]
    ) -> StoredChunk:
        """Of `row` and its identical chunks in other files, the one in the copy to show (issue 25: an identical
        old version or translation was shown and the current page named only in also=): the query's language, else
        the original, the current version first; `row` itself on a tie or when the better one's file dropped out."""
        twins = [twin for twin in self._store.chunks_with_text(row.text) if twin.path != row.path]
        if not twins:
            return row
        best = min([row, *twins], key=lambda chunk: trees.preference(chunk.path, wanted))
        if best is row or trees.preference(best.path, wanted) == trees.preference(row.path, wanted):
            return row
        return best if self._check(best.path, current) is not None else row

    def _hit(
        self,
        row: StoredChunk,
        score: float,
        state: _Current,
        current: dict[str, _Current | None],
        translations: Sequence[StoredChunk] = (),
    ) -> Hit:
        """The hit for `row`; also= names its identical chunks in other files (R-M4), then the other languages'
        copies folded into it (#11), each as its best chunk's current range, each file once."""
        start, end, stale = _locate(row, state)
        also: list[str] = []
        twins = [twin for twin in self._store.chunks_with_text(row.text) if twin.path != row.path]
        twin_paths = {twin.path for twin in twins}
        others = [copy for copy in translations if copy.path not in twin_paths and copy.path != row.path]
        for other in [*twins, *others]:
            other_state = self._check(other.path, current)
            if other_state is None:
                continue
            o_start, o_end, o_stale = _locate(other, other_state)
            also.append(other.path if o_stale else f"{other.path}:{o_start}-{o_end}")
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
