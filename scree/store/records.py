"""The records the store takes and gives back: a file's state, a chunk to write, a chunk as stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scree.content.chunking import Span


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows of a file: content hash (R-S3 compares it), and mtime/size (R-M2's cheap re-check)."""

    path: str
    sha256: str
    mtime_ns: int
    size: int

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> FileState:
        """A row of (path, sha256, mtime_ns, size), from either backend."""
        return cls(str(row[0]), str(row[1]), int(row[2]), int(row[3]))


@dataclass(frozen=True, slots=True)
class NewChunk(Span):
    """A chunk to write, with its vector: packed little-endian float32, unit length, the index's dimensions."""

    text_hash: str
    vector: bytes

    @classmethod
    def of(cls, chunk: Span, text_hash: str, vector: bytes) -> NewChunk:
        """The chunk chunking cut, to write with its text's hash and vector."""
        return cls(chunk.ordinal, chunk.heading, chunk.text, chunk.start_line, chunk.end_line, text_hash, vector)


# The columns both backends select a stored chunk by, in the order StoredChunk.of_row reads them.
CHUNK_COLUMNS = "id, path, ordinal, heading, text, start_line, end_line, text_hash"


@dataclass(frozen=True, slots=True)
class StoredChunk(Span):
    """A chunk as the index holds it; `id` is never reused for another chunk (AUTOINCREMENT)."""

    text_hash: str
    id: int = field(kw_only=True)
    path: str = field(kw_only=True)

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> StoredChunk:
        """A row of CHUNK_COLUMNS, from either backend."""
        return cls(
            id=int(row[0]),
            path=str(row[1]),
            ordinal=int(row[2]),
            heading=str(row[3]),
            text=str(row[4]),
            start_line=int(row[5]),
            end_line=int(row[6]),
            text_hash=str(row[7]),
        )
