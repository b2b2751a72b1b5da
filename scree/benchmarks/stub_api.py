"""A minimal OpenAI-compatible embeddings server on 127.0.0.1 for benchmarks: instant hashed vectors, counted requests.

Run: python -m bench.stub_api (prints its base URL, e.g. http://127.0.0.1:41234/v1, then serves until killed).
POST /v1/embeddings answers with scree's hashed word vectors (texts that share words point the same way, so search
results stay meaningful); GET /v1/stats answers {"requests": N, "inputs": M}, what was embedded so far. Benchmarks
run it as its own process (StubApiProcess), so a measured process's RSS holds none of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scree.embedders.hashed import hash_vector_values

HOST = "127.0.0.1"
DEFAULT_DIMS = 512  # R-E2: the default API model's dimensions
STOP_WAIT_S = 10.0


class _Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.inputs = 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    counts: _Counts


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/embeddings":
            self._send(404, {"error": {"message": f"no such path {self.path}"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            dims = int(body.get("dimensions") or DEFAULT_DIMS)
        except (ValueError, KeyError, TypeError):
            self._send(400, {"error": {"message": "request body must be a JSON object with input"}})
            return
        with self.server.counts.lock:
            self.server.counts.requests += 1
            self.server.counts.inputs += len(inputs)
        data = [
            {"object": "embedding", "index": i, "embedding": hash_vector_values(str(text), dims)}
            for i, text in enumerate(inputs)
        ]
        tokens = sum(len(str(text).split()) for text in inputs)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send(200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/stats":
            self._send(404, {"error": {"message": f"no such path {self.path}"}})
            return
        with self.server.counts.lock:
            self._send(200, {"requests": self.server.counts.requests, "inputs": self.server.counts.inputs})

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def make_server(port: int = 0) -> ThreadingHTTPServer:
    """The stub bound to 127.0.0.1 (port 0: any free port); call serve_forever() on it."""
    server = _Server((HOST, port), _Handler)
    server.counts = _Counts()
    return server


def base_url(server: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_address[1]}/v1"


class StubApiProcess:
    """`python -m bench.stub_api` in its own process; `url` is the base URL to give SCREE_API_BASE."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scree.benchmarks.stub_api"],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.stop()
            raise RuntimeError(f"the stub embeddings server did not start: {self.url!r}")

    def stats(self) -> dict[str, int]:
        """Requests and inputs embedded so far."""
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/stats", timeout=STOP_WAIT_S) as reply:
            counts: dict[str, int] = json.load(reply)
        return counts

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> StubApiProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    server = make_server()
    print(base_url(server), flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
