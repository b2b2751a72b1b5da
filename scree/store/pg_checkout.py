"""Whether a folder is a checkout of a collection (issue 31), the one definition that the writer lock (which never
lets a process write a collection its folder is no checkout of: scree.index.pg_lock) and a reader (which re-checks
hits against its own files only in a checkout: scree.store.pg_reader) both use.

A folder is a checkout of a collection when it holds any of the collection's files (the first PATHS_CHECKED); it is
none when the collection holds files and the folder holds none of them (a replica's empty folder, another
repository's folder named with --collection). A new or empty collection decides nothing yet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

PATHS_CHECKED = 2000  # the collection's files looked for in the folder: one found there is enough


def holds_files(conn: psycopg.Connection[Any], collection: str, folder: str) -> bool | None:
    """True when the folder holds any of the collection's files, False when it holds none of them; None while the
    collection (or the database) holds no file, so nothing is decided yet."""
    if conn.execute("select to_regclass('scree_files')").fetchone() in (None, (None,)):
        return None
    rows = conn.execute(
        "select f.path from scree_files f join scree_collections k on k.id = f.collection where k.name = %s "
        "order by f.path limit %s",
        (collection, PATHS_CHECKED),
    ).fetchall()
    if not rows:
        return None
    root = Path(folder)
    return any(_in_folder(root / row[0]) for row in rows)


def not_a_checkout(conn: psycopg.Connection[Any], collection: str, folder: str) -> str | None:
    """Why the folder is no checkout of the collection, which this process must therefore never write (a sync from
    it would remove every file); None when the collection is new or empty, or the folder holds any of its files."""
    if holds_files(conn, collection, folder) is False:
        return read_only_reason(collection, folder)
    return None


def _in_folder(path: Path) -> bool:
    """Whether the file is there. A folder on its way that cannot be read counts as holding it: a sync keeps the
    rows of what it cannot read, so it never empties the collection from there (is_file raises on EACCES)."""
    try:
        return path.is_file()
    except OSError:
        return True


def read_only_reason(collection: str, folder: str) -> str:
    return (
        f"serving collection {collection} read-only: {folder} holds none of its files, so it is no checkout of it "
        "and a sync from here would empty it; run the writer (`scree watch`) on a checkout of the collection"
    )
