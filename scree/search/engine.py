"""The search engine shared by `scree search` and the MCP tool: retrieve, fuse, re-check, remap stale hits, collapse."""

from __future__ import annotations

import stat as stat_mod
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from scree.config import Settings
from scree.content.chunking import opted_out, too_little_to_show
from scree.content.files import FileContent, read_markdown, stat_file
from scree.content.formats import NotDocs, detect, is_thin
from scree.content.ignore import IgnorePolicy
from scree.content.languages import Copy, LanguageTrees
from scree.content.posts import Posts
from scree.content.versions import names_version, query_versions, says_same
from scree.embedders.base import KEYWORD_ONLY, Embedder
from scree.embedders.factory import NEEDS_VECTORS, SEMANTIC_OFF, make_embedder, make_query_embedder
from scree.embedders.kinds import embedder_available, similarity_floor
from scree.errors import ScreeError
from scree.logs import get_logger
from scree.replies import no_markdown_note
from scree.search import DEFAULT_K, DEFAULT_MODE, MAX_K
from scree.search.hits import Hit, SearchResult
from scree.search.post_evidence import site_posts
from scree.search.query import Query, analyse, keyword_match
from scree.search.ranking import (
    COPIES_POOL_FACTOR,
    PER_FILE,
    POOL,
    POST_RANKS,
    VERSION_RANKS,
    above_floor,
    add_path_signal,
    demote,
    demote_thin,
    diversify,
    fuse_hybrid,
    fuse_keyword_lists,
    one_of_identical,
    path_match,
    vector_weight,
)
from scree.search.scope import scope_filter
from scree.search.version_evidence import copy_trees
from scree.store import FileState, IndexReader, KeywordMatch, PathFilter, StoredChunk

log = get_logger(__name__)

TREES_REFRESH_S = 10.0
PATH_NOISE = frozenset({"index", "readme", "md", "markdown", "docs", "doc"})  # path words that name no topic


@dataclass(frozen=True, slots=True)
class _Current:
    """What the re-check found for one file: None = drop it; ranges maps chunk text to its current line range."""

    ranges: dict[str, tuple[int, int]] | None  # None: file unchanged since indexing


def keyword_ranking(
    store: IndexReader,
    query: str | KeywordMatch,
    limit: int,
    within: PathFilter | None = None,
    *,
    floor_alone: bool = True,
) -> list[tuple[int, float]]:
    """(chunk id, score) of the keyword search, best first: the store's lists of each keyword index the query
    (or what it matches, query.keyword_match) reaches, as ranking.fuse_keyword_lists makes them one."""
    match = keyword_match(query) if isinstance(query, str) else query
    return fuse_keyword_lists(store.keyword_lists(match, limit, within, floor_alone=floor_alone), limit)


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
            current_version=settings.current_version,
        )

    def __init__(
        self,
        store: IndexReader,
        policy: IgnorePolicy,
        root: Path,
        max_file_bytes: int,
        embedder_factory: Callable[[], Embedder] | None,
        embedder_available: Callable[[], bool] | None = None,
        *,
        current_version: str | None = None,
    ) -> None:
        """`embedder_available` says, without building one, whether an embedder with vectors exists now: it picks
        the advice on an index built keyword-only (R-E6). `current_version` names the current version tree
        (SCREE_CURRENT_VERSION), where the site's own evidence would not (issue 32)."""
        self._current_version = current_version
        self._store = store
        self._embedder_available = embedder_available
        self._policy = policy
        self._root = root
        self._max_file_bytes = max_file_bytes
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self._path_terms: dict[str, frozenset[str]] = {}
        self._trees: tuple[int, float, LanguageTrees] | None = None  # (files counted, when, the trees then)
        self._posts: tuple[int, float, Posts] | None = None  # (files counted, when, the posts folders then)
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

    def stored_text(self, path: str) -> tuple[str, bytes, int] | None:
        """An indexed file's bytes as a shared index's writer stored them (issue 31: read_doc without a checkout);
        None in a checkout, which reads its own files as with a local index."""
        with self._store_lock:
            if self._closed or not self._store.shared:
                return None
            return self._store.stored_text(path)

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
        self, query: str, k: int = DEFAULT_K, mode: str = DEFAULT_MODE, max_k: int = MAX_K, path: str | None = None
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
        recorded = self._store.model()
        if recorded is not None and recorded[0] == KEYWORD_ONLY:  # R-E6: built with no key and no offline model
            ready = self._embedder_available is not None and self._embedder_available()
            off = NEEDS_VECTORS if ready else SEMANTIC_OFF  # a model since: the index needs a reindex, not a model
            if mode == "semantic":
                raise ScreeError(off)
            notes.append(f"[{off}]")
            mode = "keyword"
        analysed = analyse(query, self._language_trees())  # the query's words, terms and language, once (#37)
        nearest, keyword = self._candidates(analysed, vector, mode, k, scope, notes)
        floor = similarity_floor(recorded[0]) if recorded is not None else None
        found_by_words = {chunk_id for chunk_id, _ in keyword}
        nearest = above_floor(nearest, found_by_words, floor)
        words = analysed.words
        if mode == "semantic":
            ranked = nearest
        elif mode == "keyword":
            ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, chunk_id in enumerate(chunk_id for chunk_id, _ in keyword)]
        else:
            ranked = fuse_hybrid(nearest, keyword, vector_weight(len(words)))
        rows = self._store.chunks_by_ids(chunk_id for chunk_id, _ in ranked)

        def thin(chunk_id: int) -> bool:  # by the chunk's own format's rule (issue 33)
            return chunk_id in rows and is_thin(rows[chunk_id].path, rows[chunk_id].text)

        if mode == "hybrid":
            terms = frozenset(self._store.stems(" ".join(words)))
            ranked = add_path_signal(
                ranked, lambda chunk_id: path_match(terms, self._terms_of_path(rows, chunk_id)) if terms else 0.0
            )
        if mode != "semantic":  # issue 25: one-line and link-list chunks rank lower (ranking.THIN_RANKS)
            ranked = demote_thin(
                ranked,
                thin,
                lambda chunk_id: rows[chunk_id].path if chunk_id in rows else "",
                matched=found_by_words.__contains__,
            )
            if mode == "keyword":  # its scores say the rank
                ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, (chunk_id, _) in enumerate(ranked)]
        ranked, folded = self._fold_translations(ranked, rows, analysed)
        ranked = self._diversify(ranked, rows, found_by_words.__contains__ if mode == "hybrid" else None, query)
        hits, dropped = self._recheck_and_collapse(ranked, rows, k, folded, analysed)
        return SearchResult(hits=hits, notes=notes, dropped_paths=tuple(sorted(dropped)))

    @staticmethod
    def _other_version(trees: LanguageTrees, rows: dict[int, StoredChunk], chunk_id: int, named: set[str]) -> bool:
        """A chunk of a version other than the current one, or of a current page named for an older version
        (versions rule 6: upgrade notes to an old release) unless the query names that version (`named`)."""
        row = rows.get(chunk_id)
        if row is None:
            return False
        copy = trees.copy(row.path)
        if copy is not None and copy.version is not None:
            return True
        superseded = trees.versions.superseded.get(row.path)
        return superseded is not None and not names_version(named, superseded)

    def _candidates(
        self,
        query: Query,
        vector: bytes | Exception | None,
        mode: str,
        k: int,
        scope: PathFilter | None,
        notes: list[str],
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The vector and keyword candidates, max(POOL, k) of each: on a site with copies of its pages (versions,
        translations) chunks of identical text count once (ranking.COPIES_POOL_FACTOR, issue 32)."""
        pool = max(POOL, k)
        copies = self._language_trees()
        limit = max(POOL * COPIES_POOL_FACTOR, k) if copies.active else pool
        nearest = self._vector_candidates(query.text, vector, mode, limit, scope, notes) if mode != "keyword" else []
        keyword: list[tuple[int, float]] = []
        if mode in ("hybrid", "keyword"):  # beside vectors, words in half of a large index add nothing alone (#17)
            keyword = keyword_ranking(
                self._store, query.match, limit, scope, floor_alone=mode == "keyword" or not nearest
            )
        if copies.active:
            nearest, keyword = self._one_of_identical(nearest, keyword, copies, query.language, pool)
        return nearest, keyword

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
        """The index's translations and version trees (issue 32: from its paths, the site's config and its pages'
        text), worked out again when the number of files changed, at most every TREES_REFRESH_S while it keeps
        changing (a first sync: the trees of a large versioned site take a second or two)."""
        files = self._store.file_count()
        now = time.monotonic()
        if self._trees is None or (self._trees[0] != files and now - self._trees[1] >= TREES_REFRESH_S):
            self._trees = (files, now, copy_trees(self._store, self._root, self._current_version))
        return self._trees[2]

    def _site_posts(self) -> Posts:
        """The index's posts folders beside a docs tree (scree.content.posts), worked out again as _language_trees
        works the trees out."""
        files = self._store.file_count()
        now = time.monotonic()
        if self._posts is None or (self._posts[0] != files and now - self._posts[1] >= TREES_REFRESH_S):
            self._posts = (files, now, site_posts(self._store, self._root))
        return self._posts[2]

    def _fold_translations(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query
    ) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
        """Copies of one page (other languages, other versions: languages.LanguageTrees) give way to the copy to show
        (#11, issues 25 and 32): the one in the query's language, else the original, the current version before
        others, among the candidates.

        A translation's chunks go, and the shown copy's chunk (under the same heading as the family's first chunk
        ranked, else its best) takes the family's first place with that chunk's score. A chunk of another version
        gives way only to a more preferred copy's chunk that says the same thing (versions.SAME_SAYING, and every
        query word it holds): that chunk takes the better of the two places. A chunk that says what no better copy
        does (a removed option) stays, to be shown with its version marked and moved down (ranking.demote).

        Also returned: the chunk that stands for others -> the best-ranked folded chunk of each other copy, so its
        hit can name those copies in also= (the agent learns that they exist)."""
        trees = self._language_trees()
        folded: dict[int, list[int]] = {}
        if not trees.active:
            return ranked, folded
        wanted = query.language
        words = query.folded_words
        copies: dict[int, Copy] = {}
        pages: dict[str, list[int]] = {}  # page -> positions of its chunks in ranked
        for position, (chunk_id, _) in enumerate(ranked):
            row = rows.get(chunk_id)
            copy = trees.copy(row.path) if row is not None else None
            if copy is not None:
                copies[position] = copy
                pages.setdefault(copy.page, []).append(position)
        stands_for: dict[int, int] = {}  # position -> the position of the chunk shown in its place
        for positions in pages.values():
            stands_for.update(self._fold_family(positions, ranked, rows, copies, trees, wanted, words))
        ranked = self._current_stand_ins(ranked, rows, copies, stands_for, trees, words)
        if stands_for:
            ranked, folded = _regroup(ranked, stands_for, lambda chunk_id: rows[chunk_id].path)
        return ranked, folded

    def _diversify(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        matched: Callable[[int], bool] | None,
        query: str = "",
    ) -> list[tuple[int, float]]:
        """Each file's best chunk first (ranking.diversify); then, on a site with version trees, other versions'
        chunks VERSION_RANKS places down (issue 32): after that many current pages of similar rank, since among the
        files' best chunks a place is a page; and on a docs site with a blog (scree.content.posts), posts POST_RANKS
        places down, past pages the query's words found (`matched`, in hybrid mode) only: a post that alone
        answers stays among the first hits."""
        ranked = diversify(ranked, lambda pair: rows[pair[0]].path if pair[0] in rows else "", PER_FILE)
        trees = self._language_trees()
        if trees.versions.families:
            named = query_versions(query)
            ranked = demote(ranked, lambda chunk_id: self._other_version(trees, rows, chunk_id, named), VERSION_RANKS)
        posts = self._site_posts()
        if posts.folders:
            ranked = demote(ranked, lambda item: item in rows and posts.is_post(rows[item].path), POST_RANKS, matched)
        return ranked

    def _one_of_identical(
        self,
        nearest: list[tuple[int, float]],
        keyword: list[tuple[int, float]],
        trees: LanguageTrees,
        wanted: str | None,
        pool: int,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """Each list with chunks of identical text (a page copied unchanged into old versions or left untranslated)
        as one candidate (ranking.one_of_identical): the copy to show, at the best place of them."""
        rows = self._store.chunks_by_ids(chunk_id for chunk_id, _ in [*nearest, *keyword])

        def text_of(chunk_id: int) -> str | int:
            return rows[chunk_id].text if chunk_id in rows else chunk_id

        def preference(chunk_id: int) -> tuple[int, ...]:
            return trees.preference(rows[chunk_id].path, wanted) if chunk_id in rows else (9,)

        return (
            one_of_identical(nearest, text_of, preference, pool),
            one_of_identical(keyword, text_of, preference, pool),
        )

    def _current_stand_ins(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        copies: dict[int, Copy],
        stands_for: dict[int, int],
        trees: LanguageTrees,
        words: set[str],
    ) -> list[tuple[int, float]]:
        """Issue 32: an old version's chunk whose current page was not among the candidates, or not with the chunk
        that says the same thing, gives way to that chunk all the same (the current page's chunk under the same
        heading, else any, that says_same): it is looked up in the index, added to `ranked` and `rows` and named in
        `stands_for`. Returns the longer `ranked`."""
        position_of = {chunk_id: position for position, (chunk_id, _) in enumerate(ranked)}
        pages: dict[str, list[StoredChunk]] = {}
        out = list(ranked)
        for position, copy in copies.items():
            if copy.version is None or position in stands_for:
                continue
            row = rows[ranked[position][0]]
            version = trees.versions.copy(row.path)
            counterpart = version.counterpart if version is not None else None
            if counterpart is None:
                continue
            if counterpart not in pages:
                pages[counterpart] = self._store.chunks_for_path(counterpart)
            chunks = sorted(pages[counterpart], key=lambda chunk: chunk.heading != row.heading)
            same = (chunk for chunk in chunks if says_same(row.text, chunk.text, words, chunk.heading == row.heading))
            match = next(same, None)
            if match is None:
                continue
            if match.id not in position_of:
                position_of[match.id] = len(out)
                out.append((match.id, ranked[-1][1]))
                rows[match.id] = match
            stands_for[position] = position_of[match.id]
        return out

    @staticmethod
    def _fold_family(
        positions: list[int],
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        copies: dict[int, Copy],
        trees: LanguageTrees,
        wanted: str | None,
        words: set[str],
    ) -> dict[int, int]:
        """One page's chunks among the candidates: position -> the position of the chunk shown in its place."""

        def path(position: int) -> str:
            return rows[ranked[position][0]].path

        paths = {path(p) for p in positions}
        if len(paths) < 2:
            return {}
        rank = {each: trees.preference(each, wanted) for each in paths}
        shown = min(paths, key=lambda each: (rank[each], each))
        language = copies[next(p for p in positions if path(p) == shown)].language
        own = [p for p in positions if path(p) == shown]
        heading = rows[ranked[positions[0]][0]].heading
        stand_in = next((p for p in own if rows[ranked[p][0]].heading == heading), own[0])
        out: dict[int, int] = {}
        for p in positions:
            if path(p) == shown:
                continue
            if copies[p].language != language:  # a translation: as issue 25 folds it
                out[p] = stand_in
                continue
            better = sorted(
                (q for q in positions if rank[path(q)] < rank[path(p)] and copies[q].language == language),
                key=lambda q: (rank[path(q)], q),
            )
            mine = rows[ranked[p][0]]
            match = next(
                (
                    q
                    for q in better
                    if says_same(mine.text, rows[ranked[q][0]].text, words, rows[ranked[q][0]].heading == mine.heading)
                ),
                None,
            )
            if match is not None:
                out[p] = match
        return out

    def _recheck_and_collapse(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        k: int,
        folded: dict[int, list[int]],
        query: Query,
    ) -> tuple[list[Hit], set[str]]:
        trees = self._language_trees()
        wanted = query.language
        current: dict[str, _Current | None] = {}
        dropped: set[str] = set()
        seen_texts: set[str] = set()
        line_chunks: dict[str, dict[int, list[int]]] = {}  # path -> line -> ids of its single-line chunks
        hits: list[Hit] = []
        for chunk_id, score in ranked:
            row = rows.get(chunk_id)
            if row is None or row.text in seen_texts or too_little_to_show(row.text):
                continue
            if trees.active:
                row = self._preferred_twin(row, trees, wanted, current)
            state = self._check(row.path, current)
            if state is None:
                dropped.add(row.path)
                continue
            seen_texts.add(row.text)
            translations = [rows[t] for t in folded.get(chunk_id, ())]
            hit = self._hit(row, score, state, current, translations)
            if not hit.stale and row.start_line == row.end_line:
                hit = replace(hit, part=self._part(row, line_chunks))
            hits.append(hit)
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
        and versions' copies folded into it (#11), each as its best chunk's current range, each file once. A chunk
        of a version other than the current one says which (`version`), and names its current page in also= when
        that page is not among them (issue 32)."""
        start, end, stale = _locate(row, state)
        trees = self._language_trees()
        copy = trees.copy(row.path) if trees.active else None
        version = copy.version_note if copy is not None else None
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
        counterpart = trees.versions.copy(row.path)
        if version is not None and counterpart is not None and counterpart.counterpart is not None:
            named = counterpart.counterpart
            if not any(entry.rsplit(":", 1)[0] == named for entry in also) and self._check(named, current) is not None:
                also.insert(0, named)
        return Hit(
            path=row.path,
            start=None if stale else start,
            end=None if stale else end,
            heading=row.heading,
            score=score,
            text=row.text,
            stale=stale,
            also=tuple(also),
            version=version,
        )

    def _part(self, row: StoredChunk, line_chunks: dict[str, dict[int, list[int]]]) -> tuple[int, int] | None:
        """Issue 34: (n, of) when `row` is one of the parts of a line too long for one chunk, which all share its
        line number: the n-th of its line's chunks, as chunking.line_parts numbers them. Each file's chunks are
        read once per search (`line_chunks`)."""
        if row.path not in line_chunks:
            lines: dict[int, list[int]] = {}
            for chunk in self._store.chunks_for_path(row.path):
                if chunk.start_line == chunk.end_line:
                    lines.setdefault(chunk.start_line, []).append(chunk.id)
            line_chunks[row.path] = lines
        same_line = line_chunks[row.path].get(row.start_line, [])
        if len(same_line) < 2 or row.id not in same_line:
            return None
        return same_line.index(row.id) + 1, len(same_line)

    def _check(self, path: str, cache: dict[str, _Current | None]) -> _Current | None:
        """R-M2: is `path` still indexable, and has it changed since it was indexed? Cached per query."""
        if path not in cache:
            cache[path] = self._recheck(path, self._store.file_state(path))
        return cache[path]

    def _recheck(self, path: str, indexed: FileState | None) -> _Current | None:
        if self._policy(path) is not None:
            return None
        st = stat_file(self._root, path)
        if st is None and indexed is not None and self._store.shared:
            # issue 31: this folder is no checkout of the collection (decided once per reader, as the writer lock
            # decides it), so the file's absence says nothing: the writer's decision stands. In a checkout it is gone.
            return _Current(ranges=None)
        if st is None or not stat_mod.S_ISREG(st.st_mode):
            return None
        if indexed is not None and st.st_mtime_ns == indexed.mtime_ns and st.st_size == indexed.size:
            return _Current(ranges=None)
        content = read_markdown(self._root, path, self._max_file_bytes)
        if not isinstance(content, FileContent) or opted_out(content.text):
            return None
        if indexed is not None and content.sha256 == indexed.sha256:
            return _Current(ranges=None)
        row = detect(path, content.text)  # issue 33: cut by the file's own format, as the sync cut it
        if isinstance(row, NotDocs):
            return None
        return _Current(ranges={c.text: (c.start_line, c.end_line) for c in row.chunks(content.text)})


def _regroup(
    ranked: list[tuple[int, float]], stands_for: dict[int, int], path_of: Callable[[int], str]
) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
    """`ranked` with each chunk's place taken by the chunk shown for it (`stands_for`, by position, followed to its
    end), at the best place of those it stands for; and the shown chunk -> the best chunk of each other file it
    stands for, in rank order."""

    def top(position: int) -> int:
        while position in stands_for:
            position = stands_for[position]
        return position

    out: list[tuple[int, float]] = []
    members: dict[int, list[int]] = {}
    for position, (_, score) in enumerate(ranked):
        shown = top(position)
        if shown not in members:
            out.append((ranked[shown][0], score))
        members.setdefault(shown, []).append(position)
    folded: dict[int, list[int]] = {}
    for shown, group in members.items():
        chunk_id = ranked[shown][0]
        others: dict[str, int] = {}  # path -> its best chunk, in rank order
        for position in group:
            path = path_of(ranked[position][0])
            if position != shown and path != path_of(chunk_id):
                others.setdefault(path, ranked[position][0])
        if others:
            folded[chunk_id] = list(others.values())
    return out, folded


def _locate(row: StoredChunk, state: _Current) -> tuple[int, int, bool]:
    """R-M4: the chunk's line range now; stale when its text is no longer in the file."""
    if state.ranges is None:
        return row.start_line, row.end_line, False
    found = state.ranges.get(row.text)
    if found is None:
        return 0, 0, True
    return found[0], found[1], False
