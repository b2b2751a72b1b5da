"""Free user text to safe FTS5 MATCH expressions: its words, each double-quoted, joined by OR (R-M3); and text
without spaces between words (Chinese, Japanese, Korean) as overlapping character pairs, for the CJK keyword table.

unicode61 keeps a whole run of CJK characters as one token, so "搜索" never matched inside "…空格，搜索应该…".
Each CJK run is instead indexed as its overlapping pairs ("中文文本" -> "中文 文文 文本", as Lucene's CJK
analyzer does) in a table of its own, and a query's runs are OR-ed pairs ranked by bm25. On Rust by Example's
Chinese and Japanese docs (198 pages each, a page's title as the query, and "如何使用<title>？" /
"<title>の使い方は？" as a question): pairs MRR@5 0.764 / 0.621 (zh titles / questions) and 0.768 / 0.653 (ja),
against the unicode61 table's 0.797 / 0.221 and 0.775 / 0.041, and FTS5's trigram tokenizer's 0.629 / 0.449 and
0.711 / 0.576 (a trigram cannot match the many two-character words: 搜索, 变量, 闭包).

And on a large index, an OR-query with words in half of the rows or more as two queries over the rows with its
rarer words (split_query): FTS5 ranks every row an OR-query matches, so a word in every chunk cost 70 ms at 100k.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

# Letters and digits only: the same split unicode61 makes, and nothing FTS5 could read as syntax once quoted.
_WORD = re.compile(r"[^\W_]+")
# Scripts written without spaces between words (and Hangul, whose particles attach to words): hiragana, katakana
# (with its phonetic extensions and half-width forms), CJK ideographs (with extension A and compatibility
# ideographs) and Hangul syllables.
_CJK_RUN = re.compile("[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+")
MAX_QUERY_TERMS = 32  # a pasted page of text still makes a bounded query
# English function words, left out of an OR-query that has other words: each matches most chunks, so it costs FTS5
# a long posting list (bm25 over "the" is most of a 100 ms query at 100k chunks) and adds almost nothing to the rank.
# Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), lower case; a query of only these keeps them.
# With them, the words a question or a comparison is phrased in (#11): rare in documentation, so bm25 weighs them
# high ("versus" is in 8 lines of uv's docs), yet they name no topic. Docs train set, keyword mode: MRR 0.744 -> 0.769,
# Hit@3 0.817 -> 0.833; SciFact train keyword nDCG@10 0.7077 -> 0.7082 (its claims are not questions).
STOPWORDS = frozenset(
    (
        "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
        "this to was will with "
        "how what why when where which who whom do does did can could should would i me my we our you your vs versus"
    ).split()
)


def content_words(query: str) -> list[str]:
    """The distinct words of `query` that carry its meaning: STOPWORDS left out unless there is nothing else."""
    content: dict[str, str] = {}
    common: dict[str, str] = {}
    for match in _WORD.finditer(query):
        word = match.group(0)
        key = word.casefold()
        (common if key in STOPWORDS else content).setdefault(key, word)
        if len(content) >= MAX_QUERY_TERMS:
            break
    return list((content or common).values())


def fts_match_expression(query: str) -> str | None:
    """`"word1" OR "word2" …` for the distinct words of `query` (first spelling kept); None when it has no words.
    Its terms are fts_match_terms(query)."""
    terms = fts_match_terms(query)
    return " OR ".join(terms) if terms else None


def fts_match_terms(query: str) -> list[str]:
    """The quoted FTS5 terms of `query`'s distinct words, in order (first spelling kept); [] when it has none.

    CJK runs are left out (cjk_match_expression covers them). STOPWORDS are dropped unless the query has nothing
    else. A word written with a `*` right after it (`tok*`) is a prefix (`"tok"*`), as a searcher means it.
    Quoting makes AND, NEAR, `-`, `^` and `:` plain words; the regex never passes a `"` through, so no quote can
    close a term early. Lone surrogates and control characters are not words and are dropped.
    """
    content: dict[str, str] = {}
    common: dict[str, str] = {}
    text = _CJK_RUN.sub(" ", query)  # CJK runs go to cjk_match_expression
    for match in _WORD.finditer(text):
        word = match.group(0)
        key = word.casefold()
        if key in STOPWORDS:
            common.setdefault(key, f'"{word}"')
            continue
        prefix = text.startswith("*", match.end())
        content.setdefault(key + "*" if prefix else key, f'"{word}"*' if prefix else f'"{word}"')
        if len(content) >= MAX_QUERY_TERMS:
            break
    return list((content or common).values())


# Issue 34: symbols the tokenizers drop (FTS5's unicode61 and PostgreSQL's to_tsvector both split on them), looked
# for as substrings instead: at most MAX_SYMBOL_TERMS of a query, each a non-ASCII symbol (emoji, arrows, ©, ±) with
# the marks that make it one emoji (variation selectors, skin tones, keycaps, tags, a ZWJ and the next symbol).
MAX_SYMBOL_TERMS = 4
_ZWJ = "\u200d"
_VARIATION = "\ufe0e\ufe0f"  # text or emoji presentation of the symbol before
_EMOJI_MARKS = frozenset(_VARIATION + "\u20e3") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
_TAGS = range(0xE0020, 0xE0080)  # the letters of a subdivision flag (England's, Scotland's)
_REGIONAL = range(0x1F1E6, 0x1F200)  # two of these are one country's flag


def _is_symbol(character: str) -> bool:
    return not character.isascii() and unicodedata.category(character)[0] == "S"


def symbol_terms(query: str) -> list[str]:
    """The distinct symbols of `query` no keyword index holds a token for ("🚀", "👩‍💻", "→"), first MAX_SYMBOL_TERMS
    in order: what the search looks for as substrings of chunk text (SqliteReader, PgReader.keyword_lists)."""
    found: dict[str, None] = {}
    end = len(query)
    at = 0
    while at < end and len(found) < MAX_SYMBOL_TERMS:
        if not _is_symbol(query[at]):
            at += 1
            continue
        stop = at + 1
        if ord(query[at]) in _REGIONAL and stop < end and ord(query[stop]) in _REGIONAL:
            stop += 1
        while stop < end:
            character = query[stop]
            if character in _EMOJI_MARKS or ord(character) in _TAGS:
                stop += 1
            elif character == _ZWJ and stop + 1 < end and _is_symbol(query[stop + 1]):
                stop += 2
            else:
                break
        found.setdefault(query[at:stop].rstrip(_VARIATION), None)  # "❤️" finds "❤" too, as "❤" finds "❤️"
        at = stop
    return list(found)


def cjk_pairs(text: str) -> list[str]:
    """The overlapping character pairs of every CJK run in `text`, in order; a run of one character is itself."""
    pairs: list[str] = []
    for match in _CJK_RUN.finditer(text):
        run = match.group(0)
        if len(run) == 1:
            pairs.append(run)
        else:
            pairs.extend(run[i : i + 2] for i in range(len(run) - 1))
    return pairs


def cjk_index_text(text: str) -> str:
    """What the CJK keyword table indexes for `text`: its CJK pairs joined by spaces ("" when it has none)."""
    if not _may_have_cjk(text):
        return ""
    return " ".join(cjk_pairs(text))


# The UTF-8 lead bytes of U+3000..U+DFFF and U+F000..U+FFFF, where every _CJK_RUN character lies.
_NOT_CJK_LEAD_BYTES = bytes(b for b in range(256) if not (0xE3 <= b <= 0xED or b == 0xEF))


def _may_have_cjk(text: str) -> bool:
    """A quick no for the chunks without CJK, run on every chunk written: for 1.3 KB, 0.2 us when it is ASCII and
    7 us otherwise (a UTF-8 lead byte check), against 30-45 us for a _CJK_RUN search."""
    if text.isascii():
        return False
    return bool(text.encode("utf-8", "surrogatepass").translate(None, _NOT_CJK_LEAD_BYTES))


def cjk_match_expression(query: str) -> str | None:
    """`"中文" OR "文本" …` for the distinct CJK pairs of `query` (at most MAX_QUERY_TERMS); None when it has none."""
    pairs = list(dict.fromkeys(cjk_pairs(query)))[:MAX_QUERY_TERMS]
    return " OR ".join(f'"{pair}"' for pair in pairs) if pairs else None


# FTS5's bm25 (fts5_aux.c): a term in at least half of the rows gets idf FLOOR_IDF, and no term adds more than
# idf x (BM25_K1 + 1) to a row's score, however often the row has it.
BM25_K1 = 1.2
FLOOR_IDF = 1e-6


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
