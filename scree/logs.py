"""configure_logging(role): structlog to stderr only (never stdout, R-P5), JSON or readable lines, secrets masked."""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import importlib
import logging
import sys
import threading
import types
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, TextIO

from scree.inert import inert
from scree.redact import redact
from scree.stderr_pipe import NonBlockingStderr


class _ImportedOnUse(types.ModuleType):
    """Stands in for a module a library imports but uses only inside functions scree never calls: the first
    attribute looked up imports the real module (a normal import, as if the library had made it) and is taken from it.
    """

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:  # looked up while still standing in: the real one replaces it
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


@contextmanager
def _imported_on_use(*names: str) -> Iterator[None]:
    """While the body imports a library, `names` not yet imported are stand-ins (_ImportedOnUse) that the library
    keeps; everything imported after gets the real modules, from the normal import machinery."""
    standing_in = {name: _ImportedOnUse(name) for name in names if name not in sys.modules}
    sys.modules.update(standing_in)
    try:
        yield
    finally:
        for name, stand_in in standing_in.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


# structlog imports asyncio (and with it ssl, socket, concurrent.futures: 2.6 MB of a watching writer's 31.6 MB RSS,
# issue 17 item 5) for its async logging methods alone, and uuid (with platform: 0.5 MB) for its deprecated
# threadlocal module alone, neither of which scree calls; a process that runs asyncio (the MCP reader) imports it
# itself, and structlog's async methods would still work through the stand-in.
with _imported_on_use("asyncio", "uuid"):
    import structlog

EXIT_DRAIN_S = 1.0  # at exit, how long queued stderr lines may wait for a pipe nobody reads before they are dropped
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_WRITE_LOCK = threading.Lock()  # one record at a time from this process's threads


class LineLogger:
    """structlog's output: each record and its newline in one write() call, then a flush.

    structlog's PrintLogger prints the record and then its newline: two write() syscalls when stderr is unbuffered
    (PYTHONUNBUFFERED=1, as the Dockerfile sets) or the record is longer than the text buffer. The reader and the
    writer child share fd 2, so another process's record landed between the two and a JSON line held two records.
    One write() of at most PIPE_BUF bytes reaches a pipe whole; a longer one stays whole unless the pipe fills up
    meanwhile (its reader is behind by 64 KiB)."""

    def __init__(self, file: TextIO) -> None:
        self._file = file

    def msg(self, message: str) -> None:
        line = message + "\n"
        with _WRITE_LOCK:
            self._file.write(line)
            self._file.flush()

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


class LineLoggerFactory:
    def __init__(self, file: TextIO) -> None:
        self._file = file

    def __call__(self, *_args: Any) -> LineLogger:
        return LineLogger(self._file)


def _redact_event(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Secrets masked (R-E5) and terminal escapes made inert (issue 13: file names and API bodies are data)."""
    for key, value in list(event.items()):
        if isinstance(value, str):
            event[key] = inert(redact(value))
        elif isinstance(value, BaseException):
            event[key] = inert(redact(str(value)))
        elif isinstance(value, (list, tuple)) and any(isinstance(item, str) for item in value):
            event[key] = [inert(redact(item)) if isinstance(item, str) else item for item in value]
    return event


class StdlibToStructlog(logging.Handler):
    """A stdlib record (the mcp SDK, uvicorn, urllib3, numba, asyncio: loggers scree does not configure) as one of
    scree's own lines: the same processors (role, time, level, secrets masked) and the same one-write writer.

    Without it Python's last-resort handler printed the bare message, a plain line among SCREE_LOG_FORMAT=json's
    objects. Records go through structlog's own chain rather than a ProcessorFormatter on a StreamHandler, so each
    line is written whole under _WRITE_LOCK like every other (a handler's lock is not that one)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields: dict[str, Any] = {"logger": record.name}
            if record.exc_info and record.exc_info[0] is not None:
                fields["exc_info"] = record.exc_info
            level = min(max(record.levelno // 10 * 10, logging.DEBUG), logging.CRITICAL)  # a custom level: its band
            get_logger(record.name).log(level, " ".join(record.getMessage().split()), **fields)
        except Exception:
            self.handleError(record)


_STDLIB_HANDLER = StdlibToStructlog()


def _route_stdlib_records() -> None:
    """Every stdlib record that reaches the root logger, and every Python warning, goes through structlog. The root
    keeps its WARNING level: libraries' info and debug chatter (the SDK's request lines, httpx's) stays out."""
    root = logging.getLogger()
    if _STDLIB_HANDLER not in root.handlers:
        root.addHandler(_STDLIB_HANDLER)
    logging.captureWarnings(True)  # a library's warnings.warn() too, which Python prints as two plain lines


def configure_logging(
    role: str, log_format: str = "console", level: str = "info", *, never_block: bool = False
) -> None:
    """Send every log line of this process to stderr, tagged with `role` (cli, reader, writer, watch): structlog's
    and, through StdlibToStructlog, the stdlib loggers' too. `never_block` (serve over stdio and its writer child,
    whose stderr is the MCP client's pipe): sys.stderr (and a sys.stdout pointed at it) becomes a NonBlockingStderr,
    whose lines a full pipe drops and counts rather than stopping the thread that logs (issue 34); what it holds at
    a normal exit is written out first, for at most EXIT_DRAIN_S."""
    if never_block and not isinstance(sys.stderr, NonBlockingStderr):
        stream = NonBlockingStderr(2, _log_dropped)
        if sys.stdout is sys.stderr:
            sys.stdout = stream
        sys.stderr = stream
        atexit.register(drain_stderr, EXIT_DRAIN_S)
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,  # a traceback as text before _redact_event: masked like the rest
        _redact_event,
    ]
    if log_format == "json":
        processors.append(structlog.processors.JSONRenderer())
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=LineLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(role=role)
    _route_stdlib_records()


def _log_dropped(count: int) -> None:
    get_logger(__name__).warning("log lines dropped: stderr was not read", lines=count)


def direct_stderr() -> contextlib.AbstractContextManager[None]:
    """Within: log lines are written by the logging thread itself, blocking (NonBlockingStderr.direct), for a
    process's last words once a kernel deadline bounds its exit; a plain stderr already is."""
    if isinstance(sys.stderr, NonBlockingStderr):
        return sys.stderr.direct()
    return contextlib.nullcontext()


def drain_stderr(timeout: float) -> None:
    """Before exiting: let a NonBlockingStderr write what it holds, for at most `timeout` seconds; else flush."""
    if isinstance(sys.stderr, NonBlockingStderr):
        sys.stderr.drain(timeout)
    else:
        sys.stderr.flush()


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)


def logged_thread(name: str, target: Callable[..., None], *args: object) -> threading.Thread:
    """A daemon thread that keeps the caller's log context (role=...), which threads do not inherit by themselves."""
    context = contextvars.copy_context()
    return threading.Thread(target=context.run, args=(target, *args), name=name, daemon=True)
