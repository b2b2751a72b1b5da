"""Stage 1 of the two-stage vector search in memory: every chunk's sign bits in one numpy array, and the chunks
nearest to a query's bits by Hamming distance, in the order SQL's `order by distance limit n` gives (ties by id).

XOR and popcount over the array stand in for a SQL scan (vec_distance_hamming over every row, then SQLite's
sorter); `python -m bench.store_search` times this stage alone and the two-stage search it starts. The array (dims / 8
bytes a chunk) is read once per change of the index, only where the two-stage search runs (above
EXACT_SEARCH_MAX_CHUNKS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw

from scree.store.schema import VECTOR_BITS_TABLE, VECTOR_TABLE

if TYPE_CHECKING:
    import numpy as np

# The whole table in one row: SQLite concatenates the blobs (group_concat of blobs keeps their bytes) and the ids,
# both in rowid order, in one scan, rather than a Python tuple per row.
_LOAD_SQL = (
    f"select cast(group_concat(bits, '') as blob), group_concat(chunk_id, ' '), count(*), min(length(bits)), "
    f"max(length(bits)) from {VECTOR_BITS_TABLE}"
)
# Where vec0 keeps each vector: its block (a row of the blocks table) and place in it, by chunk id (rowid order).
_PLACES_SQL = (
    "select group_concat(rowid, ' '), group_concat(coalesce(chunk_id, -1), ' '), "
    f"group_concat(coalesce(chunk_offset, -1), ' ') from {VECTOR_TABLE}_rowids"
)


@dataclass(frozen=True, slots=True)
class SignBits:
    """The sign bits of every chunk: `ids` ascending; `words` one column of unsigned integers per id (the array
    transposed, so popcounts add up row by row rather than each chunk's words being summed);
    `blocks` and `offsets`, where vec0 keeps each id's vector (-1: no vector, or not read); `located`: whether
    they were read."""

    ids: np.ndarray
    words: np.ndarray
    blocks: np.ndarray
    offsets: np.ndarray
    located: bool

    @classmethod
    def load(cls, conn: apsw.Connection, *, places: bool) -> SignBits:
        """Every row of the sign-bit table; with `places`, where vec0 keeps each vector too (its shadow tables)."""
        import numpy as np

        row = conn.execute(_LOAD_SQL).fetchone()
        assert row is not None
        blob, ids_text, count, shortest, longest = row
        if not count:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, np.zeros((1, 0), dtype=np.uint8), empty, empty, places)
        if shortest != longest:
            raise ValueError(f"{VECTOR_BITS_TABLE} holds rows of {shortest} and of {longest} bytes")
        ids = np.fromstring(str(ids_text), dtype=np.int64, sep=" ")  # parsed by numpy, not str.split()
        words = np.frombuffer(bytes(blob), dtype=word_type(int(longest))).reshape(int(count), -1)
        if len(ids) > 1 and not bool((ids[1:] > ids[:-1]).all()):  # a table scan is in rowid order; make sure
            order = np.argsort(ids, kind="stable")
            ids, words = ids[order], words[order]
        blocks = offsets = np.full(len(ids), -1, dtype=np.int64)
        if places:
            blocks, offsets = _places(conn, ids)
        return cls(ids, np.ascontiguousarray(words.T), blocks, offsets, places)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, query_bits: bytes, count: int) -> list[int]:
        """Ids of the `count` chunks nearest to `query_bits` (vec_quantize_binary of the query) by Hamming
        distance, nearest first, ties by id."""
        picked: list[int] = self.ids[self._nearest(query_bits, count)].tolist()
        return picked

    def nearest_located(self, query_bits: bytes, count: int) -> tuple[list[int], list[int], list[int]]:
        """nearest(), only the ids with a vector, as (ids, their blocks, their places in the blocks)."""
        positions = self._nearest(query_bits, count)
        positions = positions[self.blocks[positions] >= 0]
        ids: list[int] = self.ids[positions].tolist()
        return ids, self.blocks[positions].tolist(), self.offsets[positions].tolist()

    def _nearest(self, query_bits: bytes, count: int) -> np.ndarray:
        import numpy as np

        if count <= 0 or not len(self.ids):
            return np.zeros(0, dtype=np.int64)
        query = np.frombuffer(query_bits, dtype=self.words.dtype)
        if query.shape[0] != self.words.shape[0]:
            width = self.words.itemsize * self.words.shape[0]
            raise ValueError(f"query bits of {len(query_bits)} bytes, the index holds {width} a chunk")
        distances = popcount(self.words ^ query[:, None]).sum(axis=0, dtype=np.int32)
        return nearest_positions(distances, count)


def _places(conn: apsw.Connection, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each of `ids`' vector's block and place in it, -1 for an id vec0 does not hold."""
    import numpy as np

    row = conn.execute(_PLACES_SQL).fetchone()
    blocks = np.full(len(ids), -1, dtype=np.int64)
    offsets = np.full(len(ids), -1, dtype=np.int64)
    if row is None or row[0] is None:
        return blocks, offsets
    rowids, their_blocks, their_offsets = (np.fromstring(str(text), dtype=np.int64, sep=" ") for text in row)
    order = np.argsort(rowids, kind="stable")
    rowids, their_blocks, their_offsets = rowids[order], their_blocks[order], their_offsets[order]
    at = np.minimum(np.searchsorted(rowids, ids), len(rowids) - 1)
    held = rowids[at] == ids
    blocks[held], offsets[held] = their_blocks[at[held]], their_offsets[at[held]]
    return blocks, offsets


def word_type(width: int) -> type[np.unsignedinteger]:
    """The widest unsigned integer a row of `width` bytes splits into evenly (fewer, larger XORs)."""
    import numpy as np

    for size, kind in ((8, np.uint64), (4, np.uint32), (2, np.uint16)):
        if width % size == 0:
            return kind
    return np.uint8


def popcount(words: np.ndarray) -> np.ndarray:
    """The number of set bits in each element (numpy 2's bitwise_count; a byte table on numpy 1)."""
    import numpy as np

    counter = getattr(np, "bitwise_count", None)
    if counter is not None:
        counted: np.ndarray = counter(words)
        return counted
    return popcount_by_bytes(words)


def popcount_by_bytes(words: np.ndarray) -> np.ndarray:
    """popcount through a table of the 256 byte values, for numpy 1 (no bitwise_count)."""
    import numpy as np

    table = np.array([bin(n).count("1") for n in range(256)], dtype=np.uint8)
    as_bytes = np.ascontiguousarray(words).view(np.uint8).reshape(*words.shape, words.itemsize)
    summed: np.ndarray = table[as_bytes].sum(axis=-1, dtype=np.int64)
    return summed


def nearest_positions(distances: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` smallest distances, smallest first and equal ones by position: what SQLite's
    `order by distance limit count` returns over rows scanned in position order."""
    import numpy as np

    if count >= len(distances):
        return np.argsort(distances, kind="stable")
    edge = np.partition(distances, count - 1)[count - 1]
    below = np.flatnonzero(distances < edge)
    ties = np.flatnonzero(distances == edge)[: count - len(below)]
    chosen = np.concatenate([below, ties])  # equal distances never span both parts, so a stable sort keeps ids
    ordered: np.ndarray = chosen[np.argsort(distances[chosen], kind="stable")]
    return ordered
