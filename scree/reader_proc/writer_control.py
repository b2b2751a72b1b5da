"""The reader's side of `scree serve`'s supervisor: WriterControl answered from the loop's board (board.py),
on the reader's threads, never waiting on the loop (R-M2, R-M5, R-M7)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace

from scree import replies
from scree.config import Settings
from scree.index.backend import holder, holder_where
from scree.protocol import IndexProgress, Seen, WriterStatus, needs_index_record, status_of
from scree.reader_proc.board import Board

REPLY_TIMEOUT_S = 25.0  # R-M7: a reindex waits this long for the writer's answer (an MCP client waits longer)
FIRST_SYNC_WAIT_S = 5.0  # R-M7: while the first sync runs, the reply falls back to saying so after this
REPLY_POLL_S = 0.1


class SupervisedControl:
    """The WriterControl (protocol.py) of the writer this serve runs, or of whoever holds the lock."""

    def __init__(self, settings: Settings, board: Board) -> None:
        self._settings = settings
        self._board = board
        self._other_complete = False  # another holder's index: once seen complete it never goes back

    def status(self) -> WriterStatus:
        """R-M5: who keeps the index current and how far it got; cheap (a lock probe at most, an index read only
        while a first sync may run or another process builds it)."""
        seen = self._seen()
        if needs_index_record(seen):
            seen = replace(seen, index=self._index_progress(other=seen.holder == "other"))
        return status_of(seen)

    def _seen(self) -> Seen:
        view = self._board.view
        if view.held:
            return view.own(os.getpid())
        pid = holder(self._settings)
        if pid is not None and pid != os.getpid():
            return Seen(holder="other", pid=pid, host=holder_where(self._settings))
        if view.parked is None:
            return Seen(holder="none", error=view.lock_error)
        return view.parked.seen()

    def _index_progress(self, other: bool) -> IndexProgress:
        """The index's own record; the reader asks while it searches, so the store module is loaded already (R-M8).
        Another holder's index, once seen complete, never goes back: it is not read again."""
        if other and self._other_complete:
            return IndexProgress(complete=True)
        from scree.index.backend import record_of

        record = record_of(self._settings)
        self._other_complete = self._other_complete or (other and record.complete)
        return IndexProgress(record.complete, record.files)

    def request_reindex(self, path: str | None) -> str:
        """R-M7: ask the writer and wait for its line; while the first sync runs, say so after FIRST_SYNC_WAIT_S."""
        status = self.status()
        if status.holder != "self":
            return _not_ours(status, self._settings.lock_retry_s)
        view = self._board.view
        if view.child_pid is None and view.error is not None and status.error is not None:
            return replies.restarting_reply(status.error)
        request_id, pending = self._board.ask(path)
        started = time.monotonic()
        while not pending.done.wait(REPLY_POLL_S):
            waited = time.monotonic() - started
            now = self.status()
            if now.holder != "self" or (now.first_sync_running and waited >= FIRST_SYNC_WAIT_S):
                self._board.withdraw(request_id)
                if now.holder != "self":
                    return _not_ours(now, self._settings.lock_retry_s)
                return replies.first_sync_running_reply(now.notes_indexed)
            if waited >= REPLY_TIMEOUT_S:
                return replies.still_running_reply(REPLY_TIMEOUT_S)
        return pending.reply or ""

    def recheck(self, paths: Sequence[str]) -> None:
        """R-M2: queue files a search dropped for the writer; never blocks (the loop passes them down)."""
        self._board.recheck(paths)


def _not_ours(status: WriterStatus, lock_retry_s: float) -> str:
    """R-M7's reply when this session's writer cannot take the request."""
    if status.holder == "other":
        return replies.other_writer_reply(status.pid)
    report = status.report
    if report is not None and report.over_cap_mb is not None and report.cap_mb is not None:
        return replies.over_cap_reply(report.over_cap_mb, report.cap_mb)
    if status.error is not None:
        return replies.not_updating_reply(status.error)
    return replies.nobody_reply(lock_retry_s)
