"""The records a search produces (its hits and the result with its notes, shared by CLI and MCP), and how copies
of one page fold into the hit shown for them (#11, issues 25 and 32): translations, other versions, identical
twins. Pure: ranked ids and stored rows in, the ranking to show out; the engine reads the store and orchestrates."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from scree.content.chunking import HEADING_SEPARATOR
from scree.content.languages import Copy, LanguageTrees
from scree.content.versions import NEWER, OLD, names_version, newest_named, release_order, says_same, version_key
from scree.search.query import Query
from scree.store.records import StoredChunk

# A translated chunk leading its page's family among the first this many candidates gives way to the shown copy's
# chunk at its place (same_place): two page reads each, on the hits that can be shown
PLACED_WINDOW = 30


@dataclass(frozen=True, slots=True)
class Hit:
    """One search hit; `start`/`end` are None when the chunk's text is gone from its file (stale)."""

    path: str
    start: int | None
    end: int | None
    heading: str
    score: float
    text: str
    stale: bool = False
    also: tuple[str, ...] = ()  # "path:a-b" of identical chunks elsewhere (R-M4)
    version: str | None = None  # a version other than the current one: "3.4 (old)", "next (unreleased)" (issue 32)
    # issue 34: (n, of) for a part of a line too long for one chunk (chunking.line_parts), None for whole lines
    part: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)
    dropped_paths: tuple[str, ...] = ()  # files the re-check dropped; the writer should re-check them (R-M2)

    @property
    def note(self) -> str | None:
        return " ".join(self.notes) if self.notes else None


def newest_first(trees: LanguageTrees, copies: Sequence[StoredChunk]) -> list[StoredChunk]:
    """The copies also= names in the order an agent wants them (issue 32): those of no version tree or of the
    current one as found, then the versions ahead of it, then the old ones, newest first (oauth2-proxy's 7.14.x,
    7.13.x... where the paths' order had named 7.10.x first and 7.14.x among "and 5 more"); an old tree without a
    number (legacy/) last. A Docusaurus translation of a version counts as that version, after its own page
    (Karmada's `i18n/zh/…/version-v1.13/` copies had come first, oldest first)."""

    def key(copy: StoredChunk) -> tuple[int, bool, tuple[list[int], list[int]], bool]:
        tree = trees.version_tree(copy.path)
        if tree is None or tree.status not in (NEWER, OLD):
            return 0, False, ([], []), False
        translated = not tree.holds(copy.path)  # after the version's own page
        return (1 if tree.status == NEWER else 2), not version_key(tree.version), release_order(tree), translated

    return sorted(copies, key=key)


def other_version(trees: LanguageTrees, rows: dict[int, StoredChunk], chunk_id: int, named: Collection[str]) -> bool:
    """A chunk of a version other than the current one, or of a current page named for an older version
    (versions rule 6: upgrade notes to an old release) unless the query names that version (`named`)."""
    row = rows.get(chunk_id)
    if row is None:
        return False
    copy = trees.copy(row.path)
    if copy is not None and copy.version is not None:
        return not trees.named_version(row.path, named)
    superseded = trees.versions.superseded.get(row.path)
    return superseded is not None and not names_version(newest_named(named), superseded, page=True)


def fold_translations(
    ranked: list[tuple[int, float]],
    rows: dict[int, StoredChunk],
    trees: LanguageTrees,
    query: Query,
    page_chunks: Callable[[str], list[StoredChunk]],
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
    hit can name those copies in also= (the agent learns that they exist). `page_chunks` reads a page's chunks from
    the index (_current_stand_ins); `rows` gains those it adds."""
    folded: dict[int, list[int]] = {}
    if not trees.active:
        return ranked, folded
    wanted = query.language
    words = query.folded_words
    named = query.versions
    ranked = list(ranked)  # gains the chunks `placed` looks up in the index
    position_of = {chunk_id: position for position, (chunk_id, _) in enumerate(ranked)}
    read: dict[str, list[StoredChunk]] = {}

    def chunks_of(path: str) -> list[StoredChunk]:
        if path not in read:
            read[path] = page_chunks(path)
        return read[path]

    def placed(row: StoredChunk, shown: str) -> int | None:
        """The position in `ranked` of `shown`'s chunk at the place `row`, its translation's chunk, holds in its
        page (same_place), appended with the last score where it was no candidate; None where none is known."""
        found = same_place(row, chunks_of(row.path), chunks_of(shown))
        if found is None:
            return None
        if found.id not in position_of:
            position_of[found.id] = len(ranked)
            ranked.append((found.id, ranked[-1][1]))
            rows[found.id] = found
        return position_of[found.id]

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
        place = placed if positions[0] < PLACED_WINDOW else None
        stands_for.update(_fold_family(positions, ranked, rows, copies, trees, wanted, words, named, place))
    ranked = _current_stand_ins(ranked, rows, copies, stands_for, trees, words, page_chunks, named)
    if stands_for:
        ranked, folded = _regroup(ranked, stands_for, lambda chunk_id: rows[chunk_id].path)
    return ranked, folded


def _current_stand_ins(
    ranked: list[tuple[int, float]],
    rows: dict[int, StoredChunk],
    copies: dict[int, Copy],
    stands_for: dict[int, int],
    trees: LanguageTrees,
    words: set[str],
    page_chunks: Callable[[str], list[StoredChunk]],
    named: Collection[str],
) -> list[tuple[int, float]]:
    """Issue 32: an old version's chunk whose current page was not among the candidates, or not with the chunk
    that says the same thing, gives way to that chunk all the same (the current page's chunk under the same
    heading, else any, that says_same): it is looked up in the index, added to `ranked` and `rows` and named in
    `stands_for`. Returns the longer `ranked`."""
    position_of = {chunk_id: position for position, (chunk_id, _) in enumerate(ranked)}
    pages: dict[str, list[StoredChunk]] = {}
    out = list(ranked)
    for position, copy in copies.items():
        row = rows[ranked[position][0]]
        if copy.version is None or position in stands_for or trees.named_version(row.path, named):
            continue
        version = trees.versions.copy(row.path)
        counterpart = version.counterpart if version is not None else None
        if counterpart is None:
            continue
        if counterpart not in pages:
            pages[counterpart] = page_chunks(counterpart)
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


def _fold_family(
    positions: list[int],
    ranked: list[tuple[int, float]],
    rows: dict[int, StoredChunk],
    copies: dict[int, Copy],
    trees: LanguageTrees,
    wanted: str | None,
    words: set[str],
    named: Collection[str],
    placed: Callable[[StoredChunk, str], int | None] | None = None,
) -> dict[int, int]:
    """One page's chunks among the candidates: position -> the position of the chunk shown in its place (a copy
    in a version tree the query names first: LanguageTrees.preference). The translations' chunks give way to the
    shown copy's chunk under the heading of the family's first chunk, else (`placed`) at the place that chunk holds
    in its page, else to its best."""

    def path(position: int) -> str:
        return rows[ranked[position][0]].path

    paths = {path(p) for p in positions}
    if len(paths) < 2:
        return {}
    rank = {each: trees.preference(each, wanted, named) for each in paths}
    shown = min(paths, key=lambda each: (rank[each], each))
    language = copies[next(p for p in positions if path(p) == shown)].language
    own = [p for p in positions if path(p) == shown]
    first = rows[ranked[positions[0]][0]]
    stand_in = next((p for p in own if rows[ranked[p][0]].heading == first.heading), None)
    if stand_in is None and placed is not None and copies[positions[0]].language != language:
        stand_in = placed(first, shown)
    if stand_in is None:
        stand_in = own[0]
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
                or _older_section(copies[p], copies[q], mine, rows[ranked[q][0]])
            ),
            None,
        )
        if match is not None:
            out[p] = match
    return out


def same_place(row: StoredChunk, page: Sequence[StoredChunk], original: Sequence[StoredChunk]) -> StoredChunk | None:
    """The chunk of `original` at the place `row` holds in `page`, its translation: the first chunk of the section
    in the same place, where both pages' sections (each run of chunks under one heading trail, in order) nest alike;
    None where they do not (a translation behind its original) or `row` is not in `page`. OpenTelemetry's Korean
    glossary entry "용어집 > 용어 > 스팬(Span)" stood for the English glossary's best chunk, "Span link", for "What
    is a span?"; its place is the English entry "Span"."""
    mine, theirs = _sections(page), _sections(original)
    if [depth for depth, _ in mine] != [depth for depth, _ in theirs]:
        return None
    index = next((at for at, (_, ids) in enumerate(mine) if row.id in ids), None)
    if index is None:
        return None
    first = theirs[index][1][0]
    return next(chunk for chunk in original if chunk.id == first)


def _sections(chunks: Sequence[StoredChunk]) -> list[tuple[int, list[int]]]:
    """A page's sections in order: (the depth of its heading trail, its chunks' ids)."""
    out: list[tuple[int, list[int]]] = []
    heading: str | None = None
    for chunk in sorted(chunks, key=lambda chunk: chunk.ordinal):
        if chunk.heading != heading or not out:
            out.append((chunk.heading.count(HEADING_SEPARATOR) if chunk.heading else -1, []))
            heading = chunk.heading
        out[-1][1].append(chunk.id)
    return out


def _older_section(mine: Copy, better: Copy, row: StoredChunk, other: StoredChunk) -> bool:
    """Whether `row`, an old version's chunk, is an older text of a section that `other`, a chunk of a preferred
    old version, holds too (the same heading, whatever each says): a section the current page no longer has, or
    rewrote, is shown in its newest old text with the older ones in also= (pnpm's "Using Corepack", gone from the
    current installation page, in 10.x beside the 7.x text it rewrote), as a removed page's old copies are."""
    both_old = mine.version is not None and better.version is not None
    return both_old and bool(row.heading) and row.heading == other.heading


def preferred_twin(
    row: StoredChunk,
    twins: Sequence[StoredChunk],
    trees: LanguageTrees,
    wanted: str | None,
    kept: Callable[[str], bool],
    named: Collection[str],
) -> StoredChunk:
    """Of `row` and its identical chunks in other files, the one in the copy to show (issue 25: an identical
    old version or translation was shown and the current page named only in also=): the query's language, else
    the original, the current version first; `row` itself on a tie or when the better one's file dropped out (`kept`
    says no). `twins`: the chunks of identical text in other files; `named`: the versions the query names (a page
    named for one of them comes first: versions rule 7)."""
    if not twins:
        return row
    candidates = [row, *twins]
    keys = [trees.preference(chunk.path, wanted, named) for chunk in candidates]  # each copy's key once
    best = candidates[keys.index(min(keys))]
    if best is row or min(keys) == keys[0]:
        return row
    return best if kept(best.path) else row


def _regroup(
    ranked: list[tuple[int, float]], stands_for: dict[int, int], path_of: Callable[[int], str]
) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
    """`ranked` with each chunk's place taken by the chunk shown for it (`stands_for`, by position, followed to its
    end), at the best place of those it stands for; and the shown chunk -> the best chunk of each other file it
    stands for, in rank order."""

    def top(position: int) -> int:
        seen = {position}  # never round a cycle for ever: a search that hangs takes the MCP channel with it
        while position in stands_for and stands_for[position] not in seen:
            position = stands_for[position]
            seen.add(position)
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
