"""Pick and build the embedder the settings call for, importing its module only when it is needed (R-E1, R-E6)."""

from __future__ import annotations

from collections.abc import Sequence

from scree.config import Settings
from scree.embedders.base import Embedder
from scree.embedders.idle import ReleasedWhenIdle
from scree.errors import ConfigError, ModelMissingError
from scree.logs import get_logger

log = get_logger(__name__)

HASH_DIMS = 64
SEMANTIC_OFF = (
    'semantic search is off: no API key and no offline model; run "scree model install" '
    "(or set OPENROUTER_API_KEY) to search by meaning"
)
# An index built keyword-only before a model or key was set up: the model is there now, the vectors are not.
NEEDS_VECTORS = (
    "semantic search is off: this index was built for keyword search only, before an embeddings model was set up; "
    'run "scree reindex" to add its vectors (scree serve and watch do it when they next start)'
)


def embedder_available(settings: Settings) -> bool:
    """Whether an embedder with vectors could be built now, without loading one: a key for the API, the test double,
    or the offline model's files in place (their checksums are checked when it loads)."""
    kind = settings.resolved_embedder()
    if kind == "api":
        return bool(settings.api_key)
    if kind == "hash":
        return True
    from scree.embedders.model_install import PINNED_FILES, model_dir

    folder = model_dir(settings)
    return all((folder / name).is_file() for name in PINNED_FILES)


class KeywordOnlyEmbedder(Embedder):
    """No key and no offline model (R-E6): chunks are indexed for keyword search only, with no vectors."""

    kind = "none"
    model_id = "keyword-only"
    dims = 0

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        return [b"" for _ in texts]


def make_embedder(
    settings: Settings, *, keyword_fallback: bool = False, release_idle_s: float | None = None
) -> Embedder:
    """The API client when a key is configured, else the offline model; SCREE_EMBEDDER=hash selects the test double.

    With `keyword_fallback` (writers), a missing offline model gives the keyword-only embedder instead of an error,
    so an index still gets built; the next sync after `scree model install` rebuilds it with vectors. With
    `release_idle_s` (long-lived processes), the offline model's memory goes back that long after its last use.
    """
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
    from scree.embedders.model_install import check_model, model_dir

    if keyword_fallback:
        try:
            check_model(model_dir(settings))
        except ModelMissingError as exc:
            log.warning("indexing for keyword search only", reason=str(exc))
            return KeywordOnlyEmbedder()
    local = LocalEmbedder.from_settings(settings)
    if release_idle_s is None:
        return local
    return ReleasedWhenIdle(local, release_idle_s)


def make_query_embedder(settings: Settings, release_idle_s: float | None = None) -> Embedder:
    """The embedder a reader embeds search queries with (issue 24). With the offline model, the index's writer embeds
    them with the copy it already holds (scree.embedders.remote_query), and this reader loads its own (released
    `release_idle_s` after its last use) only when no writer answers; every other kind is make_embedder's."""
    kind = settings.resolved_embedder()
    if kind != "local":
        return make_embedder(settings, release_idle_s=release_idle_s)
    from scree.embedders import query_wire

    path = str(settings.query_socket_path)
    if not query_wire.supported() or not query_wire.address_fits(path):
        return make_embedder(settings, release_idle_s=release_idle_s)
    from scree.embedders.remote_query import RemoteQueryEmbedder
    from scree.index.lock import lock_holder

    identity, dims = expected_identity(settings)
    kind, model_id = identity.split(":", 1)
    return RemoteQueryEmbedder(
        path,
        (kind, model_id, dims),
        lambda: make_embedder(settings, release_idle_s=release_idle_s),
        lambda: lock_holder(settings.lock_path) is not None,
    )


def expected_identity(settings: Settings) -> tuple[str, int]:
    """The (identity, dims) an index built with these settings records, without loading any model."""
    kind = settings.resolved_embedder()
    if kind == "api":
        return f"api:{settings.api_model}", settings.api_dims
    if kind == "hash":
        return "hash:hash-v1", HASH_DIMS
    return "local:all-MiniLM-L6-v2", 384
