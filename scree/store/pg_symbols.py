"""Symbols no keyword index keeps (emoji, arrows: KeywordMatch.symbols) found in PostgreSQL as substrings of chunk
text, by the same bounded scan and score as the SQLite backend's (searches.symbol_sql), so both feed the search's
fusion the same list (issue 34)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from scree.store.searches import Dialect, symbol_sql

POSTGRES_DIALECT = Dialect("%(s{n})s", "strpos", "least")


def symbol_matches(
    conn: psycopg.Connection[Any], collection: int, terms: Sequence[str], limit: int, paths: list[str] | None
) -> list[tuple[int, float]]:
    """(chunk id, score) of the `limit` best chunks of `collection` holding one of the symbols `terms`, best first;
    with `paths`, of the chunks of those files."""
    if not terms or limit <= 0:
        return []
    scope = "and collection = %(c)s" + (" and path = any(%(paths)s)" if paths is not None else "")
    sql = symbol_sql(len(terms), 0, POSTGRES_DIALECT, scope).format(table="scree_chunks", limit="%(limit)s")
    params: dict[str, Any] = {"c": collection, "paths": paths, "limit": limit}
    params.update((f"s{n}", term) for n, term in enumerate(terms))
    rows = conn.execute(sql, params).fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]
