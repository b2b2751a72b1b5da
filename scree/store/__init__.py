"""The on-disk index (R-S1, R-S2, R-F3): connection.py (apsw, pragmas), schema.py (schema and numbered migrations),
writes.py and searches.py (the SQL), db.py (Store: opening policy, meta, writes, queries), vector_cache.py (the
machine-wide cache's SQL), apsw + sqlite-vec + FTS5. SQL only: nothing here knows of search, ranking or scope."""

from scree.store.db import IndexRecord, Store
from scree.store.keywords import fts_match_expression
from scree.store.records import FileState, NewChunk, StoredChunk
from scree.store.schema import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "FileState", "IndexRecord", "NewChunk", "Store", "StoredChunk", "fts_match_expression"]
