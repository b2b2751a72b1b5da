"""Pure ranking: fusion of vector and keyword lists (R-M3), the path signal, diversity, the similarity floor (#11)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")

RRF_K = 10  # merges the word and CJK character-pair keyword lists; measured best on SciFact train when it fused modes

# Hybrid ranking (#11), measured with bench.quality on SciFact train (nDCG@10) and the docs trees (MRR / Hit@3, k=5)
# together; each list's scores are standardised (z-scores over its POOL candidates) and summed with these weights.
# Weighted RRF could not serve both: k=5, vector weight 0.7 gave 0.7315 / 0.821 / 0.883, 1.5 gave 0.7048 / 0.883 /
# 0.917. z-scores, vector weight 1.2, path weight 1.0, one chunk per file first: 0.7361 / 0.877 / 0.917.
# Squared bm25 scores (KEYWORD_POWER 2) with vector weight 1.7: 0.7376 / 0.888 / 0.917, against 0.7367 / 0.882 / 0.900
# for plain scores at 1.2. SciFact wants its best keyword matches strong (plain scores at 1.4: 0.7325) and docs want a
# heavier vector list (1.4: 0.883 / 0.917); squaring keeps the keyword list's top matches far above its tail, so the
# vector weight can rise. Powers 1.75-3 with weights 1.6-2.2 all gave docs Hit@3 0.917; SciFact fell past 1.8.
POOL = 100  # candidates taken from each list whatever k is, so the first m hits of any k are the same (#11)
Z_VECTOR_WEIGHT = 1.7  # keyword list 1.0
KEYWORD_POWER = 2.0  # bm25 scores are raised to this before they are standardised
# A query of more content words than LONG_QUERY_WORDS (stop words aside) weighs its vector list less: the more words a
# chunk shares with the query, the more its keyword score says. SciFact train (claims of 2-20 content words; 747 of 809
# have 6 or more): 0.7375 -> 0.7438 nDCG@10 at 1.1 (paired per query +0.0063, standard error 0.0032; 58 queries up, 47
# down); thresholds 4-6 with weights 0.9-1.2 all gave 0.741-0.746. The docs train queries (2-7 content words) did not
# move at all. At 7 words the gain fell to 0.7390.
LONG_QUERY_WORDS = 5
LONG_QUERY_VECTOR_WEIGHT = 1.1
# A path naming every query word adds this many standard deviations. 1.0 was measured with the vector list at 1.2;
# with it at 1.7 the fused scores spread wider, and 1.5 (about 1.0 x 1.7 / 1.2) gave docs train MRR 0.888 -> 0.896,
# Hit@1 0.850 -> 0.867 (2.0: the same, 2.5: 0.899); SciFact's paths are document ids and name no query word.
PATH_WEIGHT = 1.5
# Issue 32: a chunk holding the query's literal strings as written (scree.search.literals: a flag, a dotted or
# camelCase name, a quoted error message) adds up to LITERAL_WEIGHT standard deviations, by the share of them it
# holds: the keyword index finds `--snapshot-count` as the words `snapshot` and `count` anywhere. bench.quality_versions
# hybrid MRR@5, etcd 0.800 -> 0.825 at 2, 0.842 at 3-5 (the page that names the removed flag and the flags reference
# first); Jest 0.803 at all; docs, SciFact, the formats trees and the generated site as before at 3 once plain
# hyphenated words (`command-line`) were not literals (with them: docs 0.908 -> 0.899, generated site 0.942 -> 0.925).
LITERAL_WEIGHT = 3.0
# A chunk whose own heading DEFINES a literal (literals.defined_name: the heading is the name and its signature,
# `### `--testPathPatterns=<regex>``, `### `globalSetup` [string]`) adds DEFINITION_WEIGHT more: reference pages name
# a flag or option in a heading, guides and posts mention it in prose (or in a heading sentence). bench.quality_versions
# hybrid MRR@5: Jest 0.803 -> 0.828 at 0.5-2 (the CLI reference above the upgrade guide that mentions the old flag),
# 0.803 at 0.3; etcd 0.867 (its flags are listed in a code block), docs, SciFact, the formats trees and the generated
# site as before at 1.
DEFINITION_WEIGHT = 1.0
# A page named for each version a query names, two or more ("upgrading from 1.19 to 1.20": cert-manager's
# upgrading-1.19-1.20.md; content.versions.names_each) adds RANGE_WEIGHT: a file name carrying the very step asked
# for says more than a flag held and defined (LITERAL_WEIGHT + DEFINITION_WEIGHT). With the offline model the
# neighbouring step's page (upgrading-1.18-1.19.md, opening "Before upgrading cert-manager from 1.18 to 1.19...")
# stood 4.6 above it; at 3 it stayed first. Jest, etcd, the generated site, docs and formats sets unchanged at 3 and 5.
RANGE_WEIGHT = 5.0
# A chunk whose heading trail names a release the query asks what changed in (`## pytest 8.0.0 (2024-01-27)`,
# `## v1.17`, a pre-release's `8.0.0rc1` too; versions.heading_names_release, posts.asks_what_changed) adds
# RELEASE_WEIGHT; a changelog's section headed by other releases only takes it off. pytest's doc/en/changelog.rst (a
# section per release, 8.4.2 down to 1.0) answered "What changed in pytest 8.0?" with its one-line 8.3.1 section and
# had the 8.0.0 sections 168th; pip's NEWS.rst "What changed in pip 24.0?" with its 24.1b2 section (at 3 still first,
# 7.18 against 24.0's 7.17); Velero's "What is new in Velero 1.17?" with a release-instructions stub. At 5 each gets the
# release's own sections first. A how-to naming a release is left alone: every heading naming 3.6 raised put etcd's
# upgrade_3_6 and 3.6 announcement before the downgrade guide for "roll back from 3.7 to 3.6" (nDCG@5 0.654 -> 0.650).
# bench.quality_versions, versioned_site, quality --sets docs and quality_formats as before.
RELEASE_WEIGHT = 5.0
# A query naming a variant folder (scree.content.variants: TanStack Query's docs/framework/react/ beside vue/, solid/,
# angular/...) takes VARIANT_WEIGHT off the chunks of its siblings. Measured with the offline model on TanStack Query
# (13 questions naming a framework, 6 naming one beside a page outside the framework folders, MRR@8 over all 19):
# 0.846 as it was; 0.882 at 3 and at 6 ("suspense with useQuery in React": 3 -> 1); 0.855 at 1.5. Adding the weight
# to the named variant's chunks instead gave 0.826: "the QueryClient constructor with React" put React's pages
# before docs/reference/QueryClient.md (2 -> 5), "the MutationCache in Svelte" Svelte's (1 -> 4). Capacitor's
# android/ and ios/: an iOS question's Android troubleshooting page left the first three. bench.quality_versions,
# versioned_site, quality --sets docs and quality_formats as before (none of their queries names a variant).
VARIANT_WEIGHT = 3.0
PER_FILE = 1  # chunks of one file before every other candidate file's best chunk has been shown


# Issue 25: one-line chunks and "SEE ALSO" link lists (chunking.thin) won hits over the page that explains, since a
# short chunk that names the query's words scores high in both lists. In hybrid and keyword mode a thin chunk's place
# goes to the best chunk of its file ranked below it that is not thin (the page matched; this chunk has little to
# show), and the thin chunk goes THIN_RANKS places down (by rank, not by score: fused scores spread differently with
# every query). Semantic mode keeps the cosine order (its score is the cosine similarity, R-M1). The docs trees of
# bench.quality: 3 places with the stand-in, MRR as before; without the stand-in, hybrid MRR 0.908 -> 0.899 (an
# anchor-only chunk of the strict-mode page had been its first hit).
THIN_RANKS = 3
# The stand-in is a chunk of the same page that matched too: one scoring under STAND_IN_SHARE of the thin chunk's
# score does not take its place (the thin chunk goes down as it is). Velero's changelogs/CHANGELOG-1.18.md has an
# "### Upgrading" section that is one URL, velero.io/docs/v1.18/upgrade-to-1.18/: it scored 14.5 for "How do I
# upgrade Velero to 1.18?" on the URL's words, and its place went to the page's 97th-ranked chunk (1.1), a release
# highlight, first above the upgrade guide. bench.quality's docs trees do not move at 0.3 or 0.5, nor
# bench.quality_versions, quality_formats and versioned_site at 0.5.
STAND_IN_SHARE = 0.5


def demote_thin(
    ranked: Sequence[tuple[int, float]],
    is_thin: Callable[[int], bool],
    file_of: Callable[[int], str],
    places: int = THIN_RANKS,
    matched: Callable[[int], bool] | None = None,
) -> list[tuple[int, float]]:
    """The ranked (item, score) list with each thin item's place taken by its file's next item that is not thin,
    if any scores at least STAND_IN_SHARE of the thin one (scores are not negative), and the thin item `places`
    places further down than it was (stable), but never below the last item
    after it that is not thin and `matched` (the query's words found it; every item when None): a thin chunk gives
    way to pages that match, not to whatever the vector search ranked next. A moved item's score is cut to the one
    ranked above it, so scores still fall with rank."""
    thin = [is_thin(item) for item, _ in ranked]
    strong = [not thin[i] and (matched is None or matched(item)) for i, (item, _) in enumerate(ranked)]
    later: dict[str, list[int]] = {}  # file -> positions of its items that are not thin, best last
    for position in range(len(ranked) - 1, -1, -1):
        if not thin[position]:
            later.setdefault(file_of(ranked[position][0]), []).append(position)
    keyed: list[tuple[float, int]] = []  # (new place, position in ranked)
    taken: set[int] = set()
    for position, (item, _) in enumerate(ranked):
        if position in taken:
            continue
        if not thin[position]:
            keyed.append((position, position))
            continue
        others = later.get(file_of(item), [])
        while others and (others[-1] < position or others[-1] in taken):
            others.pop()
        if others and ranked[others[-1]][1] >= STAND_IN_SHARE * ranked[position][1]:
            taken.add(others[-1])
            keyed.append((position, others.pop()))
        below = [after for after in range(position + 1, len(ranked)) if strong[after]][:places]
        keyed.append((min(position + places, below[-1]) + 0.5 if below else position + 0.25, position))
    keyed.sort(key=lambda entry: entry[0])
    out: list[tuple[int, float]] = []
    for place, position in keyed:
        item, score = ranked[position]
        if place == int(place) and place < len(ranked):
            score = max(score, ranked[int(place)][1]) if position != place else score
        out.append((item, min(score, out[-1][1]) if out else score))
    return out


def stand_ins(ranked: Sequence[tuple[int, float]], stands: Mapping[int, int]) -> list[tuple[int, float]]:
    """`ranked` with each stand-in (`stands`: item -> the item standing for it) just before the item it stands for,
    at its score, and not again where it ranked itself: a page's opening for a what-is question
    (scree.search.definition), the page a thin pointer leads to (scree.search.pointers)."""
    placed = set(stands.values())
    out: list[tuple[int, float]] = []
    for item, score in ranked:
        if item in stands:
            out.append((stands[item], score))
        elif item in placed:
            continue
        out.append((item, score))
    return out


def first_of(ranked: Sequence[tuple[int, float]], items: Sequence[int]) -> list[tuple[int, float]]:
    """`ranked` with `items` (those in it, in their order) first, at the first item's score: the pages titled by
    what a query asks to be defined (scree.search.definition)."""
    present = {item for item, _ in ranked}
    wanted = [item for item in dict.fromkeys(items) if item in present]
    if not wanted or [item for item, _ in ranked[: len(wanted)]] == wanted:
        return list(ranked)
    top = ranked[0][1]
    moved = set(wanted)
    return [(item, top) for item in wanted] + [(item, score) for item, score in ranked if item not in moved]


def give_way(
    ranked: Sequence[tuple[int, float]], yields: Callable[[int], bool], file_of: Callable[[int], str]
) -> list[tuple[int, float]]:
    """`ranked` with each file's best item that `yields` standing behind the file's best item that does not, where
    one scores at least STAND_IN_SHARE of it: that one takes its place and score (stand_ins). For a query naming no
    release, a section headed by an older release than the newest its page's candidates are headed by: Contour's
    upgrading.md, "Legacy per-version upgrade instructions > Upgrading Contour 1.0.0 to 1.0.1 > The less easy way",
    had stood for the page for "How do I upgrade Contour?" before its current text. Which pages come first does not
    change."""
    best: dict[str, tuple[int, float]] = {}
    stands: dict[int, int] = {}
    for item, score in ranked:
        file = file_of(item)
        if file not in best:
            best[file] = (item, score)
        elif item not in stands.values() and best[file][0] not in stands:
            first, top = best[file]
            if yields(first) and not yields(item) and score >= STAND_IN_SHARE * top:
                stands[first] = item
    return stand_ins(ranked, stands) if stands else list(ranked)


# Issue 32: a chunk of a version other than the current one (old, or unreleased) that no current chunk says the same
# as (the engine folds those) stays findable, VERSION_RANKS places further down among the files' best chunks (after
# ranking.diversify, so a place is a page): after current pages of similar rank. bench.quality_versions, top-5 slots
# held by other versions of 100 (hybrid / keyword / semantic), Jest and etcd: moved by chunk places before diversify,
# 0 places 11/11/10 and -, 10 places 4/1/5 and 9/5/10; by page places after it, 5 places 0/1/3 and 13/10/16, 10 places
# 0/0/2 and 1/0/3, MRR@5 the same (Jest 0.782, etcd 0.698 hybrid). By places, not by score: fused scores fall steeply
# after the first few, so "within 0.4-0.8 of its score" let an old chunk that matched far better stay on top.
VERSION_RANKS = 10
# A page's variant (scree.content.variants: its copy for another framework, platform or language) after one variant
# of it has been shown goes this many other pages down, for a query naming no variant: gRPC's "How do I define a
# service?" had the PHP, Java and C++ basics tutorials' "Defining the service" in the first five.
VARIANT_RANKS = 5
# Issue 32: a dated post beside a docs tree (scree.content.posts: a blog's release announcements name every option of
# their day) goes POST_RANKS places down among the files' best chunks, after docs pages of similar rank; in hybrid mode
# only past pages the query's words found, so a question only a post answers still finds it among the first hits.
# bench.quality_versions hybrid / keyword / semantic MRR@5: Jest 0.782/0.721/0.777 -> 3 places 0.816/0.738/0.777,
# 10 places 0.823/0.747/0.789; etcd 0.698/0.629/0.617 -> 0.729/0.637/0.625 at both. 3, not 10: a post that alone
# answers a question would go from the first hit to the eleventh on a large site, past the default k of 8.
POST_RANKS = 3

# Issue 32: a page of questions (scree.search.faq: most of its headings end in "?") goes FAQ_RANKS places down among the
# files' best chunks, in hybrid mode only past pages the query's words found: a FAQ entry says in brief, in the
# question's own words, what the page it points to explains. Pages are judged among the first FAQ_WINDOW places only
# (one look-up each, cached per file version), whatever k is. bench.quality_versions hybrid MRR@5, etcd (its faq.md is
# the only such page in every tuning set): 0.842 -> 0.867 at 1 place (the maintenance and hardware pages before the FAQ
# entries that name their questions; "listen-client-urls versus advertise-client-urls", graded to the FAQ, 1 -> 2),
# 0.858 at 2, 0.854 at 3. Jest, the docs trees, the formats trees, SciFact and the generated site have no such page.
FAQ_RANKS = 1
FAQ_WINDOW = 30
# A design proposal (scree.search.proposals: Goals beside Non-Goals, or the sections design templates ask for) goes
# PROPOSAL_RANKS places down among the files' best chunks, as a post does (in hybrid mode only past pages the query's
# words found), unless the query asks about a design: it says how a feature was to be built, in the words of the
# question about using it. Contour: its design/ pages came first for "How do I configure CORS?" and "How do I set up
# TLS for a virtual host?". Judged among the first FAQ_WINDOW places, with the pages of questions.
PROPOSAL_RANKS = POST_RANKS


# Issue 32: on a site with version trees or translations, most pages are copied unchanged into every version (Jest: 4
# copies, etcd: 12), so POOL candidates held 27-40 distinct texts, and the standardised scores were taken over a few
# texts repeated. Chunks of identical text are one candidate (the copy to show, at their best place), and each list
# takes COPIES_POOL_FACTOR x POOL chunks to keep up to POOL distinct texts. bench.quality_versions hybrid MRR@5
# (with rule 6): Jest 0.816 -> 0.803 (Hit@3 0.850 -> 0.900), etcd 0.767 -> 0.800, other-version slots 0 and 2 -> 0
# and 1; factors 2, 4 and 8 gave the same figures; the generated Docusaurus site (bench.versioned_site) unchanged.
COPIES_POOL_FACTOR = 4


def one_of_identical(
    ranked: Sequence[tuple[int, float]],
    key_of: Callable[[int], object],
    preference: Callable[[int], tuple[int, ...]],
    pool: int,
) -> list[tuple[int, float]]:
    """The ranked (item, score) list with the items of one `key_of` (identical text) as one: the one `preference`
    puts first (lowest), at the group's first place with its score; at most `pool` items."""
    groups: dict[object, list[tuple[int, float]]] = {}
    for item, score in ranked:
        groups.setdefault(key_of(item), []).append((item, score))
    out = []
    for group in list(groups.values())[:pool]:
        chosen = min(group, key=lambda pair: preference(pair[0]))[0]
        out.append((chosen, group[0][1]))
    return out


def demote(
    ranked: Sequence[tuple[int, float]],
    demoted: Callable[[int], bool],
    places: int,
    matched: Callable[[int], bool] | None = None,
) -> list[tuple[int, float]]:
    """The ranked (item, score) list with each `demoted` item `places` places further down (stable; an item not
    demoted stays before a demoted one moved to its place); a moved item's score is cut to the one ranked above it,
    so scores still fall with rank. With `matched` (the query's words found it), a demoted item moves past at most
    `places` items that are `matched` and not demoted, and never below the last of them: it gives way to pages that
    match, not to whatever the vector search ranked next."""

    def place(position: int) -> float:
        if matched is None:
            return position + places + 0.5
        below = [after for after in range(position + 1, len(ranked)) if strong[after]][:places]
        return min(position + places, below[-1]) + 0.5 if below else position + 0.25

    flags = [demoted(item) for item, _ in ranked]
    strong = [not flags[i] and (matched is None or matched(item)) for i, (item, _) in enumerate(ranked)]
    return _moved(ranked, [place(position) if flag else position for position, flag in enumerate(flags)])


def _moved(ranked: Sequence[tuple[int, float]], places: Sequence[float]) -> list[tuple[int, float]]:
    """`ranked` ordered by each item's new place (`places`, stable), each score cut to the one ranked above it so
    scores still fall with rank."""
    out: list[tuple[int, float]] = []
    for _, position in sorted((place, position) for position, place in enumerate(places)):
        item, score = ranked[position]
        out.append((item, min(score, out[-1][1]) if out else score))
    return out


def after_others(
    ranked: Sequence[tuple[int, float]], demoted: Callable[[int], bool], places: int
) -> list[tuple[int, float]]:
    """The ranked (item, score) list with each `demoted` item after the `places` items that follow it and are not
    demoted (or last, stable, where fewer follow): demote() counts places among all items, so where the demoted
    crowd the list (a page's variant in each of ten languages) they would pass few others. A moved item's score is
    cut to the one ranked above it."""
    flags = [demoted(item) for item, _ in ranked]
    others = [position for position, flag in enumerate(flags) if not flag]

    def place(position: int) -> float:
        later = bisect.bisect_right(others, position) + places - 1
        return others[later] + 0.5 if later < len(others) else len(ranked) + 0.5

    return _moved(ranked, [place(position) if flag else position for position, flag in enumerate(flags)])


def fuse_rrf(
    rankings: Sequence[Sequence[int]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[int, float]]:
    """Merge ranked id lists by weighted reciprocal rank fusion: score(id) = sum of w / (k + rank), rank 1-based."""
    scores: dict[int, float] = {}
    for index, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[index]
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def fuse_keyword_lists(lists: Sequence[Sequence[tuple[int, float]]], limit: int) -> list[tuple[int, float]]:
    """The keyword indexes' ranked lists as one (IndexReader.keyword_lists): a query reaching one index keeps its bm25
    scores; words and CJK pairs together are fused by rank, as their scores are not on one scale."""
    if len(lists) <= 1:
        return list(lists[0]) if lists else []
    return fuse_rrf([[chunk_id for chunk_id, _ in ranked] for ranked in lists])[:limit]


def diversify(ranked: Sequence[T], file_of: Callable[[T], str], per_file: int) -> list[T]:
    """Best pages first, then best sections: at most `per_file` items of one file before every other file's best
    items have had their turn; the rest keep their order after them. Stable, and the same whatever k is cut off."""
    if per_file <= 0:
        return list(ranked)
    shown: dict[str, int] = {}
    first: list[T] = []
    later: list[T] = []
    for item in ranked:
        path = file_of(item)
        count = shown.get(path, 0)
        (first if count < per_file else later).append(item)
        shown[path] = count + 1
    return first + later


def fuse_zscores(
    lists: Sequence[Sequence[tuple[int, float]]], weights: Sequence[float], pool: int = POOL
) -> list[tuple[int, float]]:
    """Merge scored lists (higher is better) by the weighted sum of each list's standardised scores: (score - the
    list's lowest) / the list's standard deviation, so an item missing from a list counts as its lowest, 0.

    A list whose n scores are all equal (one keyword match, say) is read as n ones among `pool` candidates where
    the rest are zeros: each of its items counts 1 / sqrt(p (1 - p)) with p = n / pool (about 10 for one match in
    100), so a word found in only one chunk still counts. Ties break by id."""
    standard: list[tuple[dict[int, float], float]] = []
    for pairs, weight in zip(lists, weights, strict=True):
        if not pairs:
            continue
        mean = sum(score for _, score in pairs) / len(pairs)
        spread = math.sqrt(sum((score - mean) ** 2 for _, score in pairs) / len(pairs))
        lowest = min(score for _, score in pairs)
        share = len(pairs) / max(pool, len(pairs))
        alike = 1.0 / math.sqrt(share * (1.0 - share)) if share < 1.0 else 1.0
        z = {item: (score - lowest) / spread if spread > 0 else alike for item, score in pairs}
        standard.append((z, weight))
    items = {item for z, _ in standard for item in z}
    fused = {item: sum(weight * z.get(item, 0.0) for z, weight in standard) for item in items}
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))


def vector_weight(content_words: int) -> float:
    """The vector list's weight against the keyword list's 1 for a query of this many content words."""
    return LONG_QUERY_VECTOR_WEIGHT if content_words > LONG_QUERY_WORDS else Z_VECTOR_WEIGHT


def fuse_hybrid(
    vector: Sequence[tuple[int, float]],
    keyword: Sequence[tuple[int, float]],
    weight: float = Z_VECTOR_WEIGHT,
    pool: int = POOL,
) -> list[tuple[int, float]]:
    """The hybrid ranking: vector (id, cosine similarity) and keyword (id, -bm25, higher is better) candidates by
    fuse_zscores, the keyword scores raised to KEYWORD_POWER first, so a list's few strong matches stand further
    above its many weak ones; the vector list weighs `weight` (vector_weight()) against the keyword list's 1."""
    peaked = [(item, max(score, 0.0) ** KEYWORD_POWER) for item, score in keyword]
    return fuse_zscores([vector, peaked], weights=(weight, 1.0), pool=pool)


def path_match(query_terms: Collection[str], path_terms: Collection[str]) -> float:
    """Share of the query's terms that the file's path names (0..1): `docs/concepts/dependencies.md` for "add a
    dependency", once both are stemmed alike."""
    if not query_terms:
        return 0.0
    return sum(term in path_terms for term in query_terms) / len(query_terms)


def add_signal(
    ranked: Sequence[tuple[int, float]], signal: Callable[[int], float], weight: float
) -> list[tuple[int, float]]:
    """Each item's fused score plus `weight` x its signal (0..1: its path's match, the share of the query's literals
    its text holds or its heading defines; -1 takes it off: a changelog's section on another release), never below
    0 (fused scores are not negative: demote_thin compares them by share), re-sorted (ties by id)."""
    scored = [(item, max(0.0, score + weight * signal(item))) for item, score in ranked]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


def above_floor(
    vector: Sequence[tuple[int, float]], keyword_ids: Collection[int], floor: float | None
) -> list[tuple[int, float]]:
    """The vector candidates (id, cosine similarity) worth keeping: those at or over `floor`, and any the keyword
    search found too. With no floor, all of them."""
    if floor is None:
        return list(vector)
    return [(item, score) for item, score in vector if score >= floor or item in keyword_ids]
