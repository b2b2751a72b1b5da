"""A real OpenAI-compatible embeddings server on 127.0.0.1 for tests, with switches for every failure R-E4 names."""

from __future__ import annotations

import argparse
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from scree.embedders.hashed import hash_vector_values

DEFAULT_DIMS = 512
DEFAULT_FAIL_STATUS = 503  # what fail_times uses when fail_status is not set
REBIND_DEADLINE_S = 5.0
ZDR_REFUSAL = (
    "No endpoints found matching your data policy (Zero data retention). "
    "Configure: https://openrouter.ai/settings/privacy"
)
NOT_SWITCHES = ("lock", "requests", "host", "port", "stopping")
HUGE_PIECE_BYTES = 1 << 20
NESTING = 100_000  # nested_json: this many '[' (the attack's 100 KB)
QUIET_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


def _echoes(auth: str | None, *, echo: bool, pieces: bool, transformed: bool) -> str:
    """What a careless server repeats of the Authorization header in an error: whole, in pieces and cases, or
    reversed, in base64 and in hex."""
    text = ""
    if echo:
        text += f" (got Authorization: {auth})"
    if auth is None:
        return text
    key = auth.removeprefix("Bearer ")
    if pieces:
        half = len(key) // 2
        text += f" (key {key[:half]}...{key[half:]}, {key.upper()}, {key.lower()})"
    if transformed:
        raw = key.encode("latin-1")
        text += f" (invalid key {key[::-1]}; b64 {base64.b64encode(raw).decode()}; hex {raw.hex()})"
    return text


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: EmbedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that gave up (timeout) while we slept is expected, not a failure worth a traceback
        if not isinstance(sys.exc_info()[1], QUIET_ERRORS):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection, so down() refuses every later request
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        owner = self.server.owner
        status, payload, headers = owner.answer(self.path, dict(self.headers.items()), body)
        with owner.lock:
            huge, trickle, trickle_headers = owner.huge_body_bytes, owner.trickle_s, owner.trickle_headers_s
        if trickle_headers:
            self._trickle_headers(trickle_headers)
        elif huge:
            self._send_huge(status, huge)
        else:
            self._send(status, payload, headers, trickle)

    def do_GET(self) -> None:
        self._send(404, {"error": {"message": f"no such path {self.path}"}}, {})

    def _send(self, status: int, payload: Any, headers: dict[str, str], trickle_s: float = 0.0) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if trickle_s <= 0:
            self.wfile.write(data)
            return
        self.wfile.flush()
        for i in range(len(data)):  # a byte at a time: never idle long enough for a per-read timeout
            if self.server.owner.stopping.wait(trickle_s):
                return
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()

    def _trickle_headers(self, every_s: float) -> None:
        """A status line and headers that never end, a byte at a time: requests' per-read timeout never trips."""
        line = b"HTTP/1.0 200 OK\r\nX-Slow: " + b"a" * 100_000
        for i in range(len(line)):
            if self.server.owner.stopping.wait(every_s):
                return
            self.wfile.write(line[i : i + 1])
            self.wfile.flush()

    def _send_huge(self, status: int, size: int) -> None:
        """A body of `size` bytes (no Content-Length, as a streaming server would), written a MiB at a time."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        piece = b" " * HUGE_PIECE_BYTES
        self.wfile.write(b'{"data": [')
        written = 0
        while written < size and not self.server.owner.stopping.is_set():
            self.wfile.write(piece)
            written += len(piece)


class EmbedServer:
    """Serves POST /v1/embeddings with hash vectors; every switch may be changed while it runs.

    Switches: fail_status (answer every request with it), fail_times (fail only the next N requests, with
    fail_status or 503, then recover), retry_after (header on failures), delay_s (sleep before answering),
    zdr_supported (False: a request asking for ZDR gets OpenRouter's 404), expected_key (401 on another key),
    echo_auth (error bodies repeat the Authorization header, as a careless server might), error_message (the
    message of failure bodies), reply_dims (ignore the requested dimensions), drop_vectors (send N fewer vectors),
    reverse_order (send the data list backwards, with correct indexes).

    Misbehaviour for the fault tests (issue 13): trickle_s (send the reply a byte at a time, this far apart),
    trickle_headers_s (the same with headers that never end),
    huge_body_bytes (a body this long, streamed), nested_json (the body is 100,000 '[' with this status),
    zero_vectors (every vector all zeros), echo_key_pieces (error bodies repeat the key cut in two, upper-cased
    and lower-cased), duplicate_indexes (every item says index 0). delay_s with a large value is a hang.
    echo_key_transformed (issue 25): error bodies repeat the key reversed, base64-encoded and hex-encoded.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.fail_status: int | None = None
        self.fail_times = 0
        self.retry_after: str | None = None
        self.delay_s = 0.0
        self.zdr_supported = True
        self.expected_key: str | None = None
        self.echo_auth = False
        self.error_message: str | None = None
        self.reply_dims: int | None = None
        self.drop_vectors = 0
        self.reverse_order = False
        self.trickle_s = 0.0
        self.trickle_headers_s = 0.0
        self.huge_body_bytes = 0
        self.nested_json: int | None = None
        self.zero_vectors = False
        self.echo_key_pieces = False
        self.duplicate_indexes = False
        self.echo_key_transformed = False
        self.stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def set(self, **switches: Any) -> None:
        """Change several switches at once, under the lock."""
        with self.lock:
            for name, value in switches.items():
                if (
                    not hasattr(self, name)
                    or name.startswith("_")
                    or name in ("lock", "requests", "host", "port", "stopping")
                ):
                    raise AttributeError(f"EmbedServer has no switch {name!r}")
                setattr(self, name, value)

    def request_count(self) -> int:
        with self.lock:
            return len(self.requests)

    def recorded(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.requests)

    # --- lifecycle ---

    def start(self) -> EmbedServer:
        self.stopping.clear()
        self._listen()
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes handlers sleeping in delay_s
        self._close()

    def down(self) -> None:
        """Close the listening socket: clients get connection refused until up()."""
        self._close()

    def up(self) -> None:
        """Listen again on the same port."""
        self._listen()

    def __enter__(self) -> EmbedServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _listen(self) -> None:
        if self._httpd is not None:
            return
        deadline = time.monotonic() + REBIND_DEADLINE_S
        while True:
            try:
                httpd = _Server((self.host, self.port), _Handler)
                break
            except OSError:
                # the old socket on a fixed port may linger a moment; SO_REUSEADDR covers TIME_WAIT
                if self.port == 0 or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        httpd.owner = self
        self.port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def _close(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd, self._thread = None, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    # --- the protocol ---

    def answer(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        """Record the request and decide the reply: (status, JSON payload, extra headers)."""
        auth = next((value for name, value in headers.items() if name.lower() == "authorization"), None)
        with self.lock:
            self.requests.append({"path": path, "headers": headers, "json": body})
            delay = self.delay_s
            failure = self._take_failure()
            retry_after, echo, message = self.retry_after, self.echo_auth, self.error_message
            expected, zdr_supported = self.expected_key, self.zdr_supported
            reply_dims, drop, reverse = self.reply_dims, self.drop_vectors, self.reverse_order
            nested, zeros, pieces, dupes = (
                self.nested_json,
                self.zero_vectors,
                self.echo_key_pieces,
                self.duplicate_indexes,
            )
            transformed = self.echo_key_transformed
        if delay > 0 and self.stopping.wait(delay):
            return 503, {"error": {"message": "server stopping"}}, {}

        def error(status: int, text: str) -> tuple[int, Any, dict[str, str]]:
            text = message if message is not None else text
            text += _echoes(auth, echo=echo, pieces=pieces, transformed=transformed)
            extra = {"Retry-After": retry_after} if retry_after is not None else {}
            return status, {"error": {"message": text, "code": status}}, extra

        if nested is not None:
            return nested, b"[" * NESTING, {}
        if failure is not None:
            return error(failure, f"simulated failure {failure}")
        if expected is not None and auth != f"Bearer {expected}":
            return error(401, "User not found.")
        if path.rstrip("/") != "/v1/embeddings":
            return error(404, f"no such path {path}")
        if not isinstance(body, dict) or "input" not in body:
            return error(400, "request body must be a JSON object with input")
        provider = body.get("provider")
        if not zdr_supported and isinstance(provider, dict) and provider.get("zdr") is True:
            return error(404, ZDR_REFUSAL)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dims = reply_dims or int(body.get("dimensions") or DEFAULT_DIMS)
        data = [
            {
                "object": "embedding",
                "index": 0 if dupes else i,
                "embedding": [0.0] * dims if zeros else hash_vector_values(str(text), dims),
            }
            for i, text in enumerate(inputs)
        ]
        data = data[: max(0, len(data) - drop)]
        if reverse:
            data.reverse()
        tokens = sum(len(str(text).split()) for text in inputs)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}, {}

    def _take_failure(self) -> int | None:
        """The status to fail this request with, if any; counts fail_times down (call under the lock)."""
        if self.fail_times > 0:
            self.fail_times -= 1
            status = self.fail_status or DEFAULT_FAIL_STATUS
            if self.fail_times == 0:
                self.fail_status = None  # recovered
            return status
        return self.fail_status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the test embeddings server until killed.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--expected-key", default=None, help="answer 401 to any other key")
    parser.add_argument("--no-zdr", action="store_true", help="refuse requests that ask for zero data retention")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to sleep before each answer")
    args = parser.parse_args(argv)
    server = EmbedServer(args.host, args.port)
    server.set(expected_key=args.expected_key, zdr_supported=not args.no_zdr, delay_s=args.delay)
    server.start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
