"""The deterministic test double (R-E1): words hashed into signed buckets, no model, no network, no numpy."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

from scree.embedders.base import Embedder, pack_vector
from scree.errors import ConfigError

HASH_MODEL_ID = "hash-v1"
DEFAULT_HASH_DIMS = 64
HASH_BATCH_SIZE = 64  # R-E2: the same batch size as the API, so batching code paths match
BUCKETS_PER_TOKEN = 3  # a few buckets per word, so two words rarely collide on all of them
TOKEN_RE = re.compile(r"\w+")
BUCKET_BYTES = 4
TOKEN_CACHE_SIZE = 65_536


@lru_cache(maxsize=TOKEN_CACHE_SIZE)
def _token_buckets(token: str, dims: int) -> tuple[tuple[int, float], ...]:
    """The (bucket, sign) pairs one word adds to; blake2b so it is stable across runs and machines."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=BUCKETS_PER_TOKEN * BUCKET_BYTES).digest()
    pairs = []
    for i in range(BUCKETS_PER_TOKEN):
        word = int.from_bytes(digest[i * BUCKET_BYTES : (i + 1) * BUCKET_BYTES], "little")
        pairs.append(((word >> 1) % dims, 1.0 if word & 1 else -1.0))
    return tuple(pairs)


def hash_vector_values(text: str, dims: int) -> list[float]:
    """The unnormalised vector of `text`: texts that share words point the same way.

    Text with no words (or whose words cancel out) gets a fixed non-zero vector, so every text has a direction.
    """
    values = [0.0] * dims
    for token in TOKEN_RE.findall(text.lower()):
        for bucket, sign in _token_buckets(token, dims):
            values[bucket] += sign
    if not any(values):
        values[0] = 1.0
    return values


class HashEmbedder(Embedder):
    """A fast, deterministic embedder for tests and benchmarks of everything around the model."""

    kind = "hash"

    def __init__(self, dims: int = DEFAULT_HASH_DIMS, *, batch_size: int = HASH_BATCH_SIZE) -> None:
        if dims < 1 or batch_size < 1:
            raise ConfigError(f"hash embedder needs dims >= 1 and batch_size >= 1, not {dims} and {batch_size}")
        self.model_id = HASH_MODEL_ID
        self.dims = dims
        self.batch_size = batch_size

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        return [pack_vector(hash_vector_values(text, self.dims)) for text in texts]

    def __repr__(self) -> str:
        return f"HashEmbedder(dims={self.dims})"
