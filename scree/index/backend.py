"""Which store holds a folder's index, decided here and nowhere else: the one place a reader or a writer is opened
from the settings."""

from __future__ import annotations

from scree.config import Settings
from scree.store import IndexReader, IndexRecord, IndexWriter, SqliteReader, SqliteWriter


def open_reader(settings: Settings) -> IndexReader:
    """The index, opened to read; the empty stand-in (`exists` False) while none has been built."""
    return SqliteReader.open(settings.db_path, settings.folder)


def open_writer(settings: Settings) -> IndexWriter:
    """The index, opened (created, migrated) to write; callers hold its writer lock (index.writing prepares the
    folder around this)."""
    return SqliteWriter.open(settings.db_path, settings.folder)


def record_of(settings: Settings) -> IndexRecord:
    """What the index records of its progress; nothing when it cannot be read (SqliteReader.record_of)."""
    return SqliteReader.record_of(settings.db_path, settings.folder)
