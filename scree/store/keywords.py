"""FTS5 planning: how the store runs the OR-query of a search's terms (scree.search.query says which terms).

On a large index, an OR-query with words in half of the rows or more runs as two queries over the rows with its
rarer words (split_query): FTS5 ranks every row an OR-query matches, so a word in every chunk would rank them all
(`python -m bench.store_search` times keyword queries of common words at 10k and 100k chunks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scree.store.contract import KeywordTerm

# FTS5's bm25 (fts5_aux.c): a term in at least half of the rows gets idf FLOOR_IDF, and no term adds more than
# idf x (BM25_K1 + 1) to a row's score, however often the row has it.
BM25_K1 = 1.2
FLOOR_IDF = 1e-6


def fts5_term(term: KeywordTerm) -> str:
    """`term` as one FTS5 string: `"word"`, or `"tok"*` for a prefix. Quoted, AND, NEAR, `-`, `^` and `:` are plain
    words, and a `"` inside is doubled, as FTS5 reads it, so no quote can close the string early."""
    quoted = '"' + term.word.replace('"', '""') + '"'
    return quoted + "*" if term.prefix else quoted


def fts5_expression(terms: Sequence[KeywordTerm] | Sequence[str]) -> str | None:
    """The FTS5 OR-query of `terms` (`"word1" OR "tok"*`; CJK pairs as `"中文" OR "文本"`); None when there are
    none."""
    quoted = [fts5_term(KeywordTerm(term) if isinstance(term, str) else term) for term in terms]
    return " OR ".join(quoted) if quoted else None


def floor_weight(rows: int, hits: int) -> bool:
    """Whether FTS5 gives a term found in `hits` of `rows` rows the floor idf: log((N - n + 0.5) / (n + 0.5)) <= 0."""
    return 2 * hits >= rows


@dataclass(frozen=True, slots=True)
class SplitQuery:
    """An OR-query of some rarer terms and some common ones, as two queries whose bm25 scores are the OR-query's
    to the last bit, over only the rows with a rarer term: bm25 is a sum over the expression's phrases in their
    order, a phrase a row lacks adds 0.0, and each phrase's idf is its own. The rows matching common terms alone
    score less than `bound` (the most each common term can add), so when the top `limit` of `rare` and `both`
    together score above it, they are the OR-query's top `limit` (ties by rowid either way)."""

    rare: str | None  # rows with a rarer term and no common one; None when every term is common
    both: str | None  # rows with both kinds, the phrases in the OR-query's order
    bound: float
    floor_only: bool  # every common term is floor-weight (in half of the rows or more)


def fts5_idf(rows: int, hits: int) -> float:
    """bm25's idf of a term found in `hits` of `rows` rows, as FTS5 computes it."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else FLOOR_IDF


def split_query(terms: Sequence[str], hits: Sequence[int], rows: int) -> SplitQuery | None:
    """The split of the OR-query of `terms` (each found in `hits` of the `rows` rows) that sets its floor-weight
    terms apart; None when it has none, or when no `A AND B` keeps the phrases' order."""
    common = _floor_terms(hits, rows)
    return _split(terms, common, len(common) * FLOOR_IDF, floor_only=True) if common else None


def wide_split(terms: Sequence[str], hits: Sequence[int], rows: int, limit: int) -> SplitQuery | None:
    """A split that sets apart the most frequent terms too, as many as the rarer ones likely outscore: those whose
    largest contributions add up to less than the idf of the rarer term whose rows (with the rarer ones') reach
    `limit`. None when it would set no more apart than split_query, or when the order cannot be kept."""
    idf = [fts5_idf(rows, n) for n in hits]
    common = _floor_terms(hits, rows)
    floor = len(common)
    for index in sorted(range(len(terms)), key=lambda i: -hits[i]):
        if index in common:
            continue
        trial = common | {index}
        rest = sorted((i for i in range(len(terms)) if i not in trial), key=lambda i: hits[i])
        reach = next((i for n, i in enumerate(rest) if sum(hits[j] for j in rest[: n + 1]) >= limit), None)
        if reach is None or sum(idf[i] for i in trial) * (BM25_K1 + 1.0) >= idf[reach]:
            break
        common = trial
    if len(common) == floor:
        return None
    return _split(terms, common, sum(idf[i] for i in common), floor_only=False)


def _floor_terms(hits: Sequence[int], rows: int) -> set[int]:
    """Positions of the terms FTS5 weighs FLOOR_IDF (found in half of the rows or more)."""
    return {index for index, n in enumerate(hits) if floor_weight(rows, n)}


def _split(terms: Sequence[str], common_at: set[int], idf_sum: float, *, floor_only: bool) -> SplitQuery | None:
    """The two queries for the terms at `common_at` set apart; `idf_sum`: their idfs added up."""
    bound = idf_sum * (BM25_K1 + 1.0) * (1 + 1e-9)
    common = [term for index, term in enumerate(terms) if index in common_at]
    rare = [term for index, term in enumerate(terms) if index not in common_at]
    if not rare:
        return SplitQuery(None, None, bound, floor_only)
    orders = [list(terms), [*terms[1:2], *terms[:1], *terms[2:]]]  # the first two may swap: 0 + a + b = b + a
    if rare + common in orders:
        both = f"{_group(rare)} AND {_group(common)}"
    elif common + rare in orders:
        both = f"{_group(common)} AND {_group(rare)}"
    else:
        return None
    return SplitQuery(f"{_group(rare)} NOT {_group(common)}", both, bound, floor_only)


def _group(terms: Sequence[str]) -> str:
    return terms[0] if len(terms) == 1 else "(" + " OR ".join(terms) + ")"


def fts5_varints(data: bytes) -> list[int]:
    """The SQLite varints in `data` (FTS5's averages record: rows, then tokens per column), in order."""
    values: list[int] = []
    position = 0
    while position < len(data):
        value = 0
        for index in range(9):
            byte = data[position]
            position += 1
            if index == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80 or position >= len(data):
                break
        values.append(value)
    return values
