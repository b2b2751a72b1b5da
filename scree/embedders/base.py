"""The one embedder contract (R-E1): identity, dimensions, batch size, and embed(texts) with batching done here."""

from __future__ import annotations

import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Sequence

KEYWORD_ONLY = "none:keyword-only"  # the identity an index built with no embedder records (R-E6)


def pack_vector(values: Sequence[float]) -> bytes:
    """L2-normalise `values` and pack them as little-endian float32, the form sqlite-vec stores."""
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return struct.pack(f"<{len(values)}f", *(v / norm for v in values))


def unpack_vector(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 4}f", blob)


class Embedder(ABC):
    """Turns texts into unit-length float32 vectors (packed bytes). Subclasses implement embed_batch only."""

    kind: str = ""  # "api", "local" or "hash"
    model_id: str = ""
    dims: int = 0
    batch_size: int = 64

    @property
    def identity(self) -> str:
        """What the index records as the model that made it (R-E1, R-F3)."""
        return f"{self.kind}:{self.model_id}"

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        """Embed at most `batch_size` texts in one call; one packed vector per text, in order."""

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Embed any number of texts in batches of `batch_size`."""
        out: list[bytes] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self.embed_batch(texts[start : start + self.batch_size]))
        return out

    def embed_query(self, text: str) -> bytes:
        """Embed one search query (the API client overrides this for its shorter query timeouts, R-E4)."""
        return self.embed_batch([text])[0]

    def close(self) -> None:
        """Release sockets or memory; the default has nothing to release."""
        return None
