"""Which store holds a folder's index, decided here and nowhere else (issue 31): the SQLite file by default, a
collection in PostgreSQL when SCREE_DATABASE_URL is set. Every reader, writer, writer lock and index record is opened
from the settings through this module."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from contextlib import contextmanager

from scree.config import Settings
from scree.index.lock import IndexLock, WriterLock, lock_holder
from scree.store import IndexReader, IndexRecord, IndexWriter
from scree.store.sqlite_files import remove_db

REBUILD_SUFFIX = ".rebuild"  # reindex --all builds the new index beside the old: <db>.rebuild, <name>.rebuild


def shared(settings: Settings) -> bool:
    """The index is a collection in a PostgreSQL database."""
    return settings.database_url is not None


def open_reader(settings: Settings) -> IndexReader:
    """The index, opened to read; the empty stand-in (`exists` False) while none has been built. A collection whose
    files the folder does not hold (a server without a checkout) is read as the writer decided (IndexReader.shared)."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.store.pg_reader import PgReader

        return PgReader.open(settings.database_url, collection_name(settings), settings.folder)
    from scree.store.sqlite_reader import SqliteReader  # apsw, loaded once an index is opened (R-M8)

    return SqliteReader.open(settings.db_path, settings.folder)


def open_writer(settings: Settings) -> IndexWriter:
    """The index, opened (created, migrated) to write; callers hold its writer lock and pass its generation
    (fenced())."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.store.pg_writer import PgWriter

        name = collection_name(settings)
        return PgWriter.open_writer(settings.database_url, name, settings.folder, settings.writer_generation)
    from scree.store.sqlite_writer import SqliteWriter

    return SqliteWriter.open(settings.db_path, settings.folder)


@contextmanager
def fresh_writer(settings: Settings) -> Iterator[IndexWriter]:
    """`reindex --all`: an empty index beside this one, removed after (its rows moved over by replace_with)."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.store.pg_writer import PgWriter, drop_collection

        name = collection_name(settings) + REBUILD_SUFFIX
        drop_collection(settings.database_url, name)
        try:
            with PgWriter.open_writer(settings.database_url, name, settings.folder, None) as writer:
                yield writer
        finally:
            drop_collection(settings.database_url, name)
        return
    from scree.store.sqlite_writer import SqliteWriter

    fresh_path = settings.db_path.with_name(settings.db_path.name + REBUILD_SUFFIX)
    remove_db(fresh_path)
    try:
        with SqliteWriter.open(fresh_path, settings.folder) as writer:
            yield writer
    finally:
        remove_db(fresh_path)


def index_present(settings: Settings) -> bool:
    """Whether there may be an index to read: the SQLite file exists; a database is always asked."""
    return settings.database_url is not None or settings.db_path.exists()


def record_of(settings: Settings) -> IndexRecord:
    """What the index records of its progress; nothing when it cannot be read."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.store.pg_reader import PgReader

        return PgReader.record_of(settings.database_url, collection_name(settings), settings.folder)
    from scree.store.sqlite_reader import SqliteReader

    return SqliteReader.record_of(settings.db_path, settings.folder)


def writer_lock(settings: Settings, role: str | None = None) -> IndexLock:
    """The index's writer lock: writer.lock beside the SQLite file, an advisory lock in the database."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.index.pg_lock import PgWriterLock

        return PgWriterLock(settings.database_url, collection_name(settings), str(settings.folder), role)
    return WriterLock(settings.lock_path, role)


def lock_refusal(lock: IndexLock) -> str | None:
    """Why `lock` can never be taken by this process (a read-only database role), after a failed try_acquire."""
    refusal = getattr(lock, "refusal", None)
    return refusal if isinstance(refusal, str) else None


def read_only_reason(settings: Settings) -> str | None:
    """Why this process may only read the index (`scree status`): a read-only database role, or a folder that is no
    checkout of the collection it names; None for a local index or a process that may write."""
    if settings.database_url is None:
        return None
    from scree.index.collection import collection_name
    from scree.index.pg_lock import why_read_only

    return why_read_only(settings.database_url, collection_name(settings), str(settings.folder))


def lock_lost(lock: IndexLock) -> bool:
    """Whether a held lock has gone by itself (a database's session lock, with its connection); writer.lock's flock
    cannot."""
    lost = getattr(lock, "lost", None)
    return bool(lost()) if callable(lost) else False


def fenced(settings: Settings, lock: IndexLock) -> Settings:
    """The settings a writer under `lock` runs with: for a database, the lock's generation, which fences its writes."""
    generation = getattr(lock, "generation", None)
    return dataclasses.replace(settings, writer_generation=generation) if generation is not None else settings


def holder(settings: Settings) -> int | None:
    """The pid of the process holding the writer lock now, None when nobody does."""
    if settings.database_url is not None:
        return writer_lock(settings).holder_pid()
    return lock_holder(settings.lock_path) if settings.lock_path.exists() else None


def holder_where(settings: Settings) -> str | None:
    """The lock holder's host when it is another machine (issue 31: notes name it beside the pid), else None."""
    if settings.database_url is None:
        return None
    from scree.index.pg_lock import PgWriterLock

    lock = writer_lock(settings)
    host = lock.holder_host() if isinstance(lock, PgWriterLock) else None
    return host if host and host != socket.gethostname() else None


def lock_name(settings: Settings) -> str:
    """What messages call the writer lock: writer.lock's path, or the collection's lock in its database."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.store.pg_connect import where

        return f"the writer lock of collection {collection_name(settings)} in {where(settings.database_url)}"
    return str(settings.lock_path)


def index_name(settings: Settings) -> str:
    """What `scree status` and messages call the index: its file, or its collection and server."""
    if settings.database_url is not None:
        from scree.index.collection import collection_name
        from scree.store.pg_connect import where

        return f"collection {collection_name(settings)} in {where(settings.database_url)}"
    return str(settings.db_path)
