"""`scree watch` (R-P6): the writer in the foreground for systemd or Docker: lock retry, signals and exit codes.

The lock is taken here, not in the Writer, so serve's supervisor can hold it in its own process. While another
process holds it, watch says once which pid and retries every SCREE_LOCK_RETRY_SECONDS (R-P4); when that process
exits, watch takes over and syncs first. SIGTERM or SIGINT stops it within 5 s and releases the lock; a second
signal exits at once (R-W5). Signal handlers only set the stop event (the main loop never waits on that event, so
setting it from a handler cannot deadlock) and count; the Writer's main loop notices and winds down.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time

from scree.config import Settings
from scree.lock import WriterLock
from scree.logs import get_logger
from scree.paths import prepare_index_dir
from scree.redact import redact
from scree.replies import first_sync_process_exited, waiting_for_lock
from scree.signals import SignalLatch
from scree.writer_proc.results import Outcome, WriterResult, WriterState
from scree.writer_proc.writer import Writer

log = get_logger(__name__)

EXIT_OK, EXIT_FAIL = 0, 1  # R-L1; a health failure exits non-zero so the service manager restarts (R-P6)
CHILD_POLL_S = 0.2  # how often the wait for the first-sync child looks at a stop
CHILD_STOP_S = 5.0  # R-W5: the child gets this long after SIGTERM before SIGKILL
LOCK_POLL_S = 0.1  # while waiting for the lock, a stop is noticed within this


def wait_for_lock(settings: Settings, stop: threading.Event) -> WriterLock | None:
    """Take writer.lock, retrying every lock_retry_s while another process holds it (R-P4); None when stopped."""
    prepare_index_dir(settings.index_dir, custom_db=settings.custom_db)
    lock = WriterLock(settings.lock_path)
    announced: int | None = -1
    while not stop.is_set():
        if lock.try_acquire():
            return lock
        pid = lock.holder_pid()
        if pid != announced:
            announced = pid
            print(
                f"scree: {waiting_for_lock(pid, settings.lock_path, settings.lock_retry_s)}",
                file=sys.stderr,
                flush=True,
            )
        retry_at = time.monotonic() + settings.lock_retry_s
        while not stop.is_set() and time.monotonic() < retry_at:
            time.sleep(min(LOCK_POLL_S, max(0.0, retry_at - time.monotonic())))
    return None


def _log_status(state: WriterState) -> None:
    log.debug(
        "writer status",
        first_sync_running=state.first_sync_running,
        first_sync_done=state.first_sync_done,
        notes_indexed=state.notes_indexed,
        last_error=state.last_error,
        event_batches=state.event_batches,
        pending=state.pending,
        watches=state.watches,
    )


def _first_sync_in_child(settings: Settings, lock: WriterLock, stop: threading.Event) -> WriterResult | None:
    """R-P3 for `scree watch`: the big first sync runs in a spawned child that shares the lock and exits, so this
    process watches with a heap that never held it (writer idle bar). None when the child synced; else its result."""
    from scree.writer_proc.child import (
        FAILED,
        OUTCOME_BY_EXIT_CODE,
        OVER_CAP,
        STOPPED,
        SYNC,
        SYNCED,
        Finished,
        start_writer,
    )

    child = start_writer(settings, SYNC, lock.fileno())
    finished: Finished | None = None
    stop_sent_at: float | None = None
    while child.process.is_alive() or finished is None:
        try:
            message = child.up.get(timeout=CHILD_POLL_S)
        except queue.Empty:
            message = None
        if isinstance(message, Finished):
            finished = message
        if stop.is_set() and stop_sent_at is None and child.process.is_alive():
            child.process.terminate()  # SIGTERM: the child's own latch stops its writer
            stop_sent_at = time.monotonic()
        if stop_sent_at is not None and time.monotonic() - stop_sent_at > CHILD_STOP_S:
            child.process.kill()
        if not child.process.is_alive() and message is None and finished is None:
            break  # died without a word (killed): its exit code says what happened
    child.process.join(CHILD_STOP_S)
    outcome = finished.outcome if finished else OUTCOME_BY_EXIT_CODE.get(child.process.exitcode or 0)
    if outcome == SYNCED and not stop.is_set():
        return None
    if outcome in (SYNCED, STOPPED) or stop.is_set():
        return WriterResult(Outcome.STOPPED, "stopped")
    line = finished.message if finished else first_sync_process_exited(child.process.exitcode)
    return WriterResult(Outcome.OVER_CAP if outcome == OVER_CAP else Outcome.FAILED, line or FAILED)


def run_watch(settings: Settings) -> int:
    """Run the writer for `settings.folder` until a signal; returns the process exit code."""
    stop = threading.Event()
    latch = SignalLatch(stop)
    latch.install()
    try:
        lock = wait_for_lock(settings, stop)
        if lock is None:
            return EXIT_OK
        try:
            log.info("writer lock taken", pid=os.getpid(), lock=str(settings.lock_path))
            first = _first_sync_in_child(settings, lock, stop)
            result = first if first is not None else Writer(settings, stop, on_status=_log_status).run()
        finally:
            lock.release()
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
