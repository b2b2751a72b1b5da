"""`scree serve`'s supervisor: writer.lock retry, the writer child's start, restart with backoff and stop, and the
WriterControl the MCP reader calls (R-P1-R-P5, R-W4, R-W5, R-M5, R-M7).

The loop runs on its own thread, one step per tick (uvicorn's multiprocess supervisor, plus backoff):

    while not stopped:
        if a child runs:        take its messages, pass requests down; end it if it exited, fell silent (no
                                heartbeat for SCREE_WRITER_HEARTBEAT_SECONDS) or grew past SCREE_WRITER_MAX_RSS_MB
        elif we hold the lock:  start the next child once its backoff is over
        else:                   try writer.lock every SCREE_LOCK_RETRY_SECONDS (R-P4)

The loop posts its state to a Board (reader_proc/board.py); the reader's threads answer status, reindex and re-check
from that board (board.py's SupervisedControl, `Supervisor.control`) without ever waiting on the loop. The child is
started, heard and stopped through its WriterChild handle (writer_proc/child.py), the lock taken through LockRetry
(lock.py), every stop deadline comes from deadlines.py and every sentence from replies.py.

Who holds writer.lock: the supervisor takes it and hands the locked descriptor to each child (child.py), so one
open file description holds the flock for both. A crashed child leaves the lock with the supervisor, which restarts
the writer without another serve slipping in between; a serve killed with SIGKILL leaves the lock with its child
until the child sees its parent's pipe close (at once) and exits, within 5 s, and only then can another serve take
over: never two writers at once. (Had the supervisor alone held it, every SIGKILL of a serve would let its orphan
write beside the next writer for a while.) The cost is a child that is itself frozen when its serve dies: it keeps
the lock until someone kills it; that takes two faults at once.

The first child starts once the MCP handshake is done (`reader_ready`, called by the reader when the client says
`notifications/initialized`) or SCREE_WRITER_HANDSHAKE_GRACE_SECONDS after start, whichever comes first: a fresh
interpreter importing the writer would otherwise compete with the reader's start-up just when the client waits on it.

R-P3: each time it takes the lock the supervisor first runs a SYNC child (the first sync, then it exits, heap and all)
and then a WATCH child, which re-syncs cheaply (hashes only, nothing left to embed) and follows file events.

Faults (R-P2): a child that exits unasked, falls silent or grows too big is killed if need be and restarted after
SCREE_WRITER_RESTART_SECONDS, doubling up to SCREE_WRITER_RESTART_MAX_SECONDS, with the lock kept; search says
`[index not updating: …]` meanwhile. A child that cannot work here (R-S4 over the first-sync cap, R-W4 folder or
index replaced, an index made by another model) parks the supervisor: it releases the lock and tries again when the
index file changes (`scree reindex`), or after the longest backoff (never for the cap, which needs a reindex).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scree.config import BYTES_PER_MIB, Settings
from scree.deadlines import CLOSE_S, SIGKILL_TIMEOUT_S, SIGTERM_TIMEOUT_S, STOP_S
from scree.errors import ScreeError
from scree.index.backend import fenced, lock_lost, lock_name, lock_refusal, shared, writer_lock
from scree.index.folder import prepare_index_dir
from scree.index.lock import LockRetry
from scree.logs import EXIT_DRAIN_S, configure_logging, drain_stderr, get_logger, logged_thread
from scree.protocol import Outcome, Recheck, ReindexReply, ReindexRequest, Up, WriterReport
from scree.reader_proc.board import Board, Parked, SupervisedControl
from scree.replies import SUPERVISOR_FAILED, memory_reason, restarting, silent_reason, start_failed_reason
from scree.signals import SignalLatch
from scree.store.sqlite_files import wal_of

if TYPE_CHECKING:
    from scree.reader_proc.http_options import HttpOptions
    from scree.writer_proc.child import WriterChild

__all__ = ["Backoff", "Supervisor", "serve", "serve_http"]

log = get_logger(__name__)

EXIT_OK = 0  # R-L1
TICK_S = 0.1  # the loop's step; also the most a reply or a status waits in the queue before the reader sees it
STARTUP_GRACE_S = 30.0  # a new child's first heartbeat may take this long (a fresh interpreter on a cold disk)
MEMORY_CHECK_S = 1.0  # R-P2: how often the child's RSS is read


@dataclass(slots=True)
class Backoff:
    """R-P2: the delay before the next restart, doubling from first_s up to max_s; back to first_s when asked."""

    first_s: float
    max_s: float
    next_s: float = field(init=False)

    def __post_init__(self) -> None:
        self.next_s = self.first_s

    def take(self) -> float:
        """The delay for this restart; the next one waits twice as long (up to max_s)."""
        delay, self.next_s = self.next_s, min(self.next_s * 2, self.max_s)
        return delay

    def reset(self) -> None:
        self.next_s = self.first_s


@dataclass(slots=True)
class _Running:
    """The supervisor's bookkeeping for the child that runs now."""

    handle: WriterChild
    generation: int
    started_at: float
    last_heard: float
    heard: bool = False
    next_memory_check: float = 0.0


class Supervisor:
    """Keeps a writer child running while this serve holds writer.lock; `control` is the reader's side of it."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._options = settings.writer_limits
        self._lock = writer_lock(settings)
        self._lock_retry = LockRetry(
            self._lock,
            settings.lock_retry_s,
            lambda: prepare_index_dir(settings.index_dir, custom_db=settings.custom_db),
            self._announce_holder,
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._board = Board()  # all the loop shares with the reader's threads
        self.control = SupervisedControl(settings, self._board)  # the reader's WriterControl (any thread)
        # the loop's own state
        self._child: _Running | None = None
        self._generation = 0
        self._restart_at = 0.0
        self._backoff = Backoff(self._options.restart_s, self._options.restart_max_s)
        self._reader_ready = threading.Event()
        self._first_start_due = time.monotonic() + self._options.handshake_grace_s
        self._lock_check_at = 0.0  # when the database's session lock is next checked (after a restart it is gone)
        self._read_only: str | None = None  # why this process may never write (a reader role, no checkout): it reads

    # --- lifecycle ---

    def start(self) -> None:
        """Start the loop on its own thread; returns at once (the handshake never waits for a writer, R-M8).

        The first try for the lock is made here, a few system calls, so the reader's first answer already knows
        whether this session writes."""
        self._take_lock_when_due()
        self._thread = logged_thread("scree-supervisor", self._loop)
        self._thread.start()

    def reader_ready(self) -> None:
        """The MCP handshake is done: the first writer child may start now (any thread)."""
        self._reader_ready.set()

    def close(self) -> None:
        """Stop the writer (within STOP_S, deadlines.py) and release the lock; safe to call twice, from any thread."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(CLOSE_S)

    # --- the loop (its own thread) ---

    def _loop(self) -> None:
        import structlog

        structlog.contextvars.bind_contextvars(role="supervisor")
        try:
            while not self._stop.is_set():
                self._check_lock()
                if self._child is not None:
                    self._tend(self._child)
                elif self._stop.wait(TICK_S):
                    break
                elif self._lock.held:
                    self._start_when_due()
                else:
                    self._take_lock_when_due()
        except Exception:
            log.exception("the writer supervisor failed")
            self._board.writer_down(SUPERVISOR_FAILED)
        finally:
            self._shut_down()

    def _take_lock_when_due(self) -> None:
        if self._read_only is not None:
            return
        now = time.monotonic()
        parked = self._board.state.parked
        if parked is not None and not parked.may_retry(now, self._signature()):
            return
        try:
            if not self._lock_retry.try_take(now):
                self._read_only = lock_refusal(self._lock)
                if self._read_only is not None:  # said once; never tried again: this process only reads
                    log.warning("serving read-only; this process never writes the index", reason=self._read_only)
                    self._board.serving_read_only(self._read_only)
                return
        except ScreeError as exc:  # R-M5: the note says so; search still serves what is indexed
            log.warning("cannot take writer.lock; retrying", error=str(exc), retry_s=self._settings.lock_retry_s)
            self._board.lock_failed(str(exc))
            return
        log.info("writer lock taken", pid=os.getpid(), lock=lock_name(self._settings))
        self._restart_at = now
        self._backoff.reset()
        self._board.lock_taken()

    def _check_lock(self, now_too: bool = False) -> None:
        """Issue 31: a database's lock goes with its connection (the server restarted): stop the writer, whose
        generation is stale, and try for the lock again at once: re-taken, a fresh writer resumes (its generation
        bumped); held by another process, this one reads, as any serve that does not hold the lock. One probe
        per lock_retry_s, and whenever a writer exits."""
        now = time.monotonic()
        if not self._lock.held or (now < self._lock_check_at and not now_too):
            return
        self._lock_check_at = now + self._settings.lock_retry_s
        if not lock_lost(self._lock):
            return
        child, self._child = self._child, None
        if child is not None:
            child.handle.stop(SIGTERM_TIMEOUT_S, SIGKILL_TIMEOUT_S)
            self._board.child_gone()
        self._board.lock_released()
        self._lock_retry.due_now()
        log.warning("writer lock lost with its database connection; stopped the writer, taking the lock again")

    def _announce_holder(self, pid: int | None) -> None:
        log.info("another scree process keeps the index current", pid=pid, retry_s=self._settings.lock_retry_s)

    def _start_when_due(self) -> None:
        now = time.monotonic()
        if now < self._restart_at:
            return
        if self._generation == 0 and now < self._first_start_due and not self._reader_ready.is_set():
            return
        mode = self._board.state.mode
        self._generation += 1
        try:
            from scree.writer_proc.child import WriterChild  # a reader that never holds the lock never loads it

            handle = WriterChild.start(
                fenced(self._settings, self._lock), mode, self._lock.fileno()
            )  # shared: see the module docstring
        except (OSError, ValueError) as exc:
            self._failed(start_failed_reason(exc))
            return
        now = time.monotonic()
        self._child = _Running(handle, self._generation, now, now, next_memory_check=now)
        self._board.child_started(handle.pid)
        log.info("writer started", pid=handle.pid, mode=mode)

    def _tend(self, child: _Running) -> None:
        """One step with a child running: its messages, requests down, then whether it has to end."""
        for message in child.handle.messages(TICK_S):
            self._take(child, message)
        self._forward(child)
        if not child.handle.alive():
            child.handle.stop()  # reaps it, with what it said before it exited
            self._ended(child, None)
            return
        fault = self._fault(child)
        if fault is not None:
            child.handle.kill()
            child.handle.stop()
            self._ended(child, fault)

    def _take(self, child: _Running, message: Up) -> None:
        now = time.monotonic()
        child.last_heard = now
        if isinstance(message, WriterReport):
            first, child.heard = not child.heard, True
            if now - child.started_at >= self._options.restart_max_s:
                self._backoff.reset()  # it stayed up: the next fault starts the backoff afresh
            self._board.child_reported(message, first)
        elif isinstance(message, ReindexReply):
            self._board.answer(message.request_id, message.text)

    def _forward(self, child: _Running) -> None:
        """Reindex requests and re-checks go to a WATCH child; a SYNC child's successor re-checks every file."""
        requests, rechecks = self._board.work_for(child.generation, child.handle.mode)
        for request_id, path in requests:
            child.handle.send(ReindexRequest(request_id, path))
        if rechecks:
            child.handle.send(Recheck(rechecks))

    def _fault(self, child: _Running) -> str | None:
        """Why a live child must be killed (R-P2): silent too long, or too big; None when it is fine."""
        now = time.monotonic()
        limit = self._options.heartbeat_timeout_s
        if not child.heard:
            limit = max(limit, STARTUP_GRACE_S)
        if now - child.last_heard > limit:
            return silent_reason(limit)
        if now >= child.next_memory_check:
            child.next_memory_check = now + MEMORY_CHECK_S
            rss_mb = _rss_mb(child.handle.pid)
            if rss_mb is not None and rss_mb > self._options.max_rss_mb:
                return memory_reason(rss_mb, self._options.max_rss_mb)
        return None

    def _ended(self, child: _Running, fault: str | None) -> None:
        """A child is gone (stopped and reaped): what comes next depends on how it ended."""
        self._child = None
        handle = child.handle
        self._board.child_gone()
        self._check_lock(now_too=True)  # a writer that failed may have lost the lock with the database
        if not self._lock.held:
            return
        outcome = None if fault else handle.outcome()
        said = outcome.name.lower() if outcome is not None else None
        log.info("writer exited", pid=handle.pid, code=handle.exit_code, outcome=said, mode=handle.mode)
        if outcome is Outcome.FIRST_SYNC_DONE:  # R-P3: the process that did the big sync is gone; a fresh one watches
            self._restart_at = time.monotonic()
            self._board.first_sync_finished()
        elif outcome in (Outcome.OVER_CAP, Outcome.UNHEALTHY, Outcome.SETUP_ERROR):
            self._park(outcome, handle.finished.message if handle.finished else "")
        else:
            self._failed(fault or handle.reason())

    def _failed(self, reason: str) -> None:
        delay = self._backoff.take()
        self._restart_at = time.monotonic() + delay
        self._board.writer_down(restarting(reason))
        log.warning("writer down; restarting it", reason=reason, in_s=delay)

    def _park(self, outcome: Outcome, message: str) -> None:
        """R-S4, R-W4, a setup error: let go of the lock and wait for the index to change (or the longest backoff).
        The board says parked and not holding in one post, before the lock is let go: a reindex request between two
        posts had found nobody holding it and nothing parked, and answered that this session takes over (over the
        first-sync cap it never does)."""
        retry_at = time.monotonic() + self._options.restart_max_s
        self._board.park(Parked.after(outcome, message, self._board.state.latest, self._signature(), retry_at))
        self._lock.release()
        log.warning("writer stopped; writer.lock released", outcome=outcome.name.lower(), reason=message)

    def _release(self) -> None:
        self._board.lock_released()
        self._lock.release()

    def _shut_down(self) -> None:
        """R-W5: SIGTERM, SIGKILL after SIGTERM_TIMEOUT_S, join with a timeout always; then release the lock."""
        child, self._child = self._child, None
        if child is not None:
            child.handle.stop(SIGTERM_TIMEOUT_S, SIGKILL_TIMEOUT_S)
        self._release()
        self._board.shut_down()
        log.info("writer stopped; writer lock released")

    def _signature(self) -> IndexSignature:
        """What `scree reindex` changes: the index file's identity, size and mtime, and its WAL's while that holds
        anything (a reader opening the index may create an empty WAL, which is no change)."""
        if shared(self._settings):  # a database's readers see its changes by themselves
            return None, None
        db = self._settings.db_path
        return _file_key(db, keep_empty=True), _file_key(wal_of(db), keep_empty=False)


FileKey = tuple[int, int, int]  # inode, size, mtime_ns
IndexSignature = tuple[FileKey | None, FileKey | None]  # the index file's and its WAL's: what `scree reindex` changes


def _file_key(path: Path, *, keep_empty: bool) -> FileKey | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns) if info.st_size or keep_empty else None


def _rss_mb(pid: int | None) -> float | None:
    import psutil

    if pid is None:
        return None
    try:
        return float(psutil.Process(pid).memory_info().rss) / BYTES_PER_MIB
    except psutil.Error:
        return None


# --- `scree serve` ---


def _exit_on_signal(signalled: threading.Event, supervisor: Supervisor) -> None:
    """The reader's loop waits on stdin and cannot be woken cleanly: stop the writer, then end the process."""
    signalled.wait()
    log.info("signal received; stopping the writer", deadline_s=STOP_S)
    supervisor.close()
    drain_stderr(EXIT_DRAIN_S)  # the log lines still queued for a stderr pipe (a NonBlockingStderr), not forever
    os._exit(EXIT_OK)


def serve(settings: Settings) -> int:
    """`scree serve`: the MCP reader on this thread until the client closes stdin, the supervised writer beside it."""
    from scree.reader_proc.server import run_stdio

    configure_logging("reader", settings.log_format, settings.log_level)
    signalled = threading.Event()
    SignalLatch(signalled).install()
    supervisor = Supervisor(settings)
    supervisor.start()
    logged_thread("scree-signals", _exit_on_signal, signalled, supervisor).start()
    try:
        run_stdio(settings, supervisor.control, on_handshake=supervisor.reader_ready)
    finally:
        supervisor.close()
    return EXIT_OK


def serve_http(settings: Settings, options: HttpOptions) -> int:
    """`scree serve --http` (R-M9): the same supervisor and writer as stdio, the reader's tools over streamable HTTP
    until SIGTERM; the writer starts at once (clients come and go, there is no one handshake to wait for)."""
    from scree.reader_proc.http import bind, run_http

    configure_logging("reader", settings.log_format, settings.log_level)
    sock = bind(options.host, options.port)  # a port in use is refused here, before the lock is touched
    stop = threading.Event()
    latch = SignalLatch(stop)  # the first SIGTERM/SIGINT drains the server, a second exits at once (R-W5)
    latch.install()
    supervisor = Supervisor(settings)
    supervisor.start()
    supervisor.reader_ready()
    try:
        run_http(settings, supervisor.control, options, sock, stop, on_stop=supervisor.close)
    finally:
        supervisor.close()
        latch.restore()
    return EXIT_OK
