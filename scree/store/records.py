"""The records the store takes and gives back: a file's state, a chunk to write, a chunk as stored."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows of a file: content hash (R-S3 compares it), and mtime/size (R-M2's cheap re-check)."""

    path: str
    sha256: str
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk to write, with its vector: packed little-endian float32, unit length, the index's dimensions."""

    ordinal: int
    heading: str
    text: str
    start_line: int
    end_line: int
    text_hash: str
    vector: bytes


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as the index holds it; `id` is never reused for another chunk (AUTOINCREMENT)."""

    id: int
    path: str
    ordinal: int
    heading: str
    text: str
    start_line: int
    end_line: int
    text_hash: str
