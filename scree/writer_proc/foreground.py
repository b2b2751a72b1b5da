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

from scree.config import Settings
from scree.index.backend import fenced, holder_where, lock_name, writer_lock
from scree.index.folder import prepare_index_dir
from scree.index.lock import IndexLock, LockRetry
from scree.logs import get_logger
from scree.protocol import SYNC, Outcome, WriterResult, WriterState
from scree.redact import redact
from scree.replies import first_sync_process_exited, waiting_for_lock
from scree.signals import SignalLatch
from scree.writer_proc.child import WriterChild
from scree.writer_proc.writer import Writer

log = get_logger(__name__)

EXIT_OK, EXIT_FAIL = 0, 1  # R-L1; a health failure exits non-zero so the service manager restarts (R-P6)
CHILD_POLL_S = 0.2  # how often the wait for the first-sync child looks at a stop


def wait_for_lock(settings: Settings, stop: threading.Event) -> IndexLock | None:
    """Take writer.lock, retrying every lock_retry_s while another process holds it (R-P4); None when stopped."""

    def announce(pid: int | None) -> None:
        line = waiting_for_lock(pid, lock_name(settings), settings.lock_retry_s, holder_where(settings))
        print(f"scree: {line}", file=sys.stderr, flush=True)

    retry = LockRetry(
        writer_lock(settings),
        settings.lock_retry_s,
        lambda: prepare_index_dir(settings.index_dir, custom_db=settings.custom_db),
        announce,
    )
    return retry.lock if retry.wait(stop.is_set) else None


def _log_status(state: WriterState) -> None:
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


def _first_sync_in_child(settings: Settings, lock: IndexLock, stop: threading.Event) -> WriterResult | None:
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
        return WriterResult(Outcome.STOPPED, "stopped")
    line = child.finished.message if child.finished else first_sync_process_exited(child.exit_code)
    return WriterResult(Outcome.OVER_CAP if outcome is Outcome.OVER_CAP else Outcome.FAILED, line or "failed")


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
            mine = fenced(settings, lock)
            first = _first_sync_in_child(mine, lock, stop)
            result = first if first is not None else Writer(mine, stop, on_status=_log_status).run()
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
