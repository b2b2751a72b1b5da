"""The writer child of `scree serve` and of `scree watch`'s first sync: its spawn entry point and first steps, the
messages on its two queues, and the parent's handle on it (WriterChild: start, messages, stop, outcome).

R-P1: the parent starts the writer with the spawn context, a fresh interpreter that carries none of the reader's
heap, threads or imports (R-P3), and talks to it over two multiprocessing queues, one per child (a child killed in
the middle of a queue operation takes its queues with it):

- down: `ReindexRequest` (answered up with a `ReindexReply` carrying its id) and `Recheck`;
- up: the Writer's own reports (`WriterReport`) as it makes them (at least every HEARTBEAT_S: also the heartbeat the
  supervisor's hang check waits for), and one `Finished` before a planned exit, whose Outcome is also the exit code.
  It holds at most UP_QUEUE_MAX messages the parent has not read: a put never waits, and a message that finds it
  full is dropped (a status report is stale by the next heartbeat; a Finished's outcome is the exit code too), so
  a parent that stops reading never blocks the writer (issue 34).

The child's end (R-P2): the kernel sends it a signal when its parent dies (Linux: PR_SET_PDEATHSIG; a signal of
its own, signals.PARENT_DEATH_SIGNAL, as the kernel may send it several times), the parent watch below catches the
rest, and that signal, SIGTERM and SIGINT are taken by a thread of their own (signals.StopSignals) that arms a kernel
deadline, WRITER_HARD_EXIT_S, before it sets the stop: a writer whose threads are all blocked (a full stderr pipe
nobody reads, a lock held by one of them) still ends in time.

The child's first steps come before anything else (R-P5): fd 0 becomes /dev/null and fd 1 (and sys.stdout) a copy of
stderr, so nothing but MCP ever reaches the client even though spawn hands the child the serve's standard streams;
then logging to stderr as role "writer". It never imports the MCP SDK (R-P3): the reader imports this module too, so
nothing heavy is imported at its top; the writer itself is imported inside `child_main`.

writer.lock: the parent passes the descriptor it locked to the child (`InheritedFd`), the same open file
description, so the flock lives while either process does: a crashed child leaves the parent holding it (restarts
race nobody), and a parent that dies leaves the child holding it until the child, seeing its parent gone, stops
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
from collections.abc import Callable, Iterator
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from typing import TYPE_CHECKING, Any

from scree.config import Settings
from scree.deadlines import (
    PARENT_GONE_EXIT_S,
    QUEUE_FLUSH_S,
    SIGKILL_TIMEOUT_S,
    SIGTERM_TIMEOUT_S,
    WRITER_HARD_EXIT_S,
)
from scree.logs import direct_stderr, drain_stderr, get_logger
from scree.protocol import SYNC, Down, Finished, Outcome, Recheck, ReindexReply, ReindexRequest, Up, WriterReport
from scree.replies import STOPPED_UNASKED, error_line, exit_code_reason, failed_message

if TYPE_CHECKING:
    from scree.writer_proc.writer import Writer

SYNC_NICENESS = 10  # a first-sync child is background work: the MCP reader answers first on a busy machine
REQUEST_POLL_S = 0.5  # the request thread looks at the done flag at least this often
PARENT_POLL_S = 0.5  # the parent check also catches a re-parented child where no sentinel exists
SPAWN = multiprocessing.get_context("spawn")  # R-P1: never fork: the child must not share the reader's state
MCP_MODULES = ("mcp", "mcp_types")  # R-P3: neither may be loaded in the child
# Unread messages the up-queue holds: ~0.5 KB each, so a full queue still fits a 64 KB pipe; the supervisor reads it
# every tick, so only a parent stalled for many seconds ever finds it full.
UP_QUEUE_MAX = 64


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


class WriterChild:
    """The parent's handle on one writer child (serve's supervisor, and `scree watch` for its first sync)."""

    def __init__(self, mode: str, process: BaseProcess, down: Queue[Down], up: Queue[Up]) -> None:
        self.mode = mode
        self.process = process
        self.pid = process.pid  # kept: a reaped process object answers nothing
        self._down = down
        self._up = up
        self.finished: Finished | None = None  # its last word, once it came
        self.exit_code: int | None = None  # once stop() saw it exit
        self._closed = False

    @classmethod
    def start(cls, settings: Settings, mode: str, lock_fd: int, parent: str = "serve") -> WriterChild:
        """Spawn a writer child in `mode` (SYNC or WATCH) that shares writer.lock through `lock_fd`; `parent` names
        this process in the child's log ("serve", "scree watch")."""
        down: Queue[Down] = SPAWN.Queue()
        up: Queue[Up] = SPAWN.Queue(UP_QUEUE_MAX)
        process = SPAWN.Process(
            target=child_main,
            args=(settings, mode, down, up, InheritedFd(lock_fd), parent),
            name=f"scree-writer-{mode}",
            daemon=True,  # multiprocessing's exit handler terminates it if the parent ever exits without stopping it
        )
        process.start()
        return cls(mode, process, down, up)

    def alive(self) -> bool:
        return not self._closed and self.process.is_alive()

    def send(self, message: Down) -> None:
        self._down.put(message)

    def messages(self, wait_s: float) -> Iterator[Up]:
        """What the child sent: wait up to wait_s for a first message, then read on without waiting. A `Finished` is
        kept in `finished` as it passes."""
        while True:
            try:
                message = self._up.get(timeout=wait_s)
            except queue.Empty:
                return
            except Exception as exc:  # a message torn by a dying child: its exit says the rest
                get_logger(__name__).warning("unreadable message from the writer", error=str(exc))
                return
            wait_s = 0.0
            if isinstance(message, Finished):
                self.finished = message
            yield message

    def kill(self, sigkill_timeout: float = SIGKILL_TIMEOUT_S) -> None:
        """SIGKILL, and wait at most sigkill_timeout for the exit (a frozen or runaway child, R-P2)."""
        if self.process.is_alive():
            self.process.kill()
            self.process.join(sigkill_timeout)

    def stop(self, sigterm_timeout: float = SIGTERM_TIMEOUT_S, sigkill_timeout: float = SIGKILL_TIMEOUT_S) -> None:
        """End the child within sigterm_timeout + sigkill_timeout (R-W5), as watchfiles' stop(): SIGTERM (its
        latch stops the writer), then SIGKILL; then its last messages are read and its queues dropped. For a child
        that already exited this only reaps it. Safe to call twice."""
        if self._closed:
            return
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(sigterm_timeout)
        if self.process.is_alive():
            get_logger(__name__).warning("the writer did not stop in time; killing it", deadline_s=sigterm_timeout)
        self.kill(sigkill_timeout)
        for _ in self.messages(0.0):  # its last word, sent before it exited
            pass
        self._down.cancel_join_thread()  # the feeder never waits on a reader that is gone
        self._down.close()
        self._up.close()
        self.exit_code = self.process.exitcode
        if self.exit_code is not None:
            self.process.close()
        self._closed = True

    def outcome(self) -> Outcome | None:
        """How it ended: its last word, or else what its exit code says; None for a signal or an unknown code."""
        if self.finished is not None:
            return self.finished.outcome
        return Outcome.of_exit_code(self.exit_code)

    def reason(self) -> str:
        """One line for a child that ended on its own when it should not have (the note's `index not updating`)."""
        return exit_reason(self.exit_code, self.finished)


def exit_reason(code: int | None, finished: Finished | None) -> str:
    """Why a child that should not have ended did: its own line, or else what its exit code or signal says."""
    if finished is not None and finished.outcome is not Outcome.STOPPED:
        return finished.message
    if finished is not None:
        return STOPPED_UNASKED
    return exit_code_reason(code)


def mcp_loaded() -> bool:
    """Whether any module of the MCP SDK is loaded in this process (R-P3: never in the writer)."""
    return any(name.split(".", 1)[0] in MCP_MODULES for name in list(sys.modules))


# --- the child ---


def child_main(
    settings: Settings, mode: str, down: Queue[Down], up: Queue[Up], lock: InheritedFd, parent: str = "serve"
) -> None:
    """The spawned writer: its stop signals, stdio and logging first, then run the Writer in `mode` and report how it
    ended."""
    from scree.signals import StopSignals, signal_on_parent_death

    stop = threading.Event()
    StopSignals(stop, WRITER_HARD_EXIT_S).install()  # before any thread starts: each inherits the blocked signals
    parent_process = multiprocessing.parent_process()
    if not signal_on_parent_death(parent_process.pid if parent_process is not None else None):
        os._exit(Outcome.STOPPED)  # the parent died while this process started: nothing to stop, nobody to tell
    _point_stdio_at_stderr()  # R-P5, before anything can print
    from scree.logs import configure_logging
    from scree.redact import register_secret

    # serve's stderr is the MCP client's pipe: a client that stops reading it must not stop the writer (issue 34)
    configure_logging("writer", settings.log_format, settings.log_level, never_block=True)
    register_secret(settings.api_key)
    log = get_logger(__name__)
    if mode == SYNC and hasattr(os, "nice"):
        os.nice(SYNC_NICENESS)  # the big sync yields the cores to the reader's handshake and searches (R-M8)

    from scree.writer_proc.writer import Writer

    parent_gone_said = threading.Event()
    watch_args = (stop, log, parent, parent_gone_said)
    threading.Thread(target=_exit_with_parent, args=watch_args, name="scree-parent", daemon=True).start()
    writer = Writer(settings, stop, on_status=lambda state: _put(up, state), first_sync_only=mode == SYNC)
    done = threading.Event()  # the request thread stops with it
    requests = threading.Thread(target=_serve_requests, args=(down, up, writer, done), name="scree-requests")
    requests.daemon = True
    requests.start()
    log.debug("writer child started", mode=mode, pid=os.getpid(), lock_fd=lock.fd, mcp_loaded=mcp_loaded())
    outcome, message = _run(writer, log)
    if parent_process is not None and not parent_process.is_alive():
        # the kernel's parent-death signal can stop the writer before the parent watch has said why: let it say so
        parent_gone_said.wait(2 * PARENT_POLL_S)
    done.set()
    _put(up, Finished(outcome, message))
    log.debug("writer child exiting", mode=mode, outcome=outcome.name.lower(), mcp_loaded=mcp_loaded())
    _flush(up)
    drain_stderr(QUEUE_FLUSH_S)
    os._exit(outcome)  # no interpreter teardown behind a thread the writer may have left busy


def _run(writer: Writer, log: Any) -> tuple[Outcome, str]:
    """Run the writer; how it ended, with the line for the user."""
    from scree.errors import ScreeError
    from scree.redact import redact

    try:
        result = writer.run()
    except ScreeError as exc:  # before anything was synced: another model's index, bad settings, no model
        log.error("the writer cannot start", error=redact(str(exc)))
        return Outcome.SETUP_ERROR, error_line(exc)
    except Exception as exc:
        log.exception("the writer failed")
        return Outcome.FAILED, failed_message(exc)
    return result.outcome, result.message


def _put(up: Queue[Up], message: Up) -> None:
    """Send `message` up without ever waiting: a parent that stopped reading finds it dropped (module docstring)."""
    try:
        up.put_nowait(message)
    except queue.Full:
        if not isinstance(message, WriterReport):
            get_logger(__name__).warning("the parent reads nothing; a message was dropped", kind=type(message).__name__)
    except ValueError:  # closed: the child is exiting
        pass


def _point_stdio_at_stderr() -> None:
    """R-P5: spawn keeps fds 0-2, which are serve's MCP pipes; only stderr may stay."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _serve_requests(down: Queue[Down], up: Queue[Up], writer: Writer, done: threading.Event) -> None:
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


def _replier(up: Queue[Up], request_id: int) -> Callable[[str], None]:
    def reply(text: str) -> None:
        _put(up, ReindexReply(request_id, text))

    return reply


def _exit_with_parent(stop: threading.Event, log: Any, parent: str, said: threading.Event) -> None:
    """R-P2: when the parent (`parent`: serve, or scree watch) is gone, stop the writer and say why (`said` set
    once the line is logged); exit after PARENT_GONE_EXIT_S even if it has not stopped."""
    process = multiprocessing.parent_process()
    sentinel = process.sentinel if process is not None else None  # the parent holds its other end: EOF when it dies
    ppid = os.getppid()
    while os.getppid() == ppid:
        if sentinel is None:
            time.sleep(PARENT_POLL_S)
        elif multiprocessing.connection.wait([sentinel], PARENT_POLL_S):
            break
    from scree.signals import hard_exit_in

    hard_exit_in(PARENT_GONE_EXIT_S)  # first: the log line below may block on a stderr nobody reads any more
    stop.set()
    with direct_stderr():  # written now, not left to a thread a loaded machine may not run before the deadline
        log.warning(f"{parent} went away; stopping the writer", deadline_s=PARENT_GONE_EXIT_S)
    said.set()
    time.sleep(PARENT_GONE_EXIT_S)
    log.error(f"the writer did not stop in time after {parent} went away; exiting")
    drain_stderr(QUEUE_FLUSH_S)
    os._exit(Outcome.FAILED)


def _flush(up: Queue[Up]) -> None:
    """Let the queue's feeder write what is buffered, for at most QUEUE_FLUSH_S (a dead reader never blocks us)."""
    up.close()
    flusher = threading.Thread(target=up.join_thread, name="scree-flush", daemon=True)
    flusher.start()
    flusher.join(QUEUE_FLUSH_S)
