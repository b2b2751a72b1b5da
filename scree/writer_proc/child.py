"""The writer child of `scree serve`: its spawn entry point, its first steps, and the messages on its two queues.

R-P1: the supervisor starts the writer with the spawn context, a fresh interpreter that carries none of the reader's
heap, threads or imports (R-P3), and talks to it over two multiprocessing queues, one per child (a child killed in
the middle of a queue operation takes its queues with it):

- down: `ReindexRequest` (answered up with a `ReindexReply` carrying its id) and `Recheck`;
- up: `ChildStatus` at least every HEARTBEAT_S (progress, first sync done, last error; it is also the heartbeat the
  supervisor's hang check waits for), and one `Finished` before a planned exit.

The child's first steps come before anything else (R-P5): fd 0 becomes /dev/null and fd 1 (and sys.stdout) a copy of
stderr, so nothing but MCP ever reaches the client even though spawn hands the child the serve's standard streams;
then logging to stderr as role "writer". It never imports the MCP SDK (R-P3): the reader imports this module too, so
nothing heavy is imported at its top; the writer itself is imported inside `child_main`.

writer.lock: the supervisor passes the descriptor it locked to the child (`InheritedFd`), the same open file
description, so the flock lives while either process does: a crashed child leaves the supervisor holding it (restarts
race nobody), and a supervisor that dies leaves the child holding it until the child, seeing its parent gone, stops
and exits (never two writers at once). The child only keeps the descriptor open; it never locks or unlocks it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from typing import TYPE_CHECKING, Any

from scree.config import Settings

if TYPE_CHECKING:
    from scree.writer_proc.results import WriterState
    from scree.writer_proc.writer import Writer

SYNC, WATCH = "sync", "watch"  # R-P3: a child that does the first sync and exits; a fresh one that watches
SYNC_NICENESS = 10  # a first-sync child is background work: the MCP reader answers first on a busy machine
HEARTBEAT_S = 1.0  # R-P2: a status at least this often, from its own thread, so a frozen process falls silent
REQUEST_POLL_S = 0.5  # the request thread looks at the done flag at least this often
PARENT_POLL_S = 0.5  # the parent check also catches a re-parented child where no sentinel exists
PARENT_GONE_EXIT_S = 4.5  # R-P2: the writer gets this long to stop once serve is gone; then the child exits anyway
QUEUE_FLUSH_S = 2.0  # the last messages get this long to reach the pipe before the child exits
SPAWN = multiprocessing.get_context("spawn")  # R-P1: never fork: the child must not share the reader's state

# Outcomes of a child, as `Finished.outcome` and as its exit code (read when `Finished` was lost with a crash).
STOPPED, FAILED, SYNCED, OVER_CAP, UNHEALTHY, SETUP_ERROR = (
    "stopped",
    "failed",
    "synced",
    "over_cap",
    "unhealthy",
    "setup_error",
)
EXIT_CODES = {STOPPED: 0, FAILED: 1, SYNCED: 3, OVER_CAP: 4, UNHEALTHY: 5, SETUP_ERROR: 6}
OUTCOME_BY_EXIT_CODE = {code: outcome for outcome, code in EXIT_CODES.items()}  # for a child whose Finished was lost
MCP_MODULES = ("mcp", "mcp_types")  # R-P3: neither may be loaded in the child


# --- the messages (small, picklable, and importable without the writer) ---


@dataclass(frozen=True, slots=True)
class ChildStatus:
    """Up, at least every HEARTBEAT_S: how far the writer got (the fields of WriterState the reader needs)."""

    first_sync_running: bool = False
    first_sync_done: bool = False
    notes_indexed: int = 0
    last_error: str | None = None  # the embeddings API is failing
    over_cap_mb: float | None = None  # R-S4
    cap_mb: float | None = None
    index_complete: bool = False  # the index had a finished first sync when this child started (a resync follows)


@dataclass(frozen=True, slots=True)
class ReindexRequest:
    """Down: R-M7, one relative path (already checked against the ignore rules) or the whole folder (None)."""

    request_id: int
    path: str | None


@dataclass(frozen=True, slots=True)
class ReindexReply:
    """Up: the one-line answer to the ReindexRequest with the same id."""

    request_id: int
    text: str


@dataclass(frozen=True, slots=True)
class Recheck:
    """Down: R-M2, files a search dropped (deleted, ignored, opted out): re-check them without the debounce."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finished:
    """Up, last: why the child is about to exit (one of the outcomes above) and a line for the user."""

    outcome: str
    message: str


class InheritedFd:
    """A descriptor the spawned child receives as the same open file (so a flock on it is shared, not copied)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Callable[[Any], InheritedFd], tuple[Any]]:
        from multiprocessing import reduction

        # Only while Process.start() pickles the child's arguments: spawn then passes this fd to the new process.
        return _inherit, (reduction.DupFd(self.fd),)


def _inherit(dup: Any) -> InheritedFd:
    return InheritedFd(dup.detach())


@dataclass(slots=True)
class WriterChild:
    """The parent's handle on one writer child: the process and its two queues."""

    mode: str
    process: BaseProcess
    down: Queue[ReindexRequest | Recheck]
    up: Queue[ChildStatus | ReindexReply | Finished]

    def discard_queues(self) -> None:
        """Drop the queues of an ended child; the feeder never waits on a reader that is gone."""
        self.down.cancel_join_thread()
        self.down.close()
        self.up.close()


def start_writer(settings: Settings, mode: str, lock_fd: int) -> WriterChild:
    """Spawn a writer child in `mode` (SYNC or WATCH) that shares writer.lock through `lock_fd`."""
    down: Queue[ReindexRequest | Recheck] = SPAWN.Queue()
    up: Queue[ChildStatus | ReindexReply | Finished] = SPAWN.Queue()
    process = SPAWN.Process(
        target=child_main,
        args=(settings, mode, down, up, InheritedFd(lock_fd)),
        name=f"scree-writer-{mode}",
        daemon=True,  # multiprocessing's exit handler terminates it if serve ever exits without stopping it
    )
    process.start()
    return WriterChild(mode, process, down, up)


def mcp_loaded() -> bool:
    """Whether any module of the MCP SDK is loaded in this process (R-P3: never in the writer)."""
    return any(name.split(".", 1)[0] in MCP_MODULES for name in list(sys.modules))


# --- the child ---


def child_main(
    settings: Settings,
    mode: str,
    down: Queue[ReindexRequest | Recheck],
    up: Queue[ChildStatus | ReindexReply | Finished],
    lock: InheritedFd,
) -> None:
    """The spawned writer: stdio and logging first, then run the Writer in `mode` and report how it ended."""
    _point_stdio_at_stderr()  # R-P5, before anything can print
    from scree.logs import configure_logging, get_logger
    from scree.redact import register_secret

    configure_logging("writer", settings.log_format, settings.log_level)
    register_secret(settings.api_key)
    log = get_logger(__name__)
    if mode == SYNC and hasattr(os, "nice"):
        os.nice(SYNC_NICENESS)  # the big sync yields the cores to the reader's handshake and searches (R-M8)
    done = threading.Event()  # the helper threads stop with it
    reporter = _Reporter(up)
    threading.Thread(target=reporter.beat, args=(done,), name="scree-heartbeat", daemon=True).start()

    from scree.signals import SignalLatch
    from scree.writer_proc.writer import Writer

    stop = threading.Event()
    SignalLatch(stop).install()  # SIGTERM from the supervisor (or Ctrl-C in a terminal) stops the writer
    threading.Thread(target=_exit_with_parent, args=(stop, log), name="scree-parent", daemon=True).start()
    reporter.index_complete = _index_complete(settings)
    writer = Writer(settings, stop, on_status=reporter.send_state, first_sync_only=mode == SYNC)
    reporter.writer = writer
    requests = threading.Thread(target=_serve_requests, args=(down, up, writer, done), name="scree-requests")
    requests.daemon = True
    requests.start()
    log.debug("writer child started", mode=mode, pid=os.getpid(), lock_fd=lock.fd, mcp_loaded=mcp_loaded())
    outcome, message = _run(writer, log)
    done.set()
    reporter.put(Finished(outcome, message))
    log.debug("writer child exiting", mode=mode, outcome=outcome, mcp_loaded=mcp_loaded())
    _flush(up)
    sys.stderr.flush()
    os._exit(EXIT_CODES[outcome])  # no interpreter teardown behind a thread the writer may have left busy


def _run(writer: Writer, log: Any) -> tuple[str, str]:
    """Run the writer; its outcome as one of ours, with the line for the user."""
    from scree.errors import ScreeError
    from scree.redact import redact
    from scree.replies import error_line, failed_message
    from scree.writer_proc.results import Outcome

    try:
        result = writer.run()
    except ScreeError as exc:  # before anything was synced: another model's index, bad settings, no model
        log.error("the writer cannot start", error=redact(str(exc)))
        return SETUP_ERROR, error_line(exc)
    except Exception as exc:
        log.exception("the writer failed")
        return FAILED, failed_message(exc)
    outcomes = {
        Outcome.STOPPED: STOPPED,
        Outcome.FIRST_SYNC_DONE: SYNCED,
        Outcome.OVER_CAP: OVER_CAP,
        Outcome.UNHEALTHY: UNHEALTHY,
    }
    return outcomes.get(result.outcome, FAILED), result.message


def _point_stdio_at_stderr() -> None:
    """R-P5: spawn keeps fds 0-2, which are serve's MCP pipes; only stderr may stay."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


class _Reporter:
    """Sends status up: whenever the Writer reports, and every HEARTBEAT_S from its own thread (R-P2)."""

    def __init__(self, up: Queue[ChildStatus | ReindexReply | Finished]) -> None:
        self._up = up
        self.writer: Writer | None = None  # set once it exists; before that the heartbeat says "starting"
        self.index_complete = False

    def put(self, message: ChildStatus | ReindexReply | Finished) -> None:
        try:
            self._up.put(message)
        except ValueError:  # closed: the child is exiting
            pass

    def send_state(self, state: WriterState) -> None:
        self.put(self._status_of(state))

    def beat(self, done: threading.Event) -> None:
        while not done.is_set():
            writer = self.writer
            # state() takes the writer's lock: a writer wedged on it falls silent like a frozen process
            self.put(self._status_of(writer.state()) if writer is not None else ChildStatus())
            done.wait(HEARTBEAT_S)

    def _status_of(self, state: WriterState) -> ChildStatus:
        return ChildStatus(
            first_sync_running=state.first_sync_running,
            first_sync_done=state.first_sync_done,
            notes_indexed=state.notes_indexed,
            last_error=state.last_error,
            over_cap_mb=state.over_cap_mb,
            cap_mb=state.cap_mb,
            index_complete=self.index_complete,
        )


def _index_complete(settings: Settings) -> bool:
    """Whether the index already had a finished first sync: then this child's sync is a cheap catch-up (R-M5)."""
    from scree.store import Store

    return Store.first_sync_recorded(settings.db_path, settings.folder)


def _serve_requests(
    down: Queue[ReindexRequest | Recheck],
    up: Queue[ChildStatus | ReindexReply | Finished],
    writer: Writer,
    done: threading.Event,
) -> None:
    """Hand what comes down to the writer: reindex requests (answered on its sync thread) and re-checks."""
    while not done.is_set():
        try:
            message = down.get(timeout=REQUEST_POLL_S)
        except queue.Empty:
            continue
        except (EOFError, OSError):
            return
        if isinstance(message, ReindexRequest):
            writer.request_reindex(message.path, _replier(up, message.request_id))
        elif isinstance(message, Recheck):
            writer.recheck(message.paths)


def _replier(up: Queue[ChildStatus | ReindexReply | Finished], request_id: int) -> Callable[[str], None]:
    def reply(text: str) -> None:
        try:
            up.put(ReindexReply(request_id, text))
        except ValueError:
            pass

    return reply


def _exit_with_parent(stop: threading.Event, log: Any) -> None:
    """R-P2: when serve is gone, stop the writer; exit after PARENT_GONE_EXIT_S even if it has not stopped."""
    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else None  # the parent holds its other end: EOF when it dies
    ppid = os.getppid()
    while os.getppid() == ppid:
        if sentinel is None:
            time.sleep(PARENT_POLL_S)
        elif multiprocessing.connection.wait([sentinel], PARENT_POLL_S):
            break
    log.warning("serve went away; stopping the writer", deadline_s=PARENT_GONE_EXIT_S)
    stop.set()
    time.sleep(PARENT_GONE_EXIT_S)
    log.error("the writer did not stop in time after serve went away; exiting")
    sys.stderr.flush()
    os._exit(EXIT_CODES[FAILED])


def _flush(up: Queue[ChildStatus | ReindexReply | Finished]) -> None:
    """Let the queue's feeder write what is buffered, for at most QUEUE_FLUSH_S (a dead reader never blocks us)."""
    up.close()
    flusher = threading.Thread(target=up.join_thread, name="scree-flush", daemon=True)
    flusher.start()
    flusher.join(QUEUE_FLUSH_S)
