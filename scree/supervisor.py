"""`scree serve`'s supervisor: writer.lock retry, the writer child's start, restart with backoff and stop, and the
WriterControl the MCP reader calls (R-P1-R-P5, R-W4, R-W5, R-M5, R-M7).

The loop runs on its own thread, one step per tick (uvicorn's multiprocess supervisor, plus backoff):

    while not stopped:
        if a child runs:        take its messages, pass requests down; end it if it exited, fell silent (no
                                heartbeat for SCREE_WRITER_HEARTBEAT_SECONDS) or grew past SCREE_WRITER_MAX_RSS_MB
        elif we hold the lock:  start the next child once its backoff is over
        else:                   try writer.lock every SCREE_LOCK_RETRY_SECONDS (R-P4)

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

import contextvars
import itertools
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scree.config import Settings, env_number
from scree.errors import ScreeError
from scree.lock import WriterLock, lock_holder
from scree.logs import configure_logging, get_logger
from scree.paths import ensure_private_dir
from scree.signals import SignalLatch
from scree.status import WriterStatus
from scree.writer_proc.child import (
    OUTCOME_BY_EXIT_CODE,
    OVER_CAP,
    SETUP_ERROR,
    STOPPED,
    SYNC,
    SYNCED,
    UNHEALTHY,
    WATCH,
    ChildStatus,
    Finished,
    Recheck,
    ReindexReply,
    ReindexRequest,
    WriterChild,
    start_writer,
)

log = get_logger(__name__)

EXIT_OK = 0  # R-L1
TICK_S = 0.1  # the loop's step; also the most a reply or a status waits in the queue before the reader sees it
STOP_DEADLINE_S = 5.0  # R-W5: SIGTERM, then SIGKILL after this
KILL_JOIN_S = 2.0  # after SIGKILL, the most we wait for the exit to be reported
CLOSE_JOIN_S = STOP_DEADLINE_S + KILL_JOIN_S + 1.0  # close() waits this long for the loop to wind down
STARTUP_GRACE_S = 30.0  # a new child's first heartbeat may take this long (a fresh interpreter on a cold disk)
MEMORY_CHECK_S = 1.0  # R-P2: how often the child's RSS is read
BYTES_PER_MB = 1 << 20  # SCREE_WRITER_MAX_RSS_MB counts MiB, as ps and top do
REPLY_TIMEOUT_S = 25.0  # R-M7: a reindex waits this long for the writer's answer (an MCP client waits longer)
FIRST_SYNC_WAIT_S = 5.0  # R-M7: while the first sync runs, the reply falls back to saying so after this
REPLY_POLL_S = 0.1
MAX_RECHECKS = 1000  # paths queued for the next child at most; its start-up sync re-checks everything anyway

DEFAULT_MAX_RSS_MB = 1024.0  # R-P2; the offline first sync's bar is 300 MB (SPEC §10)
DEFAULT_RESTART_S = 1.0  # R-P2: restart backoff, doubling ...
DEFAULT_RESTART_MAX_S = 60.0  # ... up to this
DEFAULT_HEARTBEAT_TIMEOUT_S = 10.0  # R-P2: the child reports every second; this long silent means hung
DEFAULT_HANDSHAKE_GRACE_S = 2.0  # R-M8: the first child waits this long at most for the MCP handshake

FIRST_SYNC_REPLY = "The first sync is still running ({n} notes indexed so far); new and changed files are included."


@dataclass(frozen=True, slots=True)
class SupervisorOptions:
    """The supervisor's limits, from SCREE_WRITER_* (tests shorten them)."""

    max_rss_mb: float = DEFAULT_MAX_RSS_MB
    restart_s: float = DEFAULT_RESTART_S
    restart_max_s: float = DEFAULT_RESTART_MAX_S
    heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S
    handshake_grace_s: float = DEFAULT_HANDSHAKE_GRACE_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SupervisorOptions:
        restart_s = env_number(env, "SCREE_WRITER_RESTART_SECONDS", DEFAULT_RESTART_S, 0.01)
        return cls(
            max_rss_mb=env_number(env, "SCREE_WRITER_MAX_RSS_MB", DEFAULT_MAX_RSS_MB, 1.0),
            restart_s=restart_s,
            restart_max_s=max(restart_s, env_number(env, "SCREE_WRITER_RESTART_MAX_SECONDS", DEFAULT_RESTART_MAX_S)),
            heartbeat_timeout_s=env_number(env, "SCREE_WRITER_HEARTBEAT_SECONDS", DEFAULT_HEARTBEAT_TIMEOUT_S, 0.5),
            handshake_grace_s=env_number(env, "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS", DEFAULT_HANDSHAKE_GRACE_S, 0.0),
        )


@dataclass(slots=True)
class _Pending:
    """A reindex request waiting for the writer's one-line answer."""

    path: str | None
    sent_to: int = 0  # the generation of the child it was passed to (0: none yet); a restart passes it again
    reply: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def answer(self, text: str) -> None:
        self.reply = text
        self.done.set()


@dataclass(frozen=True, slots=True)
class _Parked:
    """Why the supervisor let go of the lock, and when it tries again."""

    error: str | None  # the note's reason; None for the first-sync cap, which has its own note
    over_cap_mb: float | None
    cap_mb: float | None
    signature: object  # the index file's identity then: a change (`scree reindex`) ends the parking
    retry_at: float | None  # monotonic; None: only a change of the index ends it

    def may_retry(self, now: float, signature: object) -> bool:
        return signature != self.signature or (self.retry_at is not None and now >= self.retry_at)


@dataclass(slots=True)
class _Running:
    """The supervisor's bookkeeping for the child that runs now."""

    handle: WriterChild
    generation: int
    started_at: float
    last_heard: float
    heard: bool = False
    finished: Finished | None = None
    next_memory_check: float = 0.0


@dataclass(slots=True)
class _View:
    """What the reader's threads read; written by the loop, always under the supervisor's mutex."""

    held: bool = False
    mode: str = SYNC
    child_pid: int | None = None
    latest: ChildStatus | None = None
    error: str | None = None  # this session's writer is down (and restarting)
    first_sync_done: bool = False
    parked: _Parked | None = None
    rechecks: list[str] = field(default_factory=list)
    pending: dict[int, _Pending] = field(default_factory=dict)


class Supervisor:
    """Keeps a writer child running while this serve holds writer.lock; the reader's WriterControl (status.py)."""

    def __init__(self, settings: Settings, options: SupervisorOptions | None = None) -> None:
        self._settings = settings
        self._options = options or SupervisorOptions()
        self._lock = WriterLock(settings.lock_path)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._mutex = threading.Lock()
        self._view = _View()
        self._ids = itertools.count(1)
        self._index_first_sync_done = False  # read from the index; once seen it never goes back
        # the loop's own state
        self._child: _Running | None = None
        self._generation = 0
        self._restart_at = 0.0
        self._backoff = self._options.restart_s
        self._next_lock_try = 0.0
        self._announced: int | None = -1
        self._reader_ready = threading.Event()
        self._first_start_due = time.monotonic() + self._options.handshake_grace_s

    # --- lifecycle ---

    def start(self) -> None:
        """Start the loop on its own thread; returns at once (the handshake never waits for a writer, R-M8).

        The first try for the lock is made here, a few system calls, so the reader's first answer already knows
        whether this session writes."""
        self._take_lock_when_due()
        self._thread = _thread("scree-supervisor", self._loop)
        self._thread.start()

    def reader_ready(self) -> None:
        """The MCP handshake is done: the first writer child may start now (any thread)."""
        self._reader_ready.set()

    def close(self) -> None:
        """Stop the writer (SIGTERM, SIGKILL after 5 s) and release the lock; safe to call twice, from any thread."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(CLOSE_JOIN_S)

    # --- the loop (its own thread) ---

    def _loop(self) -> None:
        import structlog

        structlog.contextvars.bind_contextvars(role="supervisor")
        try:
            while not self._stop.is_set():
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
            with self._mutex:
                self._view.error = "the writer supervisor failed; restart the session to resume indexing"
        finally:
            self._shut_down()

    def _take_lock_when_due(self) -> None:
        now = time.monotonic()
        parked = self._view.parked
        if now < self._next_lock_try or (parked is not None and not parked.may_retry(now, self._signature())):
            return
        self._next_lock_try = now + self._settings.lock_retry_s
        try:
            ensure_private_dir(self._settings.index_dir)
            taken = self._lock.try_acquire()
        except ScreeError as exc:
            log.warning("cannot take writer.lock; retrying", error=str(exc), retry_s=self._settings.lock_retry_s)
            return
        if not taken:
            pid = self._lock.holder_pid()
            if pid != self._announced:
                self._announced = pid
                log.info("another scree process keeps the index current", pid=pid, retry_s=self._settings.lock_retry_s)
            return
        log.info("writer lock taken", pid=os.getpid(), lock=str(self._settings.lock_path))
        self._announced, self._restart_at, self._backoff = -1, now, self._options.restart_s
        with self._mutex:
            self._view.held, self._view.mode, self._view.parked, self._view.latest = True, SYNC, None, None

    def _start_when_due(self) -> None:
        now = time.monotonic()
        if now < self._restart_at:
            return
        if self._generation == 0 and now < self._first_start_due and not self._reader_ready.is_set():
            return
        mode = self._view.mode
        self._generation += 1
        try:
            handle = start_writer(self._settings, mode, _locked_fd(self._lock))
        except (OSError, ValueError) as exc:
            self._failed(f"the writer process could not start: {exc}")
            return
        now = time.monotonic()
        self._child = _Running(handle, self._generation, now, now, next_memory_check=now)
        with self._mutex:
            self._view.child_pid = handle.process.pid
        log.info("writer started", pid=handle.process.pid, mode=mode)

    def _tend(self, child: _Running) -> None:
        """One step with a child running: its messages, requests down, then whether it has to end."""
        self._drain(child, TICK_S)
        self._forward(child)
        if not child.handle.process.is_alive():
            self._drain(child, 0.0)  # what it said before it exited
            self._ended(child, None)
            return
        fault = self._fault(child)
        if fault is not None:
            child.handle.process.kill()
            child.handle.process.join(KILL_JOIN_S)
            self._ended(child, fault)

    def _drain(self, child: _Running, wait_s: float) -> None:
        """Take what the child sent: wait up to wait_s for a first message, then read on without waiting."""
        while True:
            try:
                message = child.handle.up.get(timeout=wait_s)
            except queue.Empty:
                return
            except Exception as exc:  # a message torn by a dying child: the exit check deals with the child
                log.warning("unreadable message from the writer", error=str(exc))
                return
            wait_s = 0.0
            self._take(child, message)

    def _take(self, child: _Running, message: ChildStatus | ReindexReply | Finished) -> None:
        now = time.monotonic()
        child.last_heard = now
        if isinstance(message, ChildStatus):
            first, child.heard = not child.heard, True
            if now - child.started_at >= self._options.restart_max_s:
                self._backoff = self._options.restart_s  # it stayed up: the next fault starts the backoff afresh
            with self._mutex:
                self._view.latest = message
                if first:
                    self._view.error = None  # the writer is back
        elif isinstance(message, ReindexReply):
            with self._mutex:
                pending = self._view.pending.pop(message.request_id, None)
            if pending is not None:
                pending.answer(message.text)
        elif isinstance(message, Finished):
            child.finished = message

    def _forward(self, child: _Running) -> None:
        """Reindex requests and re-checks go to a WATCH child; a SYNC child's successor re-checks every file."""
        with self._mutex:
            rechecks, self._view.rechecks = self._view.rechecks, []
            if child.handle.mode != WATCH:
                return
            unsent = [(rid, p) for rid, p in self._view.pending.items() if p.sent_to != child.generation]
            for _, pending in unsent:
                pending.sent_to = child.generation
        for rid, pending in unsent:
            child.handle.down.put(ReindexRequest(rid, pending.path))
        if rechecks:
            child.handle.down.put(Recheck(tuple(dict.fromkeys(rechecks))))

    def _fault(self, child: _Running) -> str | None:
        """Why a live child must be killed (R-P2): silent too long, or too big; None when it is fine."""
        now = time.monotonic()
        limit = self._options.heartbeat_timeout_s
        if not child.heard:
            limit = max(limit, STARTUP_GRACE_S)
        if now - child.last_heard > limit:
            return f"the writer stopped answering (no heartbeat for {limit:g} s) and was killed"
        if now >= child.next_memory_check:
            child.next_memory_check = now + MEMORY_CHECK_S
            rss_mb = _rss_mb(child.handle.process.pid)
            if rss_mb is not None and rss_mb > self._options.max_rss_mb:
                return (
                    f"the writer used {rss_mb:.0f} MB of memory, over "
                    f"SCREE_WRITER_MAX_RSS_MB={self._options.max_rss_mb:g}, and was killed"
                )
        return None

    def _ended(self, child: _Running, fault: str | None) -> None:
        """A child is gone: what comes next depends on how it ended."""
        self._child = None
        process = child.handle.process
        pid, code = process.pid, process.exitcode
        child.handle.discard_queues()
        if code is not None:
            process.close()
        with self._mutex:
            self._view.child_pid = None
        finished = child.finished
        outcome = finished.outcome if finished else OUTCOME_BY_EXIT_CODE.get(code) if code is not None else None
        outcome = None if fault else outcome
        message = finished.message if finished else ""
        log.info("writer exited", pid=pid, code=code, outcome=outcome, mode=child.handle.mode)
        if outcome == SYNCED:  # R-P3: the process that did the big sync is gone; a fresh one watches
            self._restart_at = time.monotonic()
            with self._mutex:
                self._view.mode, self._view.first_sync_done = WATCH, True
        elif outcome in (OVER_CAP, UNHEALTHY, SETUP_ERROR):
            self._park(outcome, message)
        else:
            self._failed(fault or _exit_reason(code, finished))

    def _failed(self, reason: str) -> None:
        delay, self._backoff = self._backoff, min(self._backoff * 2, self._options.restart_max_s)
        self._restart_at = time.monotonic() + delay
        with self._mutex:
            self._view.error = f"{reason}; restarting it"
        log.warning("writer down; restarting it", reason=reason, in_s=delay)

    def _park(self, outcome: str, message: str) -> None:
        """R-S4, R-W4, a setup error: let go of the lock and wait for the index to change (or the longest backoff)."""
        self._release()
        latest = self._view.latest
        over_cap = outcome == OVER_CAP and latest is not None and latest.over_cap_mb is not None
        now = time.monotonic()
        parked = _Parked(
            error=None if over_cap else message,
            over_cap_mb=latest.over_cap_mb if over_cap and latest else None,
            cap_mb=latest.cap_mb if over_cap and latest else None,
            signature=self._signature(),
            retry_at=None if outcome == OVER_CAP else now + self._options.restart_max_s,
        )
        with self._mutex:
            self._view.parked, self._view.mode, self._view.error = parked, SYNC, None
        log.warning("writer stopped; writer.lock released", outcome=outcome, reason=message)

    def _release(self) -> None:
        with self._mutex:
            self._view.held = False
        self._lock.release()

    def _shut_down(self) -> None:
        """R-W5: SIGTERM, SIGKILL after STOP_DEADLINE_S, join with a timeout always; then release the lock."""
        child, self._child = self._child, None
        if child is not None:
            process = child.handle.process
            process.terminate()
            process.join(STOP_DEADLINE_S)
            if process.is_alive():
                log.warning("the writer did not stop in time; killing it", deadline_s=STOP_DEADLINE_S)
                process.kill()
                process.join(KILL_JOIN_S)
            child.handle.discard_queues()
        self._release()
        with self._mutex:
            pending, self._view.pending = list(self._view.pending.values()), {}
            self._view.child_pid = None
        for request in pending:
            request.answer("scree is shutting down; the request was not run.")
        log.info("writer stopped; writer lock released")

    def _signature(self) -> object:
        """What `scree reindex` changes: the index file's identity, size and mtime, and its WAL's while that holds
        anything (a reader opening the index may create an empty WAL, which is no change)."""
        db = self._settings.db_path
        return _file_key(db, keep_empty=True), _file_key(db.with_name(db.name + "-wal"), keep_empty=False)

    # --- the reader's side (WriterControl; any thread, never blocks on the loop) ---

    def status(self) -> WriterStatus:
        """R-M5: who keeps the index current and how far it got; cheap (a lock probe at most, an index read only
        while another process builds it)."""
        with self._mutex:
            view = _View(
                held=self._view.held,
                mode=self._view.mode,
                latest=self._view.latest,
                error=self._view.error,
                first_sync_done=self._view.first_sync_done,
                parked=self._view.parked,
            )
        if view.held:
            latest = view.latest or ChildStatus()
            # Until the child reports, the index says whether this start is a first sync or a catch-up.
            complete = latest.index_complete if view.latest is not None else self._first_sync_done_in_index()
            return WriterStatus(
                holder="self",
                pid=os.getpid(),
                first_sync_running=view.mode == SYNC and not complete,
                notes_indexed=latest.notes_indexed,
                error=view.error or latest.last_error,
                first_sync_done=view.first_sync_done or complete,
            )
        pid = lock_holder(self._settings.lock_path)
        if pid is not None and pid != os.getpid():
            return WriterStatus(holder="other", pid=pid, first_sync_done=self._first_sync_done_in_index())
        parked = view.parked
        if parked is None:
            return WriterStatus(holder="none")
        return WriterStatus(holder="none", error=parked.error, over_cap_mb=parked.over_cap_mb, cap_mb=parked.cap_mb)

    def _first_sync_done_in_index(self) -> bool:
        """Whether the index records a finished first sync: another process's progress is visible only there. The
        reader asks while it searches, so the store module is loaded already (R-M8)."""
        if not self._index_first_sync_done and self._settings.db_path.exists():
            from scree.store import Store

            try:
                with Store.open(self._settings.db_path, self._settings.folder, readonly=True) as store:
                    self._index_first_sync_done = store.get_meta("first_sync_done") == "1"
            except ScreeError:
                return False
        return self._index_first_sync_done

    def request_reindex(self, path: str | None) -> str:
        """R-M7: ask the writer and wait for its line; while the first sync runs, say so after FIRST_SYNC_WAIT_S."""
        status = self.status()
        if status.holder != "self":
            return self._not_ours(status)
        with self._mutex:
            down = self._view.child_pid is None and self._view.error is not None
        if down and status.error is not None:
            return f"The index is not updating right now ({status.error}); the folder is re-synced when it is back."
        request_id, pending = next(self._ids), _Pending(path)
        with self._mutex:
            self._view.pending[request_id] = pending
        started = time.monotonic()
        while not pending.done.wait(REPLY_POLL_S):
            waited = time.monotonic() - started
            now = self.status()
            if now.holder != "self" or (now.first_sync_running and waited >= FIRST_SYNC_WAIT_S):
                with self._mutex:
                    self._view.pending.pop(request_id, None)
                if now.holder != "self":
                    return self._not_ours(now)
                return FIRST_SYNC_REPLY.format(n=now.notes_indexed)
            if waited >= REPLY_TIMEOUT_S:
                return f"Still re-indexing after {REPLY_TIMEOUT_S:g} s; it goes on in the background."
        return pending.reply or ""

    def _not_ours(self, status: WriterStatus) -> str:
        if status.holder == "other":
            from scree.app import other_writer_message

            return other_writer_message(status.pid)
        if status.over_cap_mb is not None and status.cap_mb is not None:
            return (
                f"Not indexed: this folder has {status.over_cap_mb:.1f} MB of markdown, over SCREE_FIRST_SYNC_MB="
                f'{status.cap_mb:g}; run "scree reindex" in it to index it anyway.'
            )
        if status.error is not None:
            return f"The index is not updating: {status.error}."
        return (
            "No scree process keeps this index current right now; this session takes over within "
            f"{self._settings.lock_retry_s:g} s and syncs the folder first."
        )

    def recheck(self, paths: Sequence[str]) -> None:
        """R-M2: queue files a search dropped for the writer; never blocks (the loop passes them down)."""
        with self._mutex:
            if len(self._view.rechecks) < MAX_RECHECKS:
                self._view.rechecks.extend(paths)


def _exit_reason(code: int | None, finished: Finished | None) -> str:
    """One line for a child that ended on its own when it should not have."""
    if finished is not None and finished.outcome != STOPPED:
        return finished.message
    if finished is not None:
        return "the writer process stopped unasked"
    if code is not None and code < 0:
        return f"the writer process was killed by {signal.Signals(-code).name}"
    return f"the writer process exited with code {code}"


def _file_key(path: Path, *, keep_empty: bool) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns) if info.st_size or keep_empty else None


def _locked_fd(lock: WriterLock) -> int:
    """The descriptor WriterLock locked, for the child to share (module docstring): the one place that hands it on."""
    fd = lock.fileno()
    if fd is None:
        raise ValueError("writer.lock is not held")
    return fd


def _rss_mb(pid: int | None) -> float | None:
    import psutil

    if pid is None:
        return None
    try:
        return float(psutil.Process(pid).memory_info().rss) / BYTES_PER_MB
    except psutil.Error:
        return None


def _thread(name: str, target: Callable[..., None], *args: object) -> threading.Thread:
    """A daemon thread that keeps the caller's log context (role=...)."""
    context = contextvars.copy_context()
    return threading.Thread(target=context.run, args=(target, *args), name=name, daemon=True)


# --- `scree serve` ---


def _exit_on_signal(signalled: threading.Event, supervisor: Supervisor) -> None:
    """The reader's loop waits on stdin and cannot be woken cleanly: stop the writer, then end the process."""
    signalled.wait()
    log.info("signal received; stopping the writer", deadline_s=STOP_DEADLINE_S)
    supervisor.close()
    sys.stderr.flush()
    os._exit(EXIT_OK)


def serve(settings: Settings) -> int:
    """`scree serve`: the MCP reader on this thread until the client closes stdin, the supervised writer beside it."""
    from scree.reader_proc.server import run_stdio

    configure_logging("reader", settings.log_format, settings.log_level)
    signalled = threading.Event()
    SignalLatch(signalled).install()
    supervisor = Supervisor(settings, SupervisorOptions.from_env(os.environ))
    supervisor.start()
    _thread("scree-signals", _exit_on_signal, signalled, supervisor).start()
    try:
        run_stdio(settings, supervisor, on_handshake=supervisor.reader_ready)
    finally:
        supervisor.close()
    return EXIT_OK
