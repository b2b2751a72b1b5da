"""One HTTP attempt against the embeddings API with a total deadline and a capped body (R-E4, issue 13).

requests' `timeout` bounds each socket read, not the attempt: a server that trickles its reply a byte at a time
never trips it. Here the attempt runs on a daemon thread the caller waits on for at most the attempt's timeout,
and that thread reads the body in small pieces, checking the deadline between pieces and stopping at a size cap,
so a slow or huge reply costs neither unbounded time nor unbounded memory (a 300 MB body once took the reader to
1.5 GB). A thread left behind by a timed-out attempt ends at its next piece after the deadline.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import requests  # imported by the caller (scree.embedders.api) on its first request

READ_BYTES = 64 * 1024  # one piece of the body
ERROR_BODY_BYTES = 64 * 1024  # of a non-2xx reply only an excerpt is shown: no need to read more
DEADLINE_GRACE_S = 0.25  # the waiting caller gives the request thread this long to report its own timeout


@dataclass(frozen=True, slots=True)
class HttpReply:
    """A reply read within the deadline: status, headers, and at most the cap of its body."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    over_cap: bool  # the body was longer than the cap (and `body` holds only its start)


def post_json(session: requests.Session, url: str, payload: Any, timeout_s: float, max_body: int) -> HttpReply:
    """POST `payload`; raise requests.Timeout when the whole attempt (connect, headers, body) exceeds `timeout_s`.

    Other requests exceptions propagate as they are. A 2xx body is read up to `max_body` bytes, any other up to
    ERROR_BODY_BYTES."""
    deadline = time.monotonic() + timeout_s
    done = threading.Event()
    box: dict[str, Any] = {}

    def attempt() -> None:
        try:
            box["reply"] = _exchange(session, url, payload, timeout_s, deadline, max_body)
        except BaseException as exc:  # handed to the waiting caller, who raises it
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=attempt, name="scree-embed-request", daemon=True).start()
    if not done.wait(timeout_s + DEADLINE_GRACE_S):
        import requests

        raise requests.Timeout(f"no complete reply within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    reply: HttpReply = box["reply"]
    return reply


def _exchange(
    session: requests.Session, url: str, payload: Any, timeout_s: float, deadline: float, max_body: int
) -> HttpReply:
    with session.post(url, json=payload, timeout=(timeout_s, timeout_s), stream=True) as response:
        cap = max_body if 200 <= response.status_code < 300 else ERROR_BODY_BYTES
        body, over = _read_capped(response, deadline, cap)
        return HttpReply(response.status_code, dict(response.headers), body, over)


def _read_capped(response: requests.Response, deadline: float, cap: int) -> tuple[bytes, bool]:
    """The body, a piece at a time (read1: whatever has arrived), until it ends, the cap or the deadline."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > cap and response.status_code < 300:
        return b"", True
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    pieces: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            import requests

            raise requests.Timeout("the reply did not end within the attempt's time")
        piece = (
            read1(READ_BYTES, decode_content=True) if read1 is not None else raw.read(READ_BYTES, decode_content=True)
        )
        if not piece:
            return b"".join(pieces), False
        size += len(piece)
        if size > cap:
            pieces.append(piece[: cap - (size - len(piece))])
            return b"".join(pieces), True
        pieces.append(piece)


def parse_json(body: bytes) -> Any:
    """The body as JSON; ValueError for anything else, including nesting too deep for the parser (RecursionError)."""
    try:
        return json.loads(body)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(str(exc)) from None
