"""The on-disk index: apsw + sqlite-vec vectors + FTS5 keywords, with numbered migrations (R-S1, R-S2, R-F3)."""

from scree.store.db import Store
from scree.store.keywords import fts_match_expression
from scree.store.records import FileState, NewChunk, StoredChunk
from scree.store.schema import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "FileState", "NewChunk", "Store", "StoredChunk", "fts_match_expression"]
