"""The query socket's wire format and the check of who is at the other end (issue 24: sessions share one model).

A reader asks the index's writer, which already holds the offline model, to embed a search query, over a Unix domain
socket in the index folder. One connection carries one query. Each message is one frame:

    4-byte big-endian length of the JSON header | 4-byte big-endian length of the body | header | body

The header is a JSON object with "v" (WIRE_VERSION) and the embedding identity ("identity", "dims"): a reader sends
the identity its index records, and the writer answers only when its model is that one, so a reader never mixes
vectors of two models. Request body: the query, UTF-8. Reply body: `dims` little-endian float32 (the packed vector
the store searches with); a refusal has an empty body and says why in "error". A frame of another version, or larger
than MAX_FRAME, is refused: both ends drop the connection and the reader embeds the query itself.

Both ends check the peer's uid (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and the BSDs) on top of the folder's
0700 and the socket's 0600, so a process of another user can never send queries nor pose as the writer.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

WIRE_VERSION = 1
PREFIX = struct.Struct(">II")
MAX_HEADER = 4096
MAX_BODY = 64 * 1024  # a query is short (the model reads 256 tokens); 384 float32 are 1.5 KB
PROC_FDS = "/proc/self/fd"
SUN_PATH_MAX = 100  # AF_UNIX paths are cut at 104-108 bytes (macOS 104, Linux 108, NUL included); keep a margin


class WireError(Exception):
    """A frame that is not ours: wrong version, too large, cut short, not JSON."""


@dataclass(frozen=True, slots=True)
class Frame:
    header: dict[str, object]
    body: bytes


def encode(header: dict[str, object], body: bytes = b"") -> bytes:
    """One frame: the version is added to `header`."""
    head = json.dumps({"v": WIRE_VERSION, **header}, separators=(",", ":")).encode()
    if len(head) > MAX_HEADER or len(body) > MAX_BODY:
        raise WireError("frame too large")
    return PREFIX.pack(len(head), len(body)) + head + body


def request(identity: str, dims: int, text: str) -> bytes:
    """A reader's query: the embedding identity it expects, and the text."""
    return encode({"identity": identity, "dims": dims}, text.encode("utf-8", "surrogatepass")[:MAX_BODY])


def reply(identity: str, dims: int, vector: bytes) -> bytes:
    return encode({"identity": identity, "dims": dims}, vector)


def refusal(identity: str, dims: int, error: str) -> bytes:
    return encode({"identity": identity, "dims": dims, "error": error[:200]})


def read_frame(sock: socket.socket) -> Frame:
    """Read one whole frame; the socket's timeout bounds each recv. WireError for anything not a valid frame."""
    head_len, body_len = PREFIX.unpack(_read_exactly(sock, PREFIX.size))
    if head_len > MAX_HEADER or body_len > MAX_BODY:
        raise WireError("frame too large")
    try:
        header = json.loads(_read_exactly(sock, head_len))
    except (ValueError, RecursionError) as exc:  # 2,000 nested `[` fit in MAX_HEADER and overflow the parser's stack
        raise WireError("header is not JSON") from exc
    if not isinstance(header, dict) or header.get("v") != WIRE_VERSION:
        raise WireError("another wire version")
    return Frame(header, _read_exactly(sock, body_len))


def vector_of(frame: Frame, identity: str, dims: int) -> bytes:
    """The reply's vector when it is for `identity` and `dims`; WireError otherwise (a refusal, another model)."""
    header = frame.header
    if header.get("error"):
        raise WireError(f"the writer refused: {header['error']}")
    if header.get("identity") != identity or header.get("dims") != dims or len(frame.body) != dims * 4:
        raise WireError(f"the writer's model is {header.get('identity')!r}, not {identity!r}")
    return frame.body


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left:
        part = sock.recv(left)
        if not part:
            raise WireError("connection closed mid-frame")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def supported() -> bool:
    """Whether this platform has Unix domain sockets; elsewhere every reader loads its own model."""
    return hasattr(socket, "AF_UNIX")


def address_fits(path: str) -> bool:
    """Whether `path` can be bound or reached: it fits in a sockaddr_un, or Linux can reach it through /proc (a deep
    data folder, a long folder name); elsewhere a path too long means readers load their own model."""
    return len(os.fsencode(path)) <= SUN_PATH_MAX or os.path.isdir(PROC_FDS)


@contextmanager
def address(path: str) -> Iterator[str]:
    """An address for bind() or connect() naming `path`: the path itself, or, when it is too long for a sockaddr_un,
    the same file through an open descriptor of its folder (/proc/self/fd/N/name, Linux)."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        yield path
        return
    folder, name = os.path.split(path)
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield f"{PROC_FDS}/{fd}/{name}"
    finally:
        os.close(fd)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected Unix socket; None where the platform cannot say."""
    if sys.platform.startswith("linux") and hasattr(socket, "SO_PEERCRED"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return int(struct.unpack("3i", creds)[1])  # struct ucred: pid, uid, gid
    if sys.platform == "darwin" or "bsd" in sys.platform:
        sol_local, local_peercred = 0, 1  # <sys/un.h>; struct xucred: u_int cr_version, uid_t cr_uid, ...
        creds = sock.getsockopt(sol_local, local_peercred, 76)
        return int(struct.unpack_from("<I", creds, 4)[0])
    return None


def same_user(sock: socket.socket) -> bool:
    """Whether the peer runs as this process's user. Where the platform cannot tell, the folder's 0700 and the
    socket's 0600 are the guard, as they are for the index itself."""
    if not hasattr(os, "getuid"):
        return True
    try:
        uid = peer_uid(sock)
    except OSError:
        return False
    return uid is None or uid == os.getuid()


PROBE_S = 2.0  # `scree status`: a live query thread refuses a probe at once (it waits at most one query's embedding)
PROBE_IDENTITY = "probe:none"  # no model has it: the writer answers with a refusal and embeds nothing


def probe(path: str, timeout_s: float = PROBE_S) -> str:
    """Whether the writer's query thread at `path` answers (`scree status`): "answering", "not answering" (a socket
    that accepts but never replies, or refuses connections) or "none" (no socket: no writer with the offline model)."""
    if not supported() or not os.path.exists(path):
        return "none"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            with address(path) as where:
                sock.connect(where)
            sock.sendall(request(PROBE_IDENTITY, 0, ""))
            read_frame(sock)
    except (OSError, WireError):
        return "not answering"
    return "answering"
