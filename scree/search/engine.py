"""The search engine shared by `scree search` and the MCP tool: retrieve, fuse, re-check, remap stale hits, collapse."""

from __future__ import annotations

import stat as stat_mod
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Generic, TypeVar

from scree.config import Settings
from scree.content.chunking import HEADING_SEPARATOR, opted_out
from scree.content.docs_map import title_of
from scree.content.files import FileContent, read_markdown, stat_file
from scree.content.fixtures import (
    SuitePages,
    asks_about_tests,
    asks_about_the_suite,
)
from scree.content.formats import NotDocs, detect, is_thin, too_little
from scree.content.ignore import IgnorePolicy
from scree.content.languages import ORIGINAL, LanguageTrees
from scree.content.posts import Posts, asks_about_changes, asks_what_changed, is_changelog, titled_changelog
from scree.content.variants import Variants, holds
from scree.content.versions import (
    VersionTrees,
    heading_names_release,
    heading_releases,
    names_each,
    version_key,
    versions_in_name,
)
from scree.embedders.base import KEYWORD_ONLY, Embedder
from scree.embedders.factory import NEEDS_VECTORS, SEMANTIC_OFF, make_embedder, make_query_embedder
from scree.embedders.kinds import cjk_vector_weight, embedder_available, similarity_floor
from scree.errors import ScreeError
from scree.logs import get_logger
from scree.replies import no_markdown_note
from scree.search import DEFAULT_K, DEFAULT_MODE, MAX_K
from scree.search.definition import (
    KIND_SAMPLE,
    OPENING_WINDOW,
    SUBJECT_SLACK,
    TASK_VERBS,
    asked_subject,
    asked_topic,
    in_order,
    kind_words,
    names_subject,
    page_topic,
    said_as_phrase,
)
from scree.search.faq import is_question, is_question_page
from scree.search.hits import Hit, SearchResult, fold_translations, newest_first, other_version, preferred_twin
from scree.search.literals import defined_share, literal_share, literals
from scree.search.pointers import (
    POINTER_WINDOW,
    REFERRAL_WINDOW,
    PageKeys,
    Reference,
    anchors,
    fragment,
    link_targets,
    links,
    points_elsewhere,
    referral,
    same_page,
)
from scree.search.post_evidence import site_posts
from scree.search.proposals import asks_about_design, is_proposal
from scree.search.query import Query, analyse, content_words, keyword_match, words_of
from scree.search.ranking import (
    COPIES_POOL_FACTOR,
    DEFINITION_WEIGHT,
    FAQ_RANKS,
    FAQ_WINDOW,
    LITERAL_WEIGHT,
    PATH_WEIGHT,
    PER_FILE,
    POOL,
    POST_RANKS,
    PROPOSAL_RANKS,
    RANGE_WEIGHT,
    RELEASE_WEIGHT,
    VARIANT_RANKS,
    VARIANT_WEIGHT,
    VERSION_RANKS,
    above_floor,
    add_signal,
    after_others,
    demote,
    demote_thin,
    diversify,
    first_of,
    fuse_hybrid,
    fuse_keyword_lists,
    give_way,
    one_of_identical,
    path_match,
    stand_ins,
    vector_weight,
)
from scree.search.scope import scope_filter
from scree.search.version_evidence import copy_trees, site_variants
from scree.store import FileState, IndexReader, KeywordMatch, PathFilter, StoredChunk

log = get_logger(__name__)

TREES_REFRESH_S = 10.0
T = TypeVar("T")
PREFETCH_FACTOR = 2  # the likely hits: the first k x this candidates, their files' states read in one query
PATH_NOISE = frozenset({"index", "readme", "md", "markdown", "docs", "doc"})  # path words that name no topic
STATED_TERMS = 2  # a section heading saying what a query says is a signal from two terms on ("Installation" is not)


class _FromFiles(Generic[T]):
    """A value worked out from the index's files, kept until their number changes, and worked out again at most
    every TREES_REFRESH_S while it keeps changing (a first sync adds files all the time)."""

    def __init__(self) -> None:
        self._held: tuple[int, float, T] | None = None  # (files counted, when, the value then)

    def get(self, files: int, make: Callable[[], T]) -> T:
        now = time.monotonic()
        if self._held is None or (self._held[0] != files and now - self._held[1] >= TREES_REFRESH_S):
            self._held = (files, now, make())
        return self._held[2]


@dataclass(slots=True)
class _Lookups:
    """What one search looks up in the index and the folder, each once: the keyword index's terms of the query's
    words and the variant folders it names (the ranking rules' several asks), and for the FAQ rule and the hits the
    index's state of each file, each file's re-check (R-M2), the chunks holding each text (R-M4: a round trip each on
    PostgreSQL)."""

    terms: frozenset[str] | None = None
    variants_named: frozenset[str] | None = None
    indexed: dict[str, FileState | None] = field(default_factory=dict)
    current: dict[str, _Current | None] = field(default_factory=dict)
    same_text: dict[str, list[StoredChunk]] = field(default_factory=dict)


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
        self._task_terms: frozenset[str] | None = None  # the terms of TASK_VERBS, looked up once (_task_verb_terms)
        # path -> (indexed sha256, a page of questions, a design proposal)
        self._page_shapes: dict[str, tuple[str, bool, bool]] = {}
        self._trees: _FromFiles[LanguageTrees] = _FromFiles()
        self._posts: _FromFiles[Posts] = _FromFiles()
        self._variants: _FromFiles[Variants] = _FromFiles()
        self._pages: _FromFiles[PageKeys] = _FromFiles()
        self._tests: _FromFiles[SuitePages] = _FromFiles()
        # folder -> its files, and folder -> its titles' kind words (_kinds_of), worked out per folder as asked
        self._kinds: _FromFiles[tuple[dict[str, list[str]], dict[str, frozenset[str]]]] = _FromFiles()
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
        looked = _Lookups()  # what the ranking rules, the FAQ rule and the hits look up, each once
        nearest, keyword = self._candidates(analysed, vector, mode, k, scope, notes)
        floor = similarity_floor(recorded[0]) if recorded is not None else None
        found_by_words = {chunk_id for chunk_id, _ in keyword}
        nearest = above_floor(nearest, found_by_words, floor)
        if mode == "semantic":
            ranked = nearest
        elif mode == "keyword":
            ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, chunk_id in enumerate(chunk_id for chunk_id, _ in keyword)]
        else:
            ranked = fuse_hybrid(nearest, keyword, _vector_weight(analysed, recorded))
        rows = self._store.chunks_by_ids(chunk_id for chunk_id, _ in ranked)

        def thin(chunk_id: int) -> bool:  # by the chunk's own format's rule (issue 33)
            return chunk_id in rows and is_thin(rows[chunk_id].path, rows[chunk_id].text)

        if mode == "hybrid":
            ranked = self._signals(ranked, rows, analysed, looked)
        if mode != "semantic":  # issue 25: one-line and link-list chunks rank lower (ranking.THIN_RANKS)
            ranked = self._pointed(ranked, rows)  # "See [configure languages][].": that page first
            if mode == "hybrid":  # the section the first hits link to by the query's words
                ranked = self._referred(ranked, rows, analysed, looked)
            ranked = demote_thin(
                ranked,
                thin,
                lambda chunk_id: rows[chunk_id].path if chunk_id in rows else "",
                matched=found_by_words.__contains__,
            )
            if mode == "keyword":  # its scores say the rank
                ranked = [(chunk_id, 1.0 / (rank + 1)) for rank, (chunk_id, _) in enumerate(ranked)]
        ranked, asked, removed = self._page_sections(ranked, rows, analysed, looked)
        trees = self._language_trees()  # copies of one page give way to the copy to show (hits.fold_translations)
        ranked, folded = fold_translations(ranked, rows, trees, analysed, self._store.chunks_for_path)
        matched = found_by_words.__contains__ if mode == "hybrid" else None
        ranked = self._diversify(ranked, rows, matched, analysed, looked, asked, removed)
        hits, dropped = self._recheck_and_collapse(ranked, rows, k, folded, analysed, looked)
        return SearchResult(hits=hits, notes=notes, dropped_paths=tuple(sorted(dropped)))

    def _page_sections(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query, looked: _Lookups
    ) -> tuple[list[tuple[int, float]], set[int], set[str]]:
        """Which chunk stands for a page, where its best one is not the one to show: for a query naming no release,
        not a section headed by an older release than the newest its page's candidates are (ranking.give_way); for
        one asking what something is, the opening of the page titled for it (scree.search.definition); for any
        other, a section whose trail names the whole question (_named_sections). Then the
        sections whose own heading asks the query's question come first, those of pages titled by a what-is
        question's subject before them and those headed by the subject alone after them; the asking ones are
        returned too, as no FAQ rule moves them down, and so are the pages of other versions titled for the subject
        or the topic where no current page is (_removed), which _diversify leaves in place."""
        if not query.versions:  # "How do I upgrade Contour?": not its "Upgrading Contour 1.0.0 to 1.0.1" section
            older = _older_sections(rows, ranked)
            if older:
                ranked = give_way(
                    ranked, older.__contains__, lambda chunk_id: rows[chunk_id].path if chunk_id in rows else ""
                )
        subject = asked_subject(query.text)
        exact: list[int] = []
        removed: set[str] = set()
        if subject is not None:  # "What is a CloneSet?": the CloneSet page's opening
            ranked, exact = self._openings(ranked, rows, subject)
            removed = self._removed(exact, ranked, rows, query, subject)
        else:  # "How do I configure CORS?": the CORS page's opening, not its last lines, and that page first
            topic = asked_topic(query.words)
            if topic is not None:
                ignored = self._task_verb_terms()
                ranked, exact = self._openings(ranked, rows, topic, slack=0, ignored=ignored)
                removed = self._removed(exact, ranked, rows, query, topic, ignored)
                exact = self._after_landings(exact, ranked, rows)
            ranked = self._named_sections(ranked, rows, query, looked)
            exact += [chunk_id for chunk_id in self._stating(ranked, rows, query, looked) if chunk_id not in exact]
        asked = self._asking(ranked, rows, query, subject)
        headed = self._headed(ranked, rows, subject, exact + asked) if subject is not None else []
        return first_of(ranked, exact + asked + headed), set(asked), removed

    def _removed(
        self,
        titled: list[int],
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        query: Query,
        subject: str,
        ignored: frozenset[str] = frozenset(),
    ) -> set[str]:
        """The pages (LanguageTrees.copy's page) of the chunks standing for pages titled for what the query asks
        about (`titled`, titled by the `subject`'s terms) when each is another version's and none of the first
        OPENING_WINDOW current pages among the candidates has a title naming it (definition.names_subject, both
        read without the `ignored` terms): the thing asked about was removed or renamed. "What does pnpm dlx do?":
        pnpm 11's docs call it pnx, and only 10.x and older have a page titled "pnpm dlx", which says more of it than
        any current page; for "How do I install pnpm?", 4.x's page "pnpm install" is no such page beside the current
        "Installation"."""
        trees = self._language_trees()
        if not titled or not trees.versions.families:
            return set()
        named = query.versions
        if any(not other_version(trees, rows, chunk_id, named) for chunk_id in titled):
            return set()
        current: dict[str, str] = {}  # the first current pages' paths -> their titles
        for chunk_id, _ in ranked:
            row = rows.get(chunk_id)
            if row is None or row.path in current or other_version(trees, rows, chunk_id, named):
                continue
            current[row.path] = title_of([row.heading])
            if len(current) == OPENING_WINDOW:
                break
        asked = self._terms(subject) - ignored  # read only here: most queries have no such page to keep
        titles = self._terms_of(current.values())
        if any(names_subject(asked, titles[title] - ignored) for title in current.values()):
            return set()
        return {_page_of(trees, rows[chunk_id]) for chunk_id in titled if chunk_id in rows}

    def _stating(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query, looked: _Lookups
    ) -> list[int]:
        """Among the candidates of the first OPENING_WINDOW pages, in rank order, the sections whose own heading says
        what the query says, by the terms of its words, STATED_TERMS of them at least: React's "useState > Usage >
        Updating state based on the previous state" for "How do I update state based on the previous state?", which
        a page that scored its code-heavy chunks higher had kept second; or what it says without its task's verb,
        as the query phrases it (Vitest's `coverage.thresholds` for "How do I set coverage thresholds?", not
        Starlight's `Page Sidebar` for "How do I add a page to the sidebar?"). Thin ones aside."""
        wanted = self._query_terms(query, looked)
        if len(wanted) < STATED_TERMS:
            return []
        topic = wanted - self._task_verb_terms()  # "How do I set coverage thresholds?": its topic's terms
        sections = {
            chunk_id: _last_heading(rows[chunk_id].heading)
            for chunks in _first_pages(ranked, rows).values()
            for chunk_id in chunks
            if HEADING_SEPARATOR in rows[chunk_id].heading
        }
        terms = self._terms_of(sections.values())
        topical = {heading for heading in sections.values() if terms[heading] == topic}
        phrased = self._phrased(topical, query.text, topic) if topical and len(topic) >= STATED_TERMS else set()
        return [
            chunk_id
            for chunk_id, heading in sections.items()
            if (terms[heading] == wanted or heading in phrased)
            and not is_thin(rows[chunk_id].path, rows[chunk_id].text)
        ]

    def _phrased(self, headings: Collection[str], query: str, topic: frozenset[str]) -> set[str]:
        """The `headings` that say the query's `topic` as the query words it (definition.said_as_phrase)."""
        said = self._word_terms([query, *headings])
        return {heading for heading in headings if said_as_phrase(said[heading], said[query], topic)}

    def _word_terms(self, texts: Iterable[str]) -> dict[str, list[str]]:
        """Each text's words in order as the keyword index's term of each (a word with none, a stopword to
        PostgreSQL, stands as itself), in one query: what word order is compared by."""
        words = {text: words_of(text) for text in texts}
        stems = self._store.stems_of({word for said in words.values() for word in said})
        return {text: [stems[word][0] if stems.get(word) else word for word in said] for text, said in words.items()}

    def _headed(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], subject: str, placed: Collection[int]
    ) -> list[int]:
        """Among the candidates of the first OPENING_WINDOW pages, in rank order, the sections headed by a what-is
        question's subject alone ("Project structure and files > The lockfile" for "What is the lockfile?"), thin
        ones aside."""
        pages: set[str] = set()
        sections: dict[int, str] = {}
        for chunk_id, _ in ranked:
            row = rows.get(chunk_id)
            if row is None:
                continue
            if row.path not in pages and len(pages) == OPENING_WINDOW:
                break
            pages.add(row.path)
            if chunk_id not in placed and HEADING_SEPARATOR in row.heading:
                sections[chunk_id] = _last_heading(row.heading)
        terms = self._terms_of([subject, *sections.values()])
        if not terms[subject]:
            return []
        return [
            chunk_id
            for chunk_id, heading in sections.items()
            if terms[heading] == terms[subject] and not is_thin(rows[chunk_id].path, rows[chunk_id].text)
        ]

    def _named_sections(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query, looked: _Lookups
    ) -> list[tuple[int, float]]:
        """`ranked` with, for each of the first OPENING_WINDOW pages whose best chunk's trail does not hold all the
        query's terms, its first candidate section whose trail does and whose own heading says nothing else standing
        for it: Laravel's "Database: Migrations > Running Migrations" for "How do I run database migrations?", which
        its "Setting the Migration Connection" had answered. Thin sections aside; no page moves."""
        wanted = self._query_terms(query, looked)
        if not wanted:
            return ranked
        by_page = _first_pages(ranked, rows)
        trails = {chunk_id: rows[chunk_id].heading for chunks in by_page.values() for chunk_id in chunks}
        terms = self._terms_of([*trails.values(), *(_last_heading(trail) for trail in trails.values())])
        stands: dict[int, int] = {}
        for best, *others in by_page.values():
            if wanted <= terms[trails[best]]:
                continue
            named = next(
                (
                    chunk_id
                    for chunk_id in others
                    if wanted <= terms[trails[chunk_id]]
                    and terms[_last_heading(trails[chunk_id])]
                    and terms[_last_heading(trails[chunk_id])] <= wanted
                    and not is_thin(rows[chunk_id].path, rows[chunk_id].text)
                ),
                None,
            )
            if named is not None:
                stands[best] = named
        return stand_ins(ranked, stands) if stands else ranked

    def _asking(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query, subject: str | None
    ) -> list[int]:
        """The candidates, in rank order, whose own heading asks what the query asks, by the terms of its words (of a
        what-is question, its subject's): "FAQ > What is gRPC?" and "Introduction > What is Vue?" for "What is
        gRPC?" and "What is Vue?", which a page's other chunks, or a FAQ's place after the docs pages, had kept off
        the first hits. Thin ones are left to the pointer and thin rules."""
        questions = {
            chunk_id: _last_heading(rows[chunk_id].heading)
            for chunk_id, _ in ranked
            if chunk_id in rows and is_question(_last_heading(rows[chunk_id].heading))
        }
        if not questions:
            return []
        asked = subject if subject is not None else query.text
        texts = {
            chunk_id: asked_subject(heading) if subject is not None else heading
            for chunk_id, heading in questions.items()
        }
        terms = self._terms_of([asked, *(text for text in texts.values() if text is not None)])
        if not terms[asked]:
            return []
        return [
            chunk_id
            for chunk_id, text in texts.items()
            if text is not None
            and terms[text] == terms[asked]
            and not is_thin(rows[chunk_id].path, rows[chunk_id].text)
        ]

    def _openings(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        subject: str,
        slack: int = SUBJECT_SLACK,
        ignored: frozenset[str] = frozenset(),
    ) -> tuple[list[tuple[int, float]], list[int]]:
        """`ranked` with the opening chunk of each of the first OPENING_WINDOW pages titled for the `subject` a query
        asks to be defined (or, with no `slack`, the topic a how-to question asks about) standing for the page's best
        chunk, and the chunks standing for the pages titled by the subject's words alone, in rank order, to come
        first (scree.search.definition); `rows` gains the openings. Titles and headings are compared without the
        `ignored` terms (a task's verbs)."""
        terms = self._terms(subject)
        if not terms:
            return ranked, []
        # the first OPENING_WINDOW pages' best chunks
        firsts = {path: (chunks[0], rows[chunks[0]]) for path, chunks in _first_pages(ranked, rows).items()}
        page_titles = {path: title_of([row.heading]) for path, (_, row) in firsts.items()}  # as their trails open
        if ignored:  # a how-to question: a page whose chunks' trails open with no title naming it is read no further
            titles = {path: page_topic(page_titles[path], self._kinds_of(path)) for path in firsts}
            tops = self._terms_of(titles.values())
            firsts = {
                path: first
                for path, first in firsts.items()
                if names_subject(terms, tops[titles[path]] - ignored, slack)
            }
        openings: dict[int, int] = {}
        exact: dict[int, str] = {}  # the chunks standing for the pages titled by the subject alone, in rank order
        for path, (chunk_id, row) in firsts.items():
            title, opening = self._opening(row, terms, slack, ignored)
            if opening is not None:
                rows[opening.id] = opening
                openings[chunk_id] = opening.id
            if title == terms:
                exact[opening.id if opening is not None else chunk_id] = page_titles[path]
        return (stand_ins(ranked, openings) if openings else ranked), self._in_subject_order(exact, subject)

    def _in_subject_order(self, titled: dict[int, str], subject: str) -> list[int]:
        """The chunks of pages `titled` by the subject's words, those whose title says them in the subject's order
        first (definition.in_order: "Calling Rust from the Frontend" before "Calling the Frontend from Rust" for
        "How do I call Rust from the frontend?"), each group in rank order."""
        if len(titled) < 2:
            return list(titled)
        said = self._word_terms([subject, *titled.values()])
        return sorted(titled, key=lambda chunk_id: not in_order(said[titled[chunk_id]], said[subject]))

    def _opening(
        self, best: StoredChunk, subject: frozenset[str], slack: int, ignored: frozenset[str]
    ) -> tuple[frozenset[str], StoredChunk | None]:
        """The terms of `best`'s page's title, and, when that title names `subject` and `best`'s own heading is not
        the subject ("## What is a CloneSet?" answers as well as the opening), the page's first section with
        substance headed by the subject alone (Karmada's generated `## PropagationPolicy` under the title
        "PropagationPolicy v1alpha1", after lines of `apiVersion` and comments; not "### Operations on Failed
        CloneSet", nor "## CloneSet options"), else its first chunk with substance. The headings' terms are read in
        two queries, not one per section."""
        chunks = self._store.chunks_for_path(best.path)
        title_text = page_topic(title_of([chunk.heading for chunk in chunks]), self._kinds_of(best.path))
        terms = self._terms_of([title_text, _last_heading(best.heading)])
        title = terms[title_text] - ignored
        if terms[_last_heading(best.heading)] - ignored == subject or not names_subject(subject, title, slack):
            return title, None
        shown = _with_substance(chunks)
        sections = [chunk for chunk in shown if HEADING_SEPARATOR in chunk.heading]  # not the title's own text
        terms = self._terms_of(_last_heading(chunk.heading) for chunk in sections)
        first = shown[0] if shown else None
        opening = next((chunk for chunk in sections if terms[_last_heading(chunk.heading)] - ignored == subject), first)
        return title, opening if opening is not None and opening.id != best.id else None

    def _kinds_of(self, path: str) -> frozenset[str]:
        """The words that the titles of `path`'s folder's pages end in to say what kind of page each is ("CORS
        Middleware": definition.kind_words), read from the first KIND_SAMPLE of them once per folder while the
        index's files stay the same."""
        folder = path.rpartition("/")[0]
        folders, known = self._kinds.get(self._store.file_count(), lambda: (self._pages_by_folder(), {}))
        if folder not in known:
            siblings = folders.get(folder, [])
            titles = [
                title_of([chunk.heading for chunk in self._store.chunks_for_path(other)])
                for other in siblings[:KIND_SAMPLE]
            ]
            known[folder] = kind_words(titles)
        return known[folder]

    def _pages_by_folder(self) -> dict[str, list[str]]:
        """Each folder's indexed files, sorted."""
        folders: dict[str, list[str]] = {}
        for path in sorted(self._store.paths()):
            folders.setdefault(path.rpartition("/")[0], []).append(path)
        return folders

    def _pointed(self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk]) -> list[tuple[int, float]]:
        """`ranked` with the page each thin chunk among the first POINTER_WINDOW sends the reader to ("See [configure
        languages][].") standing just before it, when its links lead to exactly one other indexed file
        (scree.search.pointers): that page's first chunk with substance, where the link lands, unless the page ranks
        above its pointer already; `rows` gains the chunks it adds."""
        stands: dict[int, int] = {}
        for position, (chunk_id, _) in enumerate(ranked[:POINTER_WINDOW]):
            row = rows.get(chunk_id)
            if row is None or not _is_pointer(row):
                continue
            target = self._led_to(row)
            if target is None or any(rows[c].path == target for c, _ in ranked[:position] if c in rows):
                continue
            landing = next(iter(_with_substance(self._store.chunks_for_path(target))), None)
            if landing is not None and landing.id not in stands.values():
                rows[landing.id] = landing
                stands[chunk_id] = landing.id
        return stand_ins(ranked, stands) if stands else ranked

    def _referred(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query, looked: _Lookups
    ) -> list[tuple[int, float]]:
        """`ranked` with the section that REFERRERS or more of the first REFERRAL_WINDOW candidates' files link to
        by the query's own words standing just before the first of them (scree.search.pointers.referral), unless its
        page ranks above that already: the section the link's anchor names, else the page's first section headed by
        the link's words, else its opening."""
        wanted = self._query_terms(query, looked)
        if not wanted:
            return ranked
        linked = [
            (position, rows[chunk_id].path, text, target)
            for position, (chunk_id, _) in enumerate(ranked[:REFERRAL_WINDOW])
            if chunk_id in rows and "](" in rows[chunk_id].text  # inline links: a reference's definition is elsewhere
            for text, target in links(rows[chunk_id].text)
        ]
        said = self._terms_of(text for _, _, text, _ in linked)
        pages = self._pages.get(self._store.file_count(), lambda: PageKeys(self._store.paths()))
        found = [
            Reference(position, source, led, fragment(target), said[text])
            for position, source, text, target in linked
            if said[text] <= wanted and 2 * len(said[text]) > len(wanted)
            for led in [pages.resolve(target, source)]
            if led is not None
        ]
        chosen = referral(found)
        if chosen is None or any(
            same_page(rows[chunk_id].path, chosen.led) for chunk_id, _ in ranked[: chosen.position] if chunk_id in rows
        ):
            return ranked
        landing = self._landing(chosen)
        if landing is None:
            return ranked
        rows[landing.id] = landing
        return stand_ins(ranked, {ranked[chosen.position][0]: landing.id})

    def _landing(self, reference: Reference) -> StoredChunk | None:
        """Where a reader following `reference` lands: the chunk its anchor names, or with no anchor the page's first
        section headed by the link's words, else the page's first chunk with substance."""
        chunks = self._store.chunks_for_path(reference.led)
        if reference.anchor:
            return next((chunk for chunk in chunks if reference.anchor in anchors(chunk.text, chunk.heading)), None)
        substantial = _with_substance(chunks)
        headed = self._terms_of(_last_heading(chunk.heading) for chunk in substantial)
        return next(
            (chunk for chunk in substantial if reference.said <= headed[_last_heading(chunk.heading)]),
            substantial[0] if substantial else None,
        )

    def _after_landings(
        self, items: list[int], ranked: list[tuple[int, float]], rows: dict[int, StoredChunk]
    ) -> list[int]:
        """`items` (chunks to come first, in order) each after the best chunk of the page its own page's thin pointer
        among the first POINTER_WINDOW leads to (the pointer rule's): Hugo's "Multilingual mode", whose Configuration
        section says only "See [configure languages][]", comes first for "configure multilingual mode" after the
        page it sends the reader to, as the pointer rule had it."""
        pointers = {
            rows[chunk_id].path: rows[chunk_id]
            for chunk_id, _ in reversed(ranked[:POINTER_WINDOW])
            if chunk_id in rows and _is_pointer(rows[chunk_id])
        }
        if not pointers:
            return items
        best: dict[str, int] = {}
        for chunk_id, _ in ranked:
            if chunk_id in rows:
                best.setdefault(rows[chunk_id].path, chunk_id)
        out: list[int] = []
        for item in items:
            pointer = pointers.get(rows[item].path) if item in rows else None
            led = self._led_to(pointer) if pointer is not None else None
            if led is not None and led in best and best[led] not in out:
                out.append(best[led])
            if item not in out:
                out.append(item)
        return out

    def _led_to(self, row: StoredChunk) -> str | None:
        """The one other indexed file `row`'s links lead to (reference links by the definitions in its file), or
        None."""
        whole = "\n".join(chunk.text for chunk in self._store.chunks_for_path(row.path)) if "][" in row.text else ""
        pages = self._pages.get(self._store.file_count(), lambda: PageKeys(self._store.paths()))
        led = {pages.resolve(target, row.path) for target in link_targets(row.text, whole)} - {None}
        return led.pop() if len(led) == 1 else None

    def _query_terms(self, query: Query, looked: _Lookups) -> frozenset[str]:
        """The keyword index's terms of the query's words (_terms), looked up once per search."""
        if looked.terms is None:
            looked.terms = self._terms(query.text)
        return looked.terms

    def _variants_named(self, query: Query, variants: Variants, looked: _Lookups) -> frozenset[str]:
        """The variant folders the query names (Variants.named), looked up once per search."""
        if looked.variants_named is None:
            looked.variants_named = variants.named(query.text, self._store.stems) if variants.folders else frozenset()
        return looked.variants_named

    def _terms(self, text: str) -> frozenset[str]:
        """The keyword index's terms of `text`'s content words."""
        return frozenset(self._store.stems(" ".join(content_words(text))))

    def _task_verb_terms(self) -> frozenset[str]:
        """The keyword index's terms of TASK_VERBS, which a how-to question's topic is read without."""
        if self._task_terms is None:
            self._task_terms = self._terms(" ".join(TASK_VERBS))
        return self._task_terms

    def _terms_of(self, texts: Iterable[str]) -> dict[str, frozenset[str]]:
        """_terms() of many texts in one query."""
        words = {text: " ".join(content_words(text)) for text in texts}
        stems = self._store.stems_of(words.values())
        return {text: frozenset(stems[joined]) for text, joined in words.items()}

    def _signals(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], query: Query, looked: _Lookups
    ) -> list[tuple[int, float]]:
        """The hybrid ranking's signals beside the two lists: the path naming the query's words, the query's
        literals as written (more where a heading defines them), a page named for each version the query names."""
        terms = self._query_terms(query, looked)
        ranked = add_signal(
            ranked,
            lambda chunk_id: path_match(terms, self._terms_of_path(rows, chunk_id)) if terms else 0.0,
            PATH_WEIGHT,
        )
        wanted = literals(query.text)
        if wanted:  # issue 32: the query's flags, names and quoted messages as written, more where a heading
            # defines them (ranking.LITERAL_WEIGHT, DEFINITION_WEIGHT)
            ranked = add_signal(
                ranked,
                lambda chunk_id: (
                    literal_share(wanted, f"{rows[chunk_id].heading}\n{rows[chunk_id].text}")
                    if chunk_id in rows
                    else 0.0
                ),
                LITERAL_WEIGHT,
            )
            ranked = add_signal(
                ranked,
                lambda chunk_id: defined_share(wanted, rows[chunk_id].heading) if chunk_id in rows else 0.0,
                DEFINITION_WEIGHT,
            )
        named = query.versions
        if len(named) > 1:  # "from 1.19 to 1.20": the page named for both (ranking.RANGE_WEIGHT)
            ranked = add_signal(
                ranked,
                lambda chunk_id: float(chunk_id in rows and names_each(named, versions_in_name(rows[chunk_id].path))),
                RANGE_WEIGHT,
            )
        if named:  # "what changed in 8.0": the section headed by that release (ranking.RELEASE_WEIGHT)
            changes = asks_what_changed(query.folded_words)
            trees = self._language_trees().versions
            ranked = add_signal(
                ranked, lambda chunk_id: self._release_named(rows, chunk_id, named, changes, trees), RELEASE_WEIGHT
            )
        variants = self._site_variants()
        asked = self._variants_named(query, variants, looked)
        if asked:  # "suspense with useQuery in React": not docs/framework/solid/ (ranking.VARIANT_WEIGHT)
            others = variants.others(asked)
            ranked = add_signal(
                ranked, lambda chunk_id: -float(chunk_id in rows and holds(others, rows[chunk_id].path)), VARIANT_WEIGHT
            )
        return ranked

    @staticmethod
    def _release_named(
        rows: dict[int, StoredChunk], chunk_id: int, named: Collection[str], changes: bool, trees: VersionTrees
    ) -> float:
        """1 where a chunk's heading trail names a release the query names and the query asks what `changes` it
        made ("how do I upgrade to 1.18" wants the upgrade guide, not each heading naming 1.18); -1 where a
        changelog's section is headed by other releases only (its 8.3.1 section for "what changed in 8.0"), else 0
        (versions.heading_names_release: a heading elsewhere may name a release in passing)."""
        row = rows.get(chunk_id)
        if row is None:
            return 0.0
        copy = trees.copy(row.path)
        said = heading_names_release(named, row.heading, copy.tree.named_as if copy is not None else None)
        return said if (said > 0 and changes) or (said < 0 and _changelog(row)) else 0.0

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
            nearest, keyword = self._one_of_identical(nearest, keyword, copies, query, pool)
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
        text), worked out again as _FromFiles says (a first sync: the trees of a large versioned site take a second
        or two)."""
        return self._trees.get(
            self._store.file_count(),
            lambda: copy_trees(self._store, self._root, self._current_version, self._site_posts()),
        )

    def _site_posts(self) -> Posts:
        """The index's posts folders beside a docs tree (scree.content.posts)."""
        return self._posts.get(self._store.file_count(), lambda: site_posts(self._store, self._root))

    def _test_pages(self) -> SuitePages:
        """The index's test pages, their folders and the docs' top folder (scree.content.fixtures)."""
        return self._tests.get(self._store.file_count(), lambda: SuitePages.of(self._store.paths()))

    def _site_variants(self) -> Variants:
        """The index's variant folders (scree.content.variants): sibling folders mirroring each other's pages that
        are neither version trees nor languages' trees."""
        files = self._store.file_count()
        return self._variants.get(files, lambda: site_variants(self._store.paths(), self._language_trees()))

    def _diversify(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        matched: Callable[[int], bool] | None,
        query: Query,
        looked: _Lookups,
        asked: Collection[int] = frozenset(),
        removed: Collection[str] = frozenset(),
    ) -> list[tuple[int, float]]:
        """Each file's best chunk first (ranking.diversify); then, on a site with version trees, other versions'
        chunks VERSION_RANKS places down (issue 32): after that many current pages of similar rank, since among the
        files' best chunks a place is a page, but not the pages `removed` (_removed: titled for what the query asks
        about, where no current page is); and on a docs site with a blog
        (scree.content.posts), posts POST_RANKS places down, past pages the query's words found (`matched`, in
        hybrid mode) only: a post that alone answers stays among the first hits; so is a changelog, unless the
        query asks about changes. A page's copies in other variants, for a query naming none, go VARIANT_RANKS
        other pages down (Variants.repeated)."""
        ranked = diversify(ranked, lambda pair: rows[pair[0]].path if pair[0] in rows else "", PER_FILE)
        trees = self._language_trees()
        if trees.versions.families or trees.versions.superseded:
            named = query.versions
            ranked = demote(
                ranked,
                lambda chunk_id: (
                    other_version(trees, rows, chunk_id, named)
                    and not (removed and chunk_id in rows and _page_of(trees, rows[chunk_id]) in removed)
                ),
                VERSION_RANKS,
            )
        if trees.counts:
            ranked = demote(ranked, lambda chunk_id: self._foreign(trees, rows, chunk_id, query), VERSION_RANKS)
        variants = self._site_variants()  # after the versions and languages: the copy to show is seen first
        if not self._variants_named(query, variants, looked):
            sections = [
                (chunk_id, rows[chunk_id].path, rows[chunk_id].heading) for chunk_id, _ in ranked if chunk_id in rows
            ]
            ranked = after_others(ranked, variants.repeated(sections).__contains__, VARIANT_RANKS)
        posts = self._site_posts()
        if posts.folders:
            announced = query.versions if asks_what_changed(query.folded_words) else frozenset()
            ranked = demote(
                ranked, lambda item: self._secondary_post(posts, rows, item, announced), POST_RANKS, matched
            )
        if not asks_about_changes(query.folded_words, query.versions):
            ranked = demote(ranked, lambda item: item in rows and _changelog(rows[item]), POST_RANKS, matched)
        tests = self._test_pages()
        if not asks_about_tests(query.folded_words):  # a formatter's test fixtures are markdown by the hundred
            ranked = demote(ranked, lambda item: item in rows and tests.holds(rows[item].path), POST_RANKS, matched)
        elif not asks_about_the_suite(query.folded_words):  # a testing tool's site: its own tests beside the docs
            ranked = demote(
                ranked, lambda item: item in rows and tests.beside_the_docs(rows[item].path), POST_RANKS, matched
            )
        questions, proposals = self._shaped_pages(ranked[:FAQ_WINDOW], rows, looked)
        questions -= set(asked)  # "FAQ > What is gRPC?" for "What is gRPC?" is the answer
        if questions:
            ranked = demote(ranked, questions.__contains__, FAQ_RANKS, matched)
        if proposals and not asks_about_design(query.folded_words):  # scree.search.proposals
            ranked = demote(ranked, proposals.__contains__, PROPOSAL_RANKS, matched)
        return ranked

    @staticmethod
    def _secondary_post(posts: Posts, rows: dict[int, StoredChunk], chunk_id: int, announced: Collection[str]) -> bool:
        """Whether a chunk is of a post (ranked after the docs pages), but not a post headed by the release a query
        asks what changed in (`announced`): "What changed in Linkerd 2.18?" is the 2.18 announcement's question."""
        row = rows.get(chunk_id)
        if row is None or not posts.is_post(row.path):
            return False
        return not announced or heading_names_release(announced, row.heading) <= 0

    @staticmethod
    def _foreign(trees: LanguageTrees, rows: dict[int, StoredChunk], chunk_id: int, query: Query) -> bool:
        """Whether a chunk is a translation in neither the query's language nor the main one, nor the untagged
        original: it was left as it is (hits.fold_translations) because no copy in those languages was among the
        candidates. Pinia's untagged English docs/ beside a larger zh/ (its English API pages are generated, not
        committed) stay as they are though zh is the main language by its pages."""
        row = rows.get(chunk_id)
        copy = trees.copy(row.path) if row is not None else None
        return copy is not None and copy.language not in (query.language, trees.main, ORIGINAL)

    def _shaped_pages(
        self, ranked: list[tuple[int, float]], rows: dict[int, StoredChunk], looked: _Lookups
    ) -> tuple[set[int], set[int]]:
        """The items of `ranked` whose page is a page of questions (scree.search.faq), and those whose page is a
        design proposal (scree.search.proposals), each page judged by all its chunks' headings once per indexed
        version of the file."""
        questions: set[int] = set()
        proposals: set[int] = set()
        self._prefetch(looked, (rows[chunk_id].path for chunk_id, _ in ranked if chunk_id in rows))
        for chunk_id, _ in ranked:
            row = rows.get(chunk_id)
            state = looked.indexed.get(row.path) if row is not None else None
            if row is None or state is None:
                continue
            known = self._page_shapes.get(row.path)
            if known is None or known[0] != state.sha256:
                headings = [chunk.heading for chunk in self._store.chunks_for_path(row.path)]
                known = self._page_shapes[row.path] = (state.sha256, is_question_page(headings), is_proposal(headings))
            if known[1]:
                questions.add(chunk_id)
            if known[2]:
                proposals.add(chunk_id)
        return questions, proposals

    def _one_of_identical(
        self,
        nearest: list[tuple[int, float]],
        keyword: list[tuple[int, float]],
        trees: LanguageTrees,
        query: Query,
        pool: int,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """Each list with chunks of identical text (a page copied unchanged into old versions or left untranslated)
        as one candidate (ranking.one_of_identical): the copy to show, at the best place of them."""
        rows = self._store.chunks_by_ids(chunk_id for chunk_id, _ in [*nearest, *keyword])

        def text_of(chunk_id: int) -> str | int:
            return rows[chunk_id].text if chunk_id in rows else chunk_id

        def preference(chunk_id: int) -> tuple[int, ...]:
            return trees.preference(rows[chunk_id].path, query.language, query.versions) if chunk_id in rows else (9,)

        return (
            one_of_identical(nearest, text_of, preference, pool),
            one_of_identical(keyword, text_of, preference, pool),
        )

    def _recheck_and_collapse(
        self,
        ranked: list[tuple[int, float]],
        rows: dict[int, StoredChunk],
        k: int,
        folded: dict[int, list[int]],
        query: Query,
        looked: _Lookups,
    ) -> tuple[list[Hit], set[str]]:
        trees = self._language_trees()
        wanted = query.language
        likely = [chunk_id for chunk_id, _ in ranked[: k * PREFETCH_FACTOR] if chunk_id in rows]
        translated = [rows[t] for c in likely for t in folded.get(c, ()) if t in rows]
        self._prefetch_hits(looked, [rows[chunk_id] for chunk_id in likely], translated, k)
        dropped: set[str] = set()
        seen_texts: set[str] = set()
        line_chunks: dict[str, dict[int, list[int]]] = {}  # path -> line -> ids of its single-line chunks
        hits: list[Hit] = []
        for chunk_id, score in ranked:
            row = rows.get(chunk_id)
            if row is None or row.text in seen_texts or too_little(row.path, row.text):
                continue
            if trees.active:
                twins = [twin for twin in self._same_text(row.text, looked) if twin.path != row.path]
                row = preferred_twin(
                    row, twins, trees, wanted, lambda path: self._check(path, looked) is not None, query.versions
                )
            state = self._check(row.path, looked)
            if state is None:
                dropped.add(row.path)
                continue
            seen_texts.add(row.text)
            translations = [rows[t] for t in folded.get(chunk_id, ())]
            hit = self._hit(row, score, state, looked, translations)
            if not hit.stale and row.start_line == row.end_line:
                hit = replace(hit, part=self._part(row, line_chunks))
            hits.append(hit)
            if len(hits) == k:
                break
        return hits, dropped

    def _hit(
        self,
        row: StoredChunk,
        score: float,
        state: _Current,
        looked: _Lookups,
        translations: Sequence[StoredChunk] = (),
    ) -> Hit:
        """The hit for `row`; also= names its identical chunks in other files (R-M4), then the other languages'
        and versions' copies folded into it (#11), each as its best chunk's current range, each file once. A chunk
        of a version other than the current one says which (`version`), and names its current page in also= when
        that page is not among them (issue 32)."""
        start, end, stale = _locate(row, state)
        trees = self._language_trees()
        copy = trees.copy(row.path) if trees.active else None
        version = trees.version_note(row.path, copy) if trees.active else None
        also: list[str] = []
        twins = [twin for twin in self._same_text(row.text, looked) if twin.path != row.path]
        twin_paths = {twin.path for twin in twins}
        others = [copy for copy in translations if copy.path not in twin_paths and copy.path != row.path]
        counterpart = trees.versions.copy(row.path)
        old_copy = copy is not None and copy.version is not None  # a page about an old release is its own current
        named = counterpart.counterpart if old_copy and counterpart is not None else None
        self._prefetch(looked, [*(other.path for other in [*twins, *others]), *([named] if named else [])])
        for other in newest_first(trees, [*twins, *others]):
            other_state = self._check(other.path, looked)
            if other_state is None:
                continue
            o_start, o_end, o_stale = _locate(other, other_state)
            also.append(other.path if o_stale else f"{other.path}:{o_start}-{o_end}")
        if named is not None and not any(entry.rsplit(":", 1)[0] == named for entry in also):
            if self._check(named, looked) is not None:
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

    def _prefetch_hits(
        self, looked: _Lookups, likely: list[StoredChunk], translations: list[StoredChunk], k: int
    ) -> None:
        """What the likely hits' also= will name, in two queries: the chunks holding the first k texts (the hits,
        unless some are dropped), then the index's state of every file those, the likely hits, their folded
        translations and their versions' current pages are in."""
        looked.same_text.update(self._store.chunks_with_texts(row.text for row in likely[:k]))
        trees = self._language_trees()
        counterparts = (trees.versions.copy(row.path) for row in likely) if trees.active else iter(())
        paths = [
            *(row.path for row in likely),
            *(twin.path for row in likely for twin in looked.same_text.get(row.text, ())),
            *(copy.path for copy in translations),
            *(found.counterpart for found in counterparts if found is not None and found.counterpart is not None),
        ]
        self._prefetch(looked, paths)

    def _prefetch(self, looked: _Lookups, paths: Iterable[str]) -> None:
        """The index's states of those of `paths` not looked up yet, in one query (None: not indexed)."""
        wanted = [path for path in dict.fromkeys(paths) if path not in looked.indexed]
        if wanted:
            states = self._store.file_states(wanted)
            looked.indexed.update((path, states.get(path)) for path in wanted)

    def _same_text(self, text: str, looked: _Lookups) -> list[StoredChunk]:
        """Every chunk whose text is `text` (IndexReader.chunks_with_text), asked once per query."""
        if text not in looked.same_text:
            looked.same_text[text] = self._store.chunks_with_text(text)
        return looked.same_text[text]

    def _check(self, path: str, looked: _Lookups) -> _Current | None:
        """R-M2: is `path` still indexable, and has it changed since it was indexed? Once per query; the index's
        state of a file not prefetched is asked for alone."""
        if path not in looked.current:
            if path not in looked.indexed:
                looked.indexed[path] = self._store.file_state(path)
            looked.current[path] = self._recheck(path, looked.indexed[path])
        return looked.current[path]

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


def _older_sections(rows: dict[int, StoredChunk], ranked: Sequence[tuple[int, float]]) -> set[int]:
    """The candidates under a heading naming only releases older than the newest another candidate of their page is
    headed by (ranking.give_way): Contour's upgrading.md keeps a section per step since 1.0.0."""
    newest: dict[str, tuple[int, ...]] = {}
    named: dict[int, tuple[int, ...]] = {}
    for chunk_id, _ in ranked:
        row = rows.get(chunk_id)
        releases = heading_releases(row.heading) if row is not None else []
        if row is None or not releases:
            continue
        named[chunk_id] = max(version_key(release) for release in releases)
        newest[row.path] = max(newest.get(row.path, ()), named[chunk_id])
    return {chunk_id for chunk_id, key in named.items() if key < newest[rows[chunk_id].path]}


def _page_of(trees: LanguageTrees, row: StoredChunk) -> str:
    """The page a chunk is a copy of (LanguageTrees.copy: its versions and translations name one page), else its
    path."""
    copy = trees.copy(row.path)
    return copy.page if copy is not None else row.path


def _is_pointer(row: StoredChunk) -> bool:
    """Whether a chunk is a thin one sending the reader to another page (the pointer rule's: "See [configure
    languages][].")."""
    return is_thin(row.path, row.text) and points_elsewhere(row.text)


def _first_pages(ranked: Sequence[tuple[int, float]], rows: Mapping[int, StoredChunk]) -> dict[str, list[int]]:
    """The candidates of the first OPENING_WINDOW pages in `ranked`, by page in rank order, each page's in rank
    order: the pages the opening and section rules read."""
    pages: dict[str, list[int]] = {}
    for chunk_id, _ in ranked:
        row = rows.get(chunk_id)
        if row is not None and (row.path in pages or len(pages) < OPENING_WINDOW):
            pages.setdefault(row.path, []).append(chunk_id)
    return pages


def _changelog(row: StoredChunk) -> bool:
    """Whether a chunk is of a changelog, by its page's name or its title (scree.content.posts)."""
    return is_changelog(row.path) or titled_changelog(title_of([row.heading]))


def _last_heading(trail: str) -> str:
    return trail.rsplit(HEADING_SEPARATOR, 1)[-1]


def _with_substance(chunks: Iterable[StoredChunk]) -> list[StoredChunk]:
    """The chunks a hit may show as a page's own text: neither too little to show nor thin."""
    return [chunk for chunk in chunks if not too_little(chunk.path, chunk.text) and not is_thin(chunk.path, chunk.text)]


def _vector_weight(query: Query, recorded: tuple[str, int] | None) -> float:
    """The vector list's weight in a hybrid search of `query` over an index whose vectors `recorded` made: lighter for
    a query mostly in CJK script where that model read English (EmbedderKind.cjk_vector_weight)."""
    special = cjk_vector_weight(recorded[0]) if query.mostly_cjk and recorded is not None else None
    return special if special is not None else vector_weight(len(query.words))


def _locate(row: StoredChunk, state: _Current) -> tuple[int, int, bool]:
    """R-M4: the chunk's line range now; stale when its text is no longer in the file."""
    if state.ranges is None:
        return row.start_line, row.end_line, False
    found = state.ranges.get(row.text)
    if found is None:
        return 0, 0, True
    return found[0], found[1], False
