"""The docs map kept with a collection in PostgreSQL (issue 31), read at a reader's MCP handshake when there is no
map file beside a local index (a reader on another machine than the writer's): within a deadline, never a wait."""

from __future__ import annotations

import threading

import psycopg

from scree.errors import ScreeError
from scree.store.pg_connect import connect

_SQL = "select m.summary from scree_docs_maps m join scree_collections k on k.id = m.collection where k.name = %s"


def stored_docs_map(url: str, collection: str, deadline_s: float) -> str | None:
    """The collection's docs map (the map file's JSON); None when it has none, the database fails, or it does not
    answer within `deadline_s` (the lookup is left to finish on its own thread, which nothing waits for)."""
    found: list[str | None] = []

    def look() -> None:
        found.append(_read(url, collection))

    thread = threading.Thread(target=look, name="docs-map", daemon=True)
    thread.start()
    thread.join(deadline_s)
    return found[0] if found else None


def _read(url: str, collection: str) -> str | None:
    try:
        conn = connect(url)
    except ScreeError:
        return None
    try:
        if conn.execute("select to_regclass('scree_docs_maps')").fetchone() in (None, (None,)):
            return None  # a database of an older schema, not migrated by a writer yet
        row = conn.execute(_SQL, (collection,)).fetchone()
        return str(row[0]) if row else None
    except psycopg.Error:
        return None
    finally:
        conn.close()
