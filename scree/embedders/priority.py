"""An embedder wrapper that lets search queries go ahead of sync batches (issue 24): the writer embeds both with one
model, its sync thread in batches of many texts and its query server one query at a time for the readers.

The model runs one forward pass at a time. A whole sync batch (128 texts of up to 256 tokens) takes seconds on two
cores, so a query waiting behind it would wait that long. Here a sync batch is run in slices of SLICE texts, and
before each slice the sync thread lets every waiting query go first: a query waits at most for the slice in hand.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from scree.embedders.base import Embedder

# Texts per forward pass of a sync batch. Measured in #24 (128 texts of ~180 words, 2 cores at load ~5): a query
# during a sync waited 22.7-33.2 s behind whole batches and 5.5-6.2 s behind slices of 32; the batch took 70.4 s in
# three runs whole against 73.5 s sliced, within that load's noise (an idle machine's slice is ~1 s).
SLICE = 32


class QueriesFirst(Embedder):
    """Delegates to `inner`; embed_query() runs before the next slice of any embed_batch()."""

    def __init__(self, inner: Embedder, slice_size: int = SLICE) -> None:
        self.inner = inner
        self.kind, self.model_id, self.dims, self.batch_size = inner.kind, inner.model_id, inner.dims, inner.batch_size
        self.slice_size = slice_size
        self._cond = threading.Condition()
        self._queries_waiting = 0
        self._running = False  # a forward pass (a slice or a query) holds the model

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        out: list[bytes] = []
        for start in range(0, len(texts), self.slice_size):
            with self._cond:
                self._cond.wait_for(lambda: not self._running and not self._queries_waiting)
                self._running = True
            try:
                out.extend(self.inner.embed_batch(texts[start : start + self.slice_size]))
            finally:
                self._done()
        return out

    def embed_query(self, text: str) -> bytes:
        with self._cond:
            self._queries_waiting += 1
            try:
                self._cond.wait_for(lambda: not self._running)
            finally:
                self._queries_waiting -= 1
            self._running = True
        try:
            return self.inner.embed_query(text)
        finally:
            self._done()

    def close(self) -> None:
        self.inner.close()

    def _done(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify_all()
