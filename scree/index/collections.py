"""`scree index list` and `scree index remove --collection` for a PostgreSQL database (issue 31): its collections,
each with its model, counts, last sync and writer; one removed by its exact name, never while a writer holds it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import psycopg

from scree.errors import IndexUnavailableError, LockHeldError, ScreeError
from scree.index.pg_lock import PgWriterLock
from scree.store.pg_connect import connect, failure_line, where
from scree.store.pg_schema import current_version
from scree.store.pg_writer import drop_collection


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    model: str | None
    files: int
    chunks: int
    last_sync: str | None
    writer: str | None  # "host pid" of the last writer to take the lock


def list_collections(url: str) -> list[CollectionInfo]:
    try:
        with connect(url) as conn:
            if current_version(conn) == 0:
                return []
            rows = conn.execute(
                "select k.name, k.model, k.dims, "
                "(select count(*) from scree_files f where f.collection = k.id), "
                "(select count(*) from scree_chunks c where c.collection = k.id), "
                "k.meta->>'last_sync', k.writer_host, k.writer_pid from scree_collections k order by k.name"
            ).fetchall()
    except psycopg.Error as exc:
        raise IndexUnavailableError(failure_line(url, exc, "read")) from None
    return [
        CollectionInfo(
            str(r[0]),
            f"{r[1]} ({r[2]} dims)" if r[1] is not None else None,
            int(r[3]),
            int(r[4]),
            r[5],
            f"{r[6]} pid {r[7]}" if r[6] else None,
        )
        for r in rows
    ]


def render_collections(url: str, found: list[CollectionInfo]) -> str:
    if not found:
        return f"no collections in {where(url)}"
    lines = [f"collections in {where(url)}:"]
    for info in found:
        lines.append(
            f"  {info.name}: {info.files} files, {info.chunks} chunks, model {info.model or 'none yet'}, "
            f"last sync {info.last_sync or 'never'}" + (f", last writer {info.writer}" if info.writer else "")
        )
    return "\n".join(lines)


def as_json(info: CollectionInfo) -> dict[str, Any]:
    return asdict(info)


def remove_collection(url: str, name: str) -> str:
    """Remove the collection named exactly `name` (never a pattern); refused while a writer holds its lock."""
    if name not in {info.name for info in list_collections(url)}:
        raise ScreeError(f"no collection named exactly {name!r} in {where(url)}: `scree index list` names them")
    lock = PgWriterLock(url, name, "", role="remove")
    if not lock.try_acquire():
        if lock.refusal is not None:
            raise IndexUnavailableError(lock.refusal)
        pid = lock.holder_pid()
        raise LockHeldError(f"collection {name} is being written (pid {pid or 'unknown'}): stop its writer first", pid)
    try:
        drop_collection(url, name)
    finally:
        lock.release()
    return f"removed collection {name} from {where(url)}"
