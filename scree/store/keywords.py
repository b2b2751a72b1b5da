"""Free user text to a safe FTS5 MATCH expression: its words, each double-quoted, joined by OR (R-M3)."""

from __future__ import annotations

import re

# Letters and digits only: the same split unicode61 makes, and nothing FTS5 could read as syntax once quoted.
_WORD = re.compile(r"[^\W_]+")
MAX_QUERY_TERMS = 32  # a pasted page of text still makes a bounded query
# English function words, left out of an OR-query that has other words: each matches most chunks, so it costs FTS5
# a long posting list (bm25 over "the" is most of a 100 ms query at 100k chunks) and adds almost nothing to the rank.
# Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), lower case; a query of only these keeps them.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
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

    STOPWORDS are dropped unless the query has nothing else. Quoting makes AND, NEAR, `*`, `-` and `:` plain words;
    the regex never passes a `"` through, so no quote can close a term early. Lone surrogates and control
    characters are not words and are dropped.
    """
    terms = content_words(query)
    if not terms:
        return None
    return " OR ".join(f'"{word}"' for word in terms)
