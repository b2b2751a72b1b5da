"""The machine-wide vector cache's pure rules (issue 24): its keys, when and how much it evicts, and whether a vector
read back from it can be trusted (issue 34). No I/O here.

A vector depends on the model that made it, its dimensions (an API model can be asked for fewer), the embedded text,
and, as the index records it, the version of the embedded text's recipe (chunking.EMBED_FORMAT, R-F3). The key covers
all four, so one file can hold every model's vectors and a model change never reads another model's vector.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable

KEY_BYTES = 16  # 128 bits of SHA-256: a collision among even a billion vectors is out of reach
HIGH_WATER = 0.9  # past this share of the bound, a write evicts ...
LOW_WATER = 0.75  # ... the least recently used vectors down to this share: evictions are rare and batched
CHECKSUM_BYTES = 8  # per row, over key and vector: a flipped byte SQLite's integrity check cannot see is caught
UNIT_TOLERANCE = 1e-3  # every embedder stores unit-length float32 vectors (embedders/base.pack_vector)


def space_of(identity: str, dims: int, embed_format: str) -> bytes:
    """The part of every key that says which embedding it is: model identity, dimensions, embed format."""
    return hashlib.sha256(f"{identity}\0{dims}\0{embed_format}".encode("utf-8", "surrogatepass")).digest()


def cache_key(space: bytes, text_hash: str) -> bytes:
    """One vector's key: its embedding `space` and the index's text hash of the embedded text (R-E7)."""
    return hashlib.sha256(space + text_hash.encode("ascii", "replace")).digest()[:KEY_BYTES]


def keys_for(space: bytes, text_hashes: Iterable[str]) -> dict[bytes, str]:
    """Key -> text hash, for looking a batch up and mapping the answers back."""
    return {cache_key(space, h): h for h in text_hashes}


def bound_bytes(cache_mb: float, bytes_per_mb: int) -> int:
    """The setting (SCREE_VECTOR_CACHE_MB) in bytes; 0 turns the cache off."""
    return max(0, int(cache_mb * bytes_per_mb))


def rows_to_evict(used_bytes: int, rows: int, bound: int) -> int:
    """How many least recently used rows to delete so the file's used pages fall to LOW_WATER of `bound`; 0 while
    they are under HIGH_WATER. Rows are taken as equal in size (one model's vectors are), averaged over the file."""
    if bound <= 0 or rows <= 0 or used_bytes <= bound * HIGH_WATER:
        return 0
    per_row = used_bytes / rows
    return min(rows, math.ceil((used_bytes - bound * LOW_WATER) / per_row))


def row_checksum(key: bytes, vector: bytes) -> bytes:
    """The checksum stored beside a vector: it ties the vector to its key, so neither can change unseen."""
    return hashlib.blake2b(key + vector, digest_size=CHECKSUM_BYTES).digest()


def vector_fault(key: bytes, vector: bytes, checksum: bytes, vector_bytes: int | None = None) -> str | None:
    """Why a row read from the cache must not be used (a checksum that does not match, a wrong length, a value that
    is not finite, a length other than one), or None for a vector safe to copy into an index."""
    if checksum != row_checksum(key, vector):
        return "checksum mismatch"
    if (vector_bytes is not None and len(vector) != vector_bytes) or not vector or len(vector) % 4:
        return "wrong length"
    # no numpy: the API writer never loads it (R-P3); hypot is one C loop, and NaN or infinity makes it non-finite
    norm = math.hypot(*struct.unpack(f"<{len(vector) // 4}f", vector))
    if not math.isfinite(norm):
        return "not finite"
    if abs(norm * norm - 1.0) > 2 * UNIT_TOLERANCE:
        return "not unit length"
    return None
