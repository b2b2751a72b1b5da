"""Free user text to a safe FTS5 MATCH expression: its words, each double-quoted, joined by OR (R-M3)."""

from __future__ import annotations

import re

# Letters and digits only: the same split unicode61 makes, and nothing FTS5 could read as syntax once quoted.
_WORD = re.compile(r"[^\W_]+")
MAX_QUERY_TERMS = 32  # a pasted page of text still makes a bounded query


def fts_match_expression(query: str) -> str | None:
    """`"word1" OR "word2" …` for the distinct words of `query` (first spelling kept); None when it has no words.

    Quoting makes AND, NEAR, `*`, `-` and `:` plain words; the regex never passes a `"` through, so no quote can
    close a term early. Lone surrogates and control characters are not words and are dropped.
    """
    terms: dict[str, str] = {}
    for match in _WORD.finditer(query):
        word = match.group(0)
        terms.setdefault(word.casefold(), word)
        if len(terms) >= MAX_QUERY_TERMS:
            break
    if not terms:
        return None
    return " OR ".join(f'"{word}"' for word in terms.values())
