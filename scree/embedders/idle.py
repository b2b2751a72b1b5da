"""An embedder wrapper that lets a model's memory go after a quiet spell: the offline model holds ~45 MB while
loaded, and a writer that watches (or a reader between bursts of searches) would otherwise keep it for good.

The wrapped embedder's close() must leave it usable: the next embed loads the model again (LocalEmbedder does).
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Sequence

from scree.embedders.base import Embedder
from scree.heap import trim_heap
from scree.logs import get_logger

log = get_logger(__name__)

WRITER_IDLE_S = 60.0  # the writer embeds in bursts after edits; a reload costs ~0.5 s of a debounced sync
READER_IDLE_S = 600.0  # an agent searches in bursts; the first query after a long pause pays the reload


class ReleasedWhenIdle(Embedder):
    """Delegates to `inner`; `after_s` seconds after its last use it closes `inner` and hands the heap back."""

    def __init__(self, inner: Embedder, after_s: float) -> None:
        self.inner = inner
        self.kind, self.model_id, self.dims, self.batch_size = inner.kind, inner.model_id, inner.dims, inner.batch_size
        self.after_s = after_s
        self._lock = threading.Lock()
        self._busy = 0
        self._last_used = time.monotonic()
        self._loaded = False
        self._timer: threading.Timer | None = None

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        self._enter()
        try:
            return self.inner.embed_batch(texts)
        finally:
            self._leave()

    def embed_query(self, text: str) -> bytes:
        self._enter()
        try:
            return self.inner.embed_query(text)
        finally:
            self._leave()

    def close(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
            self._loaded = False
        if timer is not None:
            timer.cancel()
        self.inner.close()

    @property
    def loaded(self) -> bool:
        """Whether the inner model may hold memory now (used since the last release)."""
        return self._loaded

    def _enter(self) -> None:
        with self._lock:
            self._busy += 1
            self._loaded = True

    def _leave(self) -> None:
        with self._lock:
            self._busy -= 1
            self._last_used = time.monotonic()
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.after_s, self._release_if_idle)
            self._timer.daemon = True
            self._timer.start()

    def _release_if_idle(self) -> None:
        with self._lock:
            idle = time.monotonic() - self._last_used
            if self._busy or not self._loaded or idle < self.after_s:
                return
            self._loaded = False
            self._timer = None
            # under the lock: an embed that starts now waits, then loads the model afresh
            self.inner.close()
        gc.collect()
        trim_heap()
        log.info("model released after a quiet spell", model=self.identity, idle_s=round(idle, 1))
