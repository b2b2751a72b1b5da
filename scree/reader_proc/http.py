"""`scree serve --http` (R-M9): the reader's MCP server over the SDK's streamable HTTP transport at /mcp, and
GET /healthz from the database, behind the checks of http_access.py, a request body limit and bounded sessions.

Every route, /healthz included, passes the Host/Origin allow-list and then the token (when one is set) before
anything else runs. uvicorn serves on a socket bound here, so the port is known (and logged) before the first
request; its own signal handlers are left out: `serve_http` (supervisor.py) owns SIGTERM (R-W5).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio.to_thread
import uvicorn
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse

from scree.config import Settings
from scree.deadlines import HTTP_DRAIN_S
from scree.errors import ConfigError
from scree.logs import get_logger
from scree.protocol import WriterControl
from scree.reader_proc.http_access import HttpAccess
from scree.reader_proc.http_limits import ACCEPT_BACKLOG, connection_cap, install_fd_notice, protocol_class
from scree.reader_proc.http_options import HttpOptions
from scree.reader_proc.server import build_server
from scree.redact import register_secret

log = get_logger(__name__)

MCP_PATH = "/mcp"
HEALTH_PATH = "/healthz"
MAX_HEADER_BYTES = 16 * 1024  # a request line and headers larger than this are answered 400 (h11's default)


class Guard:
    """ASGI middleware in front of every route: Host/Origin, then the token; a refusal is one line of text."""

    def __init__(self, app: Any, access: HttpAccess) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.access.refusal(headers.get("host"), headers.get("origin"), headers.get("authorization"))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        log.warning("http request refused", status=refusal.status, path=scope.get("path"), reason=refusal.text)
        extra = {"WWW-Authenticate": 'Bearer realm="scree"'} if refusal.status == 401 else None
        await PlainTextResponse(refusal.text + "\n", status_code=refusal.status, headers=extra)(scope, receive, send)


def health_body(settings: Settings) -> tuple[int, dict[str, Any]]:
    """GET /healthz: 200 and the index's figures when it can be read, else 503 and the reason."""
    from scree.index.health import index_health

    health = index_health(settings)
    if health.facts is None:
        return 503, {"ok": False, "error": health.reason}
    return 200, {"ok": True, **health.facts.for_healthz()}


def build_app(settings: Settings, control: WriterControl, options: HttpOptions) -> Any:
    """The ASGI app: Guard, the body limit, then the SDK's streamable HTTP app (with /healthz beside /mcp)."""
    server = build_server(settings, control)

    async def healthz(_request: Request) -> JSONResponse:
        code, body = await anyio.to_thread.run_sync(health_body, settings)  # SQLite reads off the event loop
        return JSONResponse(body, status_code=code)

    server.custom_route(HEALTH_PATH, methods=["GET"])(healthz)

    inner = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        max_request_body_size=options.max_body_bytes,
        session_idle_timeout=options.session_idle_s,
        max_sessions=options.max_sessions,
        # Guard checks Host and Origin on every route, /healthz too, with scree's allow-list and wording
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=options.host,
    )
    return Guard(RequestBodyLimitMiddleware(inner, options.max_body_bytes), options.access)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); a port in use is a one-line error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


def run_http(
    settings: Settings,
    control: WriterControl,
    options: HttpOptions,
    sock: socket.socket,
    stop: threading.Event,
    on_stop: Callable[[], None],
) -> None:
    """Serve on `sock` (from bind) until `stop` is set (SIGTERM), then stop taking requests, let open ones finish
    for HTTP_DRAIN_S and return; `on_stop` runs as soon as the stop comes, beside the drain (the supervisor stops
    the writer then)."""
    if options.access.token is not None:
        register_secret(options.access.token)  # never in a log line, whatever path it takes there
    route_library_logs()
    app = build_app(settings, control, options)
    max_connections = connection_cap(options.max_connections)
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=HTTP_DRAIN_S,
        timeout_keep_alive=max(1, round(options.idle_timeout_s)),
        server_header=False,
        ws="none",
        http=protocol_class(options.header_timeout_s, options.body_timeout_s, max_connections),
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        backlog=ACCEPT_BACKLOG,
    )
    server = _QuietServer(config)

    def stop_when_asked() -> None:
        stop.wait()
        log.info("signal received; stopping", drain_s=HTTP_DRAIN_S)
        server.should_exit = True
        on_stop()

    threading.Thread(target=stop_when_asked, name="scree-http-stop", daemon=True).start()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    log.info(
        "serving MCP over HTTP",
        url=f"http://{shown}:{port}{MCP_PATH}",
        port=port,
        token=options.access.token is not None,
        token_file=str(options.token_file) if options.token_file is not None else None,
        max_connections=max_connections,
        folder=str(settings.folder),
    )
    if options.token_made:
        log.warning("made a bearer token for HTTP clients; send it as 'Authorization: Bearer <token>'",
                    token_file=str(options.token_file))  # fmt: skip
    elif options.access.token is None:
        log.warning("serving HTTP without a token (--no-token): any local user can read this folder")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def route_library_logs() -> None:
    """Warnings and errors of uvicorn and the mcp SDK, and only those, reach scree's log lines (scree.logs routes
    every stdlib record there): whatever level they were given is put back to WARNING."""
    for name in ("uvicorn", "mcp"):
        library = logging.getLogger(name)
        library.handlers[:] = []
        library.setLevel(logging.WARNING)
        library.propagate = True


class _QuietServer(uvicorn.Server):
    """uvicorn's Server without its signal handlers: SignalLatch has them (a second signal exits at once)."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's serve, with the event loop's EMFILE reports turned into one line (http_limits)."""
        install_fd_notice(asyncio.get_running_loop())
        await super().serve(sockets)
