"""The index's storage behind one reader and one writer interface (contract.py: IndexReader, IndexWriter).

SQLite (R-S1, R-S2, R-F3): sqlite_files.py (the file set), connection.py (apsw, pragmas), schema.py (schema and
numbered migrations), sqlite_index.py (the open file: transactions, meta), sqlite_reader.py and sqlite_writer.py (the
two interfaces), writes.py and searches.py (their SQL), vector_cache.py (the machine-wide cache's SQL); apsw +
sqlite-vec + FTS5. SQL only: nothing here knows of search, ranking, scope or embedders."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from scree.store.contract import IndexReader, IndexRecord, IndexWriter, KeywordMatch, KeywordTerm, PathFilter
from scree.store.records import FileState, NewChunk, StoredChunk

if TYPE_CHECKING:
    from scree.store.schema import SCHEMA_VERSION
    from scree.store.sqlite_reader import SqliteReader
    from scree.store.sqlite_writer import SqliteWriter

# Loaded on first use: importing scree.store (or one of its light modules, as serve's supervisor imports
# sqlite_files) must not load apsw and sqlite-vec before the MCP handshake (R-M8).
_LAZY = {
    "SCHEMA_VERSION": "scree.store.schema",
    "SqliteReader": "scree.store.sqlite_reader",
    "SqliteWriter": "scree.store.sqlite_writer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scree.store' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "SCHEMA_VERSION",
    "FileState",
    "IndexReader",
    "IndexRecord",
    "IndexWriter",
    "KeywordMatch",
    "KeywordTerm",
    "NewChunk",
    "PathFilter",
    "SqliteReader",
    "SqliteWriter",
    "StoredChunk",
]
