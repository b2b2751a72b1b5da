"""Every stdio request gets an answer (issue 13): lines the MCP SDK's stdio transport drops are repaired or answered.

The SDK (mcp 2.x, `mcp.server.stdio`) parses each line with pydantic; a line that fails (not JSON, a JSON string
with a lone surrogate such as `"\\ud800"`, which pydantic's parser refuses although JSON allows it, or a message of
the wrong shape) reaches the server loop as an exception, which sends nothing back: the client waits for ever.
This wrapper of the transport's read stream takes such a line back from the error and
- re-reads it with Python's json (which accepts lone surrogates), replaces each lone surrogate by U+FFFD and hands
  the message on, so `{"query": "\\ud800 alpha"}` is answered like `"\\ufffd alpha"`;
- answers anything still unusable with the JSON-RPC error the spec asks for: -32700 (parse error, id null) for a
  line that is not JSON, -32600 (invalid request) with the request's id for a message of the wrong shape.
"""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

PARSE_ERROR = -32700  # JSON-RPC 2.0
INVALID_REQUEST = -32600
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    return value


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    usable_id = request_id if isinstance(request_id, (int, str)) and not isinstance(request_id, bool) else None
    return types.JSONRPCError(jsonrpc="2.0", id=usable_id, error=types.ErrorData(code=code, message=message))


def _raw_input(exc: ValidationError) -> Any:
    """The line (str or bytes) the SDK failed to parse, or the parsed object it failed to validate."""
    errors = exc.errors()
    for error in errors:
        if error.get("type") == "json_invalid":
            return error.get("input")
    return next((error.get("input") for error in errors if isinstance(error.get("input"), dict)), None)


def repair(exc: Exception) -> types.JSONRPCMessage | None:
    """What to do with a line the transport could not parse: the repaired message, the error reply to send, or
    None when there is nothing to answer (a notification of the wrong shape, or an exception of another kind)."""
    if not isinstance(exc, ValidationError):
        return None
    raw = _raw_input(exc)
    if isinstance(raw, dict):
        return _error(raw.get("id"), INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message MCP knows")
    if not isinstance(raw, (str, bytes)):
        return None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    cleaned = _clean(message)
    try:
        return types.jsonrpc_message_adapter.validate_json(json.dumps(cleaned), by_name=False)
    except (ValidationError, ValueError, RecursionError):
        request_id = cleaned.get("id") if isinstance(cleaned, dict) else None
        if isinstance(cleaned, dict) and "id" not in cleaned:
            return None  # a notification: JSON-RPC sends no reply to one, even an invalid one
        return _error(request_id, INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message MCP knows")


async def serve_stdio(server: MCPServer) -> None:
    """What MCPServer.run("stdio") does, with the transport's read stream wrapped so every line is answered."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async reaches it the same way
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(
            AnsweringReadStream(read_stream, write_stream), write_stream, lowlevel.create_initialization_options()
        )


class AnsweringReadStream:
    """The transport's read stream, with each unparsable line repaired (handed on) or answered (written back)."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the SDK reads the sender's context from here
        return getattr(self._inner, "last_context", None)

    async def _pass_on(self, item: SessionMessage | Exception) -> SessionMessage | Exception | None:
        if not isinstance(item, Exception):
            return item
        fixed = repair(item)
        if fixed is None:
            return item
        if isinstance(fixed, types.JSONRPCError):
            await self._write.send(SessionMessage(fixed))
            return None
        return SessionMessage(fixed)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._pass_on(await self._inner.receive())
            if item is not None:
                return item

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        while True:
            item = await self._pass_on(await self._inner.__anext__())
            if item is not None:
                return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweringReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result
