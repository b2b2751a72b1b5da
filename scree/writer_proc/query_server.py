"""The writer's query server (issue 24): readers of the same index send search queries over a Unix domain socket in
the index folder, and the writer embeds them with the model it already holds, so sessions share one copy of it.

One thread accepts connections and answers each (one query per connection) before the next. Whatever goes wrong with
one connection (a malformed frame, an unexpected exception) ends that connection only; should the accept loop itself
fail, it is started again after RESTART_S, and `failures` counts both (the `scree status` probe, probe.py, then says
whether the socket still answers). The embedder given is
the writer's own wrapped in QueriesFirst, so a query waits for at most one slice of a sync batch. A model released
after a quiet spell (ReleasedWhenIdle) loads again on the query that needs it. Each connection gets CLIENT_S to send
its query, and the peer must run as this user (query_wire.same_user), or it is dropped unanswered.

The socket is bound under a temporary name, made 0600, then renamed over `path`, so a stale socket left by a killed
writer is replaced in one step and a half-made one is never seen. close() removes it only while it is still ours.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

from scree.embedders import query_wire
from scree.embedders.base import Embedder
from scree.logs import get_logger, logged_thread
from scree.paths import FILE_MODE
from scree.redact import redact

log = get_logger(__name__)

ACCEPT_TICK_S = 0.25  # how often the accept loop looks at its stop flag
CLIENT_S = 2.0  # a reader sends its whole query at once; a connection silent this long is dropped
BACKLOG = 16
RESTART_S = 1.0  # an accept loop that failed starts again after this (a failing socket is not spun on)


class QueryServer:
    """Serves `embedder.embed_query` on the Unix socket at `path` until close()."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.path = path
        self._embedder = embedder
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._thread: threading.Thread | None = None
        self.answered = 0
        self.failures = 0  # connections that failed unexpectedly, and accept loops started again

    @classmethod
    def start(cls, path: Path, embedder: Embedder) -> QueryServer | None:
        """A running server, or None where it cannot run (no AF_UNIX, a path too long, a bind refused): readers then
        load their own model, as before."""
        if not query_wire.supported() or not query_wire.address_fits(str(path)):
            log.info("no query socket: readers embed their own queries", path=str(path))
            return None
        server = cls(path, embedder)
        try:
            server._bind()
        except OSError as exc:
            log.warning("no query socket: readers embed their own queries", path=str(path), error=str(exc))
            return None
        server._thread = logged_thread("scree-queries", server._serve_until_closed)
        server._thread.start()
        return server

    def _bind(self) -> None:
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        temporary.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with query_wire.address(str(temporary)) as where:
                sock.bind(where)
            os.chmod(temporary, FILE_MODE)
            sock.listen(BACKLOG)
            sock.settimeout(ACCEPT_TICK_S)
            os.replace(temporary, self.path)
            self._inode = os.stat(self.path).st_ino
        except OSError:
            sock.close()
            temporary.unlink(missing_ok=True)
            raise
        self._sock = sock

    def _serve_until_closed(self) -> None:
        """The thread: the accept loop, started again after RESTART_S whenever it fails, until close()."""
        while not self._stop.is_set():
            try:
                self._serve()
            except Exception as exc:  # readers would load their own model for the writer's whole life
                self.failures += 1
                log.error(
                    "the query socket failed; answering again shortly", error=redact(str(exc)), restart_s=RESTART_S
                )
                self._stop.wait(RESTART_S)

    def _serve(self) -> None:
        assert self._sock is not None
        log.debug("answering queries", path=str(self.path))
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                raise
            with conn:
                try:
                    self._answer(conn)
                except Exception as exc:  # one connection's failure ends that connection only
                    self.failures += 1
                    log.warning("query connection failed", error=redact(f"{type(exc).__name__}: {exc}"))

    def _answer(self, conn: socket.socket) -> None:
        embedder = self._embedder
        conn.settimeout(CLIENT_S)
        try:
            if not query_wire.same_user(conn):
                log.warning("query socket: refused a process of another user")
                return
            frame = query_wire.read_frame(conn)
            if frame.header.get("identity") != embedder.identity or frame.header.get("dims") != embedder.dims:
                conn.sendall(query_wire.refusal(embedder.identity, embedder.dims, "another model"))
                return
            text = frame.body.decode("utf-8", "replace")
            try:
                vector = embedder.embed_query(text)
            except Exception as exc:  # a model that cannot load: the reader loads its own (and says why)
                log.warning("query embedding failed", error=redact(str(exc)))
                conn.sendall(query_wire.refusal(embedder.identity, embedder.dims, redact(str(exc))))
                return
            conn.sendall(query_wire.reply(embedder.identity, embedder.dims, vector))
            self.answered += 1
        except (OSError, query_wire.WireError) as exc:  # a reader gone or speaking another version: its problem
            log.debug("query connection dropped", error=str(exc))

    def close(self) -> None:
        """Stop answering and remove the socket if it is still this server's (a newer writer may have replaced it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2 * ACCEPT_TICK_S)  # a query mid-embed is left to finish: stop stays in R-W5
        if self._sock is not None:
            self._sock.close()
        try:
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass
