"""Build the embedder the settings call for from its row in scree.embedders.kinds (R-E1, R-E6)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scree.config import Settings
from scree.embedders.base import Embedder
from scree.embedders.idle import ReleasedWhenIdle
from scree.embedders.kinds import chosen, expected_identity
from scree.errors import ModelMissingError
from scree.logs import get_logger

log = get_logger(__name__)

SEMANTIC_OFF = (
    'semantic search is off: no API key and no offline model; run "scree model install" '
    "(or set OPENROUTER_API_KEY) to search by meaning"
)
# An index built keyword-only before a model or key was set up: the model is there now, the vectors are not.
NEEDS_VECTORS = (
    "semantic search is off: this index was built for keyword search only, before an embeddings model was set up; "
    'run "scree reindex" to add its vectors (scree serve and watch do it when they next start)'
)


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
    """The embedder of the row SCREE_EMBEDDER names (auto: the API when a key is configured, else the offline model).

    With `keyword_fallback` (writers), a missing offline model gives the keyword-only embedder instead of an error,
    so an index still gets built; the next sync after `scree model install` rebuilds it with vectors. With
    `release_idle_s` (long-lived processes), the offline model's memory goes back that long after its last use.
    """
    kind = chosen(settings)
    if keyword_fallback and kind.verify is not None:
        try:
            kind.verify(settings)
        except ModelMissingError as exc:
            log.warning("indexing for keyword search only", reason=str(exc))
            return KeywordOnlyEmbedder()
    embedder = kind.make(settings)
    if release_idle_s is None or not kind.releases_idle:
        return embedder
    return ReleasedWhenIdle(embedder, release_idle_s)


def make_query_embedder(
    settings: Settings, writer_running: Callable[[], bool], release_idle_s: float | None = None
) -> Embedder:
    """The embedder a reader embeds search queries with (issue 24). With a kind whose row shares queries (the offline
    model), the index's writer embeds them with the copy it already holds (scree.embedders.remote_query), and this
    reader loads its own (released `release_idle_s` after its last use) only when no writer answers; every other kind
    is make_embedder's. `writer_running` says whether a process holds the index's writer.lock (one is starting: worth
    waiting for)."""
    if not chosen(settings).shares_queries:
        return make_embedder(settings, release_idle_s=release_idle_s)
    from scree.embedders import query_wire

    path = str(settings.query_socket_path)
    if not query_wire.supported() or not query_wire.address_fits(path):
        return make_embedder(settings, release_idle_s=release_idle_s)
    from scree.embedders.remote_query import RemoteQueryEmbedder

    identity, dims = expected_identity(settings)
    name, model_id = identity.split(":", 1)
    return RemoteQueryEmbedder(
        path,
        (name, model_id, dims),
        lambda: make_embedder(settings, release_idle_s=release_idle_s),
        writer_running,
    )
