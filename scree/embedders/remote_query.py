"""The reader's offline embedder (issue 24): search queries are embedded by the index's writer, which already holds
the model, so N sessions in one folder hold one copy of it instead of N+1 (~73 MB each).

One query is one connection to the writer's query socket (scree.embedders.query_wire). Whatever goes wrong there
(no socket, a refused connection, a writer killed mid-query, a reply late past REPLY_S, another user at the other
end, another model) costs that query one retry or a local load, never a hang: the reader then loads its own copy
(`fallback`, released after a quiet spell as before) and embeds the query itself. A writer that did not answer in
time is left alone for QUIET_S, so a stopped writer does not cost every query REPLY_S. While the index's lock is held
but no socket answers (a writer starting, or the first-sync process handing over to the one that watches, R-P3),
a reader with no model of its own waits up to HANDOVER_S for it rather than load a copy for the rest of its life.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence

from scree.embedders import query_wire
from scree.embedders.base import Embedder
from scree.logs import get_logger

log = get_logger(__name__)

CONNECT_S = 0.5  # a live writer accepts at once: its query thread does nothing else
REPLY_S = 10.0  # R-E4's query deadline; a query waits at most one sync slice and, after an idle release, a model load
QUIET_S = 30.0  # after a writer missed REPLY_S, queries go straight to the local model this long
ATTEMPTS = 2  # a connection that broke mid-query (a writer killed) gets one more
HANDOVER_S = 3.0  # a writer that holds the lock but has no socket yet: spawn and imports take ~1 s on a busy machine
HANDOVER_POLL_S = 0.1


class RemoteQueryEmbedder(Embedder):
    """Embeds queries through the writer at `socket_path`; `fallback()` builds the local model when none answers."""

    def __init__(
        self,
        socket_path: str,
        identity: tuple[str, str, int],
        fallback: Callable[[], Embedder],
        writer_expected: Callable[[], bool] = lambda: False,
    ) -> None:
        """`identity`: (kind, model id, dims) of the index's model; `writer_expected()`: whether a writer holds the
        index's lock now (then a missing socket is a writer starting, worth a short wait)."""
        self.kind, self.model_id, self.dims = identity
        self.socket_path = socket_path
        self._writer_expected = writer_expected
        self._fallback_factory = fallback
        self._fallback: Embedder | None = None
        self._lock = threading.Lock()
        self._skip_until = 0.0
        self._said_local = False

    def embed_query(self, text: str) -> bytes:
        if time.monotonic() >= self._skip_until:
            vector = self._from_writer(text)
            if vector is not None:
                return vector
        return self._local().embed_query(text)

    def _from_writer(self, text: str) -> bytes | None:
        """The writer's vector for `text`, or None (said once in the log) when no writer answers it."""
        deadline: float | None = None
        failures = 0
        while True:
            try:
                return self._ask(text)
            except TimeoutError as exc:
                self._skip_until = time.monotonic() + QUIET_S
                self._note_local(f"the writer did not answer within {REPLY_S:g} s ({exc})")
                return None
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                # No socket, or a dead writer's: a writer handing over to the next (first sync done, a restart) is
                # worth HANDOVER_S while the lock is held and this reader has no model of its own yet.
                if deadline is None:
                    expected = self._fallback is None and self._writer_expected()
                    deadline = time.monotonic() + (HANDOVER_S if expected else 0.0)
                if time.monotonic() >= deadline:
                    self._note_local(f"no writer is answering ({type(exc).__name__})")
                    return None
                time.sleep(HANDOVER_POLL_S)
            except (OSError, query_wire.WireError) as exc:  # a writer gone mid-query: one more connection
                failures += 1
                if failures >= ATTEMPTS:
                    self._note_local(str(exc) or type(exc).__name__)
                    return None

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        """Readers embed queries only; anything else is the local model's."""
        return self._local().embed_batch(texts)

    def close(self) -> None:
        with self._lock:
            local, self._fallback = self._fallback, None
        if local is not None:
            local.close()

    @property
    def loaded_locally(self) -> bool:
        """Whether this reader built its own model (some query found no writer to answer it)."""
        return self._fallback is not None

    def _ask(self, text: str) -> bytes:
        identity = f"{self.kind}:{self.model_id}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_S)
            with query_wire.address(self.socket_path) as where:
                sock.connect(where)
            if not query_wire.same_user(sock):
                raise query_wire.WireError("the query socket belongs to another user")
            sock.settimeout(REPLY_S)
            sock.sendall(query_wire.request(identity, self.dims, text))
            frame = query_wire.read_frame(sock)
        vector = query_wire.vector_of(frame, identity, self.dims)
        if self._said_local:
            self._said_local = False
            log.info("the writer embeds this reader's queries again")
        return vector

    def _note_local(self, reason: str) -> None:
        if not self._said_local:
            self._said_local = True
            log.info("embedding queries in this reader: the writer did not", reason=reason)

    def _local(self) -> Embedder:
        with self._lock:
            if self._fallback is None:
                log.info("loading the offline model in this reader", socket=self.socket_path)
                self._fallback = self._fallback_factory()
            return self._fallback
