"""The records the store takes and gives back: a file's state, a chunk to write, a chunk as stored."""

from __future__ import annotations

from dataclasses import dataclass, field

from scree.content.chunking import Span


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows of a file: content hash (R-S3 compares it), and mtime/size (R-M2's cheap re-check)."""

    path: str
    sha256: str
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class NewChunk(Span):
    """A chunk to write, with its vector: packed little-endian float32, unit length, the index's dimensions."""

    text_hash: str
    vector: bytes

    @classmethod
    def of(cls, chunk: Span, text_hash: str, vector: bytes) -> NewChunk:
        """The chunk chunking cut, to write with its text's hash and vector."""
        return cls(chunk.ordinal, chunk.heading, chunk.text, chunk.start_line, chunk.end_line, text_hash, vector)


@dataclass(frozen=True, slots=True)
class StoredChunk(Span):
    """A chunk as the index holds it; `id` is never reused for another chunk (AUTOINCREMENT)."""

    text_hash: str
    id: int = field(kw_only=True)
    path: str = field(kw_only=True)
