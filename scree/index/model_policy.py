"""Which model an index gets (R-F3): recorded on a new index, refused when it differs, a keyword-only index given
vectors once a model is there. The store records and checks; this decides, so the store knows no embedder."""

from __future__ import annotations

from scree.content.chunking import EMBED_FORMAT
from scree.embedders.base import KEYWORD_ONLY, Embedder
from scree.errors import IndexMismatchError
from scree.logs import get_logger
from scree.store.contract import REINDEX_HINT, IndexReader, IndexWriter, model_mismatch

log = get_logger(__name__)


def prepare(writer: IndexWriter, embedder: Embedder) -> None:
    """Record the embedder on a new index, or refuse one made by another model (R-F3); a keyword-only index
    has no vectors to lose, so once a model exists it is rebuilt with vectors."""
    recorded = writer.model()
    if recorded is None:
        writer.set_model(embedder.identity, embedder.dims)
    elif recorded[0] == KEYWORD_ONLY and embedder.identity != KEYWORD_ONLY:
        log.info("keyword-only index gets vectors now", model=embedder.identity)
        writer.reset(embedder.identity, embedder.dims)
    else:
        check_model(writer, embedder.identity, embedder.dims)


def check_model(index: IndexReader, identity: str, dims: int) -> None:
    """Raise IndexMismatchError when the index records another model, dimension count or embedded-text format:
    new rows beside old ones would mix vectors of two kinds of text (R-F3)."""
    recorded = index.model()
    if recorded is not None and recorded != (identity, dims):
        raise model_mismatch(index.where, recorded, identity, dims)
    if recorded is not None and index.embed_format() != EMBED_FORMAT:
        raise IndexMismatchError(
            f"index {index.where} was built by an older scree (embedded text format {index.embed_format()}, "
            f"now {EMBED_FORMAT}: headings without anchors, links without targets, code blocks cut to their first "
            f"lines); {REINDEX_HINT}"
        )
