"""Pick and build the embedder the settings call for, importing its module only when it is needed (R-E1, R-E6)."""

from __future__ import annotations

from scree.config import Settings
from scree.embedders.base import Embedder
from scree.errors import ConfigError

HASH_DIMS = 64


def make_embedder(settings: Settings) -> Embedder:
    """The API client when a key is configured, else the offline model; SCREE_EMBEDDER=hash selects the test double."""
    kind = settings.resolved_embedder()
    if kind == "api":
        if not settings.api_key:
            raise ConfigError("SCREE_EMBEDDER=api needs OPENROUTER_API_KEY or SCREE_API_KEY")
        from scree.embedders.api import ApiEmbedder

        return ApiEmbedder.from_settings(settings)
    if kind == "hash":
        from scree.embedders.hashed import HashEmbedder

        return HashEmbedder(dims=HASH_DIMS)
    from scree.embedders.local import LocalEmbedder

    return LocalEmbedder.from_settings(settings)


def expected_identity(settings: Settings) -> tuple[str, int]:
    """The (identity, dims) an index built with these settings records, without loading any model."""
    kind = settings.resolved_embedder()
    if kind == "api":
        return f"api:{settings.api_model}", settings.api_dims
    if kind == "hash":
        return "hash:hash-v1", HASH_DIMS
    return "local:all-MiniLM-L6-v2", 384
