"""`scree watch` (R-P6): the writer in the foreground for systemd or Docker: lock retry, signals, exit codes.

The lock is taken here, not in the Writer, so serve's supervisor can hold it in its own process. While another
process holds it, watch says once which pid and retries every SCREE_LOCK_RETRY_SECONDS (R-P4); when that process
exits, watch takes over and syncs first (LockRetry, lock.py). SIGTERM or SIGINT stops it within 5 s and releases
the lock (deadlines.py); a second
signal exits at once (R-W5). Signal handlers only set the stop event (the main loop never waits on that event, so
setting it from a handler cannot deadlock) and count; the Writer's main loop notices and winds down.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from scree.config import Settings
from scree.errors import IndexUnavailableError
from scree.index.backend import fenced, holder_where, lock_lost, lock_name, lock_refusal, writer_lock
from scree.index.folder import prepare_index_dir
from scree.index.lock import LOCK_POLL_S, IndexLock, LockRetry
from scree.logs import get_logger
from scree.protocol import SYNC, Finished, Outcome, WriterReport
from scree.redact import redact
from scree.replies import first_sync_process_exited, waiting_for_lock
from scree.signals import SignalLatch
from scree.writer_proc.child import WriterChild
from scree.writer_proc.writer import Writer

log = get_logger(__name__)

EXIT_OK, EXIT_FAIL = 0, 1  # R-L1; a health failure exits non-zero so the service manager restarts (R-P6)
CHILD_POLL_S = 0.2  # how often the wait for the first-sync child looks at a stop


def wait_for_lock(settings: Settings, stop: threading.Event, *, patient: bool = False) -> IndexLock | None:
    """Take writer.lock, retrying every lock_retry_s while another process holds it (R-P4); None when stopped.
    `patient` (issue 31: taking a database's lock again after it went with a restarted server): a database that
    cannot be reached yet is waited for, the pause doubling up to SCREE_OUTAGE_PAUSE_MAX_SECONDS, not an error."""

    def announce(pid: int | None) -> None:
        line = waiting_for_lock(pid, lock_name(settings), settings.lock_retry_s, holder_where(settings))
        print(f"scree: {line}", file=sys.stderr, flush=True)

    retry = LockRetry(
        writer_lock(settings),
        settings.lock_retry_s,
        lambda: prepare_index_dir(settings.index_dir, custom_db=settings.custom_db),
        announce,
    )

    def stopped() -> bool:  # a lock this process may never take (a reader role, no checkout) ends the wait
        return stop.is_set() or lock_refusal(retry.lock) is not None

    pause = settings.outage_pause_s
    while True:
        try:
            if retry.wait(stopped):
                return retry.lock
            break
        except IndexUnavailableError as exc:
            if not patient:
                raise
            log.warning("the index database is unavailable; retrying the writer lock", error=str(exc), pause_s=pause)
            if _sleep_unless(stop, pause):
                return None
            pause = min(max(pause, 0.1) * 2, settings.outage_pause_max_s)
    refusal = lock_refusal(retry.lock)
    if refusal is not None:
        raise IndexUnavailableError(refusal)
    return None


def _sleep_unless(stop: threading.Event, seconds: float) -> bool:
    """Sleep up to `seconds`, True as soon as `stop` is set. Polls: the main thread never waits on the event a
    signal handler sets (module docstring)."""
    deadline = time.monotonic() + seconds
    while not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(LOCK_POLL_S, left))
    return True


class LockWatch:
    """Issue 31: a database's session lock goes with its connection (the server restarted, the connection was cut),
    and nothing tells the holder. This thread looks once per lock_retry_s (and forwards a signal's stop every
    LOCK_POLL_S): when the lock is gone it sets `writing_stop`, which winds the writer down, and `lost` says why.
    A writer whose lock is gone is fenced in the meantime (store.pg_writer): it cannot write a row."""

    def __init__(self, lock: IndexLock, stop: threading.Event, retry_s: float) -> None:
        self.writing_stop = threading.Event()
        self.lost = False
        self._lock, self._stop, self._retry_s = lock, stop, retry_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lock-watch", daemon=True)

    def __enter__(self) -> LockWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._done.set()
        self._thread.join()  # before the lock is released: one thread at a time uses its connection

    def _run(self) -> None:
        check_at = time.monotonic() + self._retry_s
        while not self._done.wait(LOCK_POLL_S):
            if self._stop.is_set():
                self.writing_stop.set()
                return
            if time.monotonic() < check_at:
                continue
            check_at = time.monotonic() + self._retry_s
            if lock_lost(self._lock):
                self.lost = True
                self.writing_stop.set()
                return


def _log_status(state: WriterReport) -> None:
    log.debug(
        "writer status",
        first_sync_running=state.first_sync_running,
        complete=state.complete,
        notes_indexed=state.notes_indexed,
        last_error=state.last_error,
        event_batches=state.event_batches,
        pending=state.pending,
        watches=state.watches,
    )


def _first_sync_in_child(settings: Settings, lock: IndexLock, stop: threading.Event) -> Finished | None:
    """R-P3 for `scree watch`: the big first sync runs in a spawned child that shares the lock and exits, so this
    process watches with a heap that never held it (writer idle bar). None when the child synced; else its result.
    A stop ends the child within deadlines.STOP_S (R-W5)."""
    child = WriterChild.start(settings, SYNC, lock.fileno(), parent="scree watch")
    try:
        while child.alive() and not stop.is_set():
            for _ in child.messages(CHILD_POLL_S):  # the child logs its own progress; its last word is kept
                pass
    finally:
        child.stop()
    outcome = child.outcome()
    if outcome is Outcome.FIRST_SYNC_DONE and not stop.is_set():
        return None
    if outcome in (Outcome.FIRST_SYNC_DONE, Outcome.STOPPED) or stop.is_set():
        return Finished(Outcome.STOPPED, "stopped")
    line = child.finished.message if child.finished else first_sync_process_exited(child.exit_code)
    return Finished(Outcome.OVER_CAP if outcome is Outcome.OVER_CAP else Outcome.FAILED, line or "failed")


def run_watch(settings: Settings) -> int:
    """Run the writer for `settings.folder` until a signal; returns the process exit code."""
    stop = threading.Event()
    latch = SignalLatch(stop)
    latch.install()
    try:
        lock = wait_for_lock(settings, stop)
        while lock is not None:
            result, lost = _write_while_held(settings, lock, stop)
            if not lost or stop.is_set():
                break
            log.warning("writer lock lost with its database connection; stopped the writer, taking the lock again")
            lock = wait_for_lock(settings, stop, patient=True)  # then a first sync again: the resync
        if lock is None:
            return EXIT_OK
    finally:
        latch.restore()
    if result.outcome is Outcome.OVER_CAP:
        print(f"scree: {result.message}", file=sys.stderr, flush=True)
        return EXIT_OK
    if result.outcome is Outcome.STOPPED:
        log.info("stopped; writer lock released")
        return EXIT_OK
    print(f"scree: {redact(result.message)}", file=sys.stderr, flush=True)
    return EXIT_FAIL


def _write_while_held(settings: Settings, lock: IndexLock, stop: threading.Event) -> tuple[Finished, bool]:
    """The first sync (in a child) and then the writer, under `lock`, until a stop or the lock is lost (True)."""
    try:
        log.info("writer lock taken", pid=os.getpid(), lock=lock_name(settings))  # the collection's, in a database
        mine = fenced(settings, lock)
        with LockWatch(lock, stop, settings.lock_retry_s) as watch:
            first = _first_sync_in_child(mine, lock, watch.writing_stop)
            if first is None:
                result = Writer(mine, watch.writing_stop, on_status=_log_status).run()
            else:
                result = first
        lost = watch.lost or (result.outcome is Outcome.FAILED and lock_lost(lock))  # a fenced write saw it first
        return result, lost
    finally:
        lock.release()
