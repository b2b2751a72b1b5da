"""What uvicorn leaves out for `scree serve --http` (issue 25): deadlines for reading a request and a cap on open
connections, so silent or trickling clients cannot hold sockets for ever and a crowd of them cannot use up the
process's file descriptors; and one log line, not one a connection, when at the cap or out of descriptors.

uvicorn closes a keep-alive connection idle after a response (timeout_keep_alive), but starts no timer on a new
connection, nor while headers or a body trickle in, and its limit_concurrency answers 503 only once a whole request
has arrived, so a silent connection is never counted out. Here its h11 protocol is subclassed: a connection must
send its request line and headers within `header_s` of being opened (or of its previous response), and its body
within `body_s` after the headers; otherwise it is closed (408 when nothing was answered yet). A connection past
`max_connections` closes the one that has waited longest for headers (a silent one gives way, so a crowd of them
cannot lock a real client out), or when every connection is busy with a request, is answered 503 and closed.
"""

from __future__ import annotations

import asyncio
import errno
import resource
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from scree.logs import get_logger

log = get_logger(__name__)

FD_RESERVE = 64  # descriptors kept for SQLite, the writer's pipes, logs and the listening socket
# asyncio accepts up to `backlog` sockets in one go, before any reaches connection_made (and the cap): a small batch
# bounds how far past the cap descriptors can go, and how many retry timers one EMFILE burst schedules (CPython's
# accept loop goes on after EMFILE and schedules a retry for every further failure: thousands of tracebacks later)
ACCEPT_BACKLOG = 64
NOTICE_EVERY_S = 60.0  # at most one "at the cap" / "out of descriptors" line a minute
_OUT_OF_FDS = (errno.EMFILE, errno.ENFILE)
TIMED_OUT_TEXT = b"refused: the request did not arrive in time\n"
BUSY_TEXT = b"refused: too many open connections; try again shortly\n"


def closing_reply(status: bytes, text: bytes) -> bytes:
    """A whole HTTP/1.1 response that ends the connection, written straight to the socket."""
    head = b"HTTP/1.1 %s\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
    return head % (status, len(text)) + text


@dataclass
class Notice:
    """One log line for a condition that may recur thousands of times a second, then at most one a minute."""

    event: str
    last: float = field(default=-NOTICE_EVERY_S)
    suppressed: int = 0

    def __call__(self, **fields: Any) -> None:
        now = time.monotonic()
        if now - self.last < NOTICE_EVERY_S:
            self.suppressed += 1
            return
        log.warning(self.event, repeats_since_last=self.suppressed, **fields)
        self.last, self.suppressed = now, 0


def connection_cap(wanted: int) -> int:
    """`wanted`, lowered so that that many sockets, the ones accepted in a batch and the ones being closed still
    leave FD_RESERVE descriptors under RLIMIT_NOFILE."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - FD_RESERVE - 2 * ACCEPT_BACKLOG))


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the read deadlines and the connection cap; protocol_class sets the figures."""

    header_s: ClassVar[float] = 10.0
    body_s: ClassVar[float] = 30.0
    max_connections: ClassVar[int] = 256
    at_cap: ClassVar[Notice] = Notice("http connections at the cap; refusing new ones with 503 until some close")
    _deadline: asyncio.TimerHandle | None = None
    _waiting_for: object = None  # h11.IDLE (headers) or h11.SEND_BODY (body) while a deadline runs

    _since: float = 0.0  # when the current deadline was armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            self.at_cap(max_connections=self.max_connections)
            oldest = self._longest_silent()
            if oldest is None:  # every other connection is in the middle of a request: this one waits its turn
                transport.write(closing_reply(b"503 Service Unavailable", BUSY_TEXT))
                transport.close()
                return
            oldest._expired()  # a connection that sends nothing (or trickles headers) gives way to a new one
        self._follow()

    def _longest_silent(self) -> LimitedH11Protocol | None:
        """The other connection that has waited longest for a request's headers, if any does."""
        waiting = [
            other
            for other in self.connections
            if isinstance(other, LimitedH11Protocol)
            and other is not self
            and other._waiting_for is h11.IDLE
            and not other.transport.is_closing()
        ]
        return min(waiting, key=lambda other: other._since, default=None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        """Arm the deadline for what the client owes now; more bytes of the same part do not extend it."""
        state = self.conn.their_state
        if self.transport.is_closing() or (state is not h11.IDLE and state is not h11.SEND_BODY):
            self._disarm()
        elif self._waiting_for is not state:
            self._disarm()
            self._waiting_for, self._since = state, self.loop.time()
            self._deadline = self.loop.call_later(self.header_s if state is h11.IDLE else self.body_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting_for = None, None

    def _expired(self) -> None:
        self._disarm()  # no longer waiting: not chosen again by _longest_silent before connection_lost runs
        if self.transport.is_closing():
            return
        if self.conn.our_state is h11.IDLE:  # no response begun: say why before closing
            self.transport.write(closing_reply(b"408 Request Timeout", TIMED_OUT_TEXT))
        self.transport.close()


def protocol_class(header_s: float, body_s: float, max_connections: int) -> type[H11Protocol]:
    """LimitedH11Protocol with these figures (pass as uvicorn.Config(http=...)); each server has its own notice."""
    figures = {"header_s": header_s, "body_s": body_s, "max_connections": max_connections}
    notice = Notice("http connections at the cap; refusing new ones with 503 until some close")
    return type("ScreeH11Protocol", (LimitedH11Protocol,), {**figures, "at_cap": notice})


def install_fd_notice(loop: asyncio.AbstractEventLoop) -> None:
    """Out of descriptors, asyncio's accept loop reports each failed accept with a traceback: here the first is one
    line (then one a minute), and anything else goes to the default handler as before."""
    out_of_fds = Notice("out of file descriptors; new connections wait until some close")

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_FDS:
            out_of_fds(error=exc.strerror or str(exc))
            return
        if isinstance(exc, ValueError) and "_start_serving" in repr(context.get("handle")):
            return  # an accept retry that EMFILE scheduled, firing after the listening socket closed: nothing to do
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
