"""The reader's side of `scree serve`'s supervisor: the board its loop posts to (the loop's state, why it is parked,
the reindex requests and re-checks queued for the writer), the verdict on the index made from it (status_of, R-M5),
and the WriterControl the reader's threads answer from it without ever waiting on the loop (R-M2, R-M7)."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from scree import replies
from scree.config import Settings
from scree.index.backend import holder, holder_where
from scree.protocol import SYNC, WATCH, Holder, IndexStatus, Outcome, WriterReport
from scree.replies import SHUTTING_DOWN_REPLY

if TYPE_CHECKING:
    from scree.store import IndexRecord

MAX_RECHECKS = 1000  # paths queued for the next child at most; its start-up sync re-checks everything anyway
REPLY_TIMEOUT_S = 25.0  # R-M7: a reindex waits this long for the writer's answer (an MCP client waits longer)
FIRST_SYNC_WAIT_S = 5.0  # R-M7: while the first sync runs, the reply falls back to saying so after this
REPLY_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class Parked:
    """Why the supervisor let go of the lock, and when it tries again."""

    error: str | None  # the note's reason; None for the first-sync cap, which has its own note
    report: WriterReport | None  # the writer's last report when it stopped over the cap (its size and the cap)
    signature: Hashable  # the index file's identity then: a change (`scree reindex`) ends the parking
    retry_at: float | None  # monotonic; None: only a change of the index ends it

    @classmethod
    def after(
        cls, outcome: Outcome, message: str, latest: WriterReport | None, signature: Hashable, retry_at: float
    ) -> Parked:
        """R-S4, R-W4, a setup error: the cap waits for `scree reindex` alone; the rest also retry at retry_at."""
        over_cap = outcome is Outcome.OVER_CAP and latest is not None and latest.over_cap
        return cls(
            error=None if over_cap else message,
            report=latest if over_cap else None,
            signature=signature,
            retry_at=None if outcome is Outcome.OVER_CAP else retry_at,
        )

    def may_retry(self, now: float, signature: Hashable) -> bool:
        return signature != self.signature or (self.retry_at is not None and now >= self.retry_at)


@dataclass(frozen=True, slots=True)
class LoopState:
    """The supervisor loop's own state at one moment, as it posted it and the reader's threads read it."""

    held: bool = False
    mode: str = SYNC
    child_pid: int | None = None
    latest: WriterReport | None = None  # the running writer's last report, as it sent it
    error: str | None = None  # this session's writer is down (and restarting)
    parked: Parked | None = None
    lock_error: str | None = None  # why writer.lock cannot even be tried (the index folder cannot be made)
    read_only: str | None = None  # why this session never writes (issue 31: a reader role, no checkout)


@dataclass(slots=True)
class Pending:
    """A reindex request waiting for the writer's one-line answer."""

    path: str | None
    sent_to: int = 0  # the generation of the child it was passed to (0: none yet); a restart passes it again
    reply: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def answer(self, text: str) -> None:
        self.reply = text
        self.done.set()


class Board:
    """All the loop shares with the reader's threads: its state, and the reindex requests and re-checks queued for it.

    The loop is the state's only writer: it swaps in a new one, always under the mutex, so a reader's thread sees one
    consistent moment; Pending records are touched under the mutex too, except the answer each waits on."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._state = LoopState()
        self._pending: dict[int, Pending] = {}
        self._rechecks: list[str] = []
        self._ids = itertools.count(1)

    @property
    def state(self) -> LoopState:
        with self._mutex:
            return self._state

    # --- the loop's posts (one new state each) ---

    def lock_taken(self) -> None:
        """A fresh start: a SYNC child comes first (R-P3), and nothing is parked or reported any more."""
        with self._mutex:
            self._state = replace(self._state, held=True, mode=SYNC, parked=None, latest=None, lock_error=None)

    def lock_failed(self, reason: str) -> None:
        """writer.lock could not be tried; the loop tries again at the next retry."""
        with self._mutex:
            self._state = replace(self._state, lock_error=reason)

    def serving_read_only(self, reason: str) -> None:
        """The lock can never be taken by this process: it only reads, and a reindex request is answered so."""
        with self._mutex:
            self._state = replace(self._state, read_only=reason)

    def lock_released(self) -> None:
        with self._mutex:
            self._state = replace(self._state, held=False)

    def child_started(self, pid: int | None) -> None:
        with self._mutex:
            self._state = replace(self._state, child_pid=pid)

    def child_gone(self) -> None:
        with self._mutex:
            self._state = replace(self._state, child_pid=None)

    def child_reported(self, status: WriterReport, first: bool) -> None:
        """A heartbeat; the first from a new child also says the writer is back."""
        with self._mutex:
            self._state = replace(self._state, latest=status, error=None if first else self._state.error)

    def first_sync_finished(self) -> None:
        """R-P3: the SYNC child is done; a WATCH child comes next."""
        with self._mutex:
            self._state = replace(self._state, mode=WATCH)

    def writer_down(self, error: str) -> None:
        with self._mutex:
            self._state = replace(self._state, error=error)

    def park(self, parked: Parked) -> None:
        """The lock is let go, and why, in one post; the next time it is taken, the first sync runs again."""
        with self._mutex:
            self._state = replace(self._state, held=False, parked=parked, mode=SYNC, error=None)

    # --- the reader's threads ---

    def ask(self, path: str | None) -> tuple[int, Pending]:
        """R-M7: queue a reindex request for the next WATCH child."""
        request_id, pending = next(self._ids), Pending(path)
        with self._mutex:
            self._pending[request_id] = pending
        return request_id, pending

    def withdraw(self, request_id: int) -> None:
        with self._mutex:
            self._pending.pop(request_id, None)

    def recheck(self, paths: Sequence[str]) -> None:
        """R-M2: queue files a search dropped; past MAX_RECHECKS they are left to the next start-up sync."""
        with self._mutex:
            self._rechecks.extend(paths[: max(0, MAX_RECHECKS - len(self._rechecks))])

    # --- the loop ---

    def work_for(self, generation: int, mode: str) -> tuple[list[tuple[int, str | None]], tuple[str, ...]]:
        """The reindex requests this child has not had yet and the queued re-checks, taken off the board; a SYNC
        child gets neither (its successor re-checks every file, and requests wait for the WATCH child)."""
        with self._mutex:
            rechecks, self._rechecks = self._rechecks, []
            if mode != WATCH:
                return [], ()
            unsent = [(rid, p) for rid, p in self._pending.items() if p.sent_to != generation]
            for _, pending in unsent:
                pending.sent_to = generation
        return [(rid, p.path) for rid, p in unsent], tuple(dict.fromkeys(rechecks))

    def answer(self, request_id: int, text: str) -> None:
        with self._mutex:
            pending = self._pending.pop(request_id, None)
        if pending is not None:
            pending.answer(text)

    def shut_down(self) -> None:
        """No child any more, and every waiting request told so."""
        with self._mutex:
            pending, self._pending = list(self._pending.values()), {}
            self._state = replace(self._state, child_pid=None)
        for request in pending:
            request.answer(SHUTTING_DOWN_REPLY)


# --- the verdict (R-M5) ---


def status_of(
    state: LoopState, own_pid: int, holder: Callable[[], int | None], record: Callable[[Holder], IndexRecord]
) -> IndexStatus:
    """The one decision of R-M5: whether the index is complete, who keeps it current, and why nobody does.

    `holder` probes writer.lock for the pid holding it, asked only while this session does not; `record` reads what
    the index itself records (its meta), asked only where no report settles it: while this session's first sync may
    still run, and while another process holds the lock.

    This session's writer: the index is complete once a first sync finished in this session (a WATCH child runs),
    or when its writer says so; before the writer's first report, the index's own record decides whether this
    start is a first sync or a catch-up, and while a first sync runs the note counts the files the index holds, as
    a search sees them. Another holder: complete as its index records. Nobody: the error that parked the writer,
    or the report it stopped with over the first-sync cap (which has a note of its own)."""
    if state.held:
        latest = state.latest
        if state.mode == WATCH or (latest is not None and latest.complete):
            return IndexStatus(holder="self", pid=own_pid, report=latest, complete=True, error=state.error)
        index = record("self")
        complete = latest is None and index.complete
        return IndexStatus(
            holder="self",
            pid=own_pid,
            report=latest,
            first_sync_running=not complete,
            complete=complete,
            error=state.error,
            indexed_files=0 if complete else index.files,
        )
    pid = holder()
    if pid is not None and pid != own_pid:
        return IndexStatus(holder="other", pid=pid, complete=record("other").complete)
    if state.parked is None:
        return IndexStatus(holder="none", error=state.lock_error)
    return IndexStatus(holder="none", error=state.parked.error, report=state.parked.report)


# --- the reader's WriterControl ---


class SupervisedControl:
    """The WriterControl (protocol.py) of the writer this serve runs, or of whoever holds the lock."""

    def __init__(self, settings: Settings, board: Board) -> None:
        self._settings = settings
        self._board = board
        self._other_complete = False  # another holder's index: once seen complete it never goes back

    def status(self) -> IndexStatus:
        """R-M5: who keeps the index current and how far it got; cheap (a lock probe at most, an index read only
        while a first sync may run or another process builds it)."""
        status = status_of(self._board.state, os.getpid(), self._lock_holder, self._index_record)
        if status.holder == "other":  # issue 31: a shared index's holder may be on another machine
            return replace(status, host=holder_where(self._settings))
        return status

    def _lock_holder(self) -> int | None:
        return holder(self._settings)

    def _index_record(self, holder: Holder) -> IndexRecord:
        """The index's own record; the reader asks while it searches, so the store module is loaded already (R-M8).
        Another holder's index, once seen complete, never goes back: it is not read again."""
        from scree.index.backend import record_of
        from scree.store import IndexRecord

        other = holder == "other"
        if other and self._other_complete:
            return IndexRecord(complete=True)
        record = record_of(self._settings)
        self._other_complete = self._other_complete or (other and record.complete)
        return record

    def request_reindex(self, path: str | None) -> str:
        """R-M7: ask the writer and wait for its line; while the first sync runs, say so after FIRST_SYNC_WAIT_S."""
        read_only = self._board.state.read_only
        if read_only is not None:  # this session never writes (issue 31): say why
            return read_only
        status = self.status()
        if status.holder != "self":
            return _not_ours(status, self._settings.lock_retry_s)
        state = self._board.state
        if state.child_pid is None and state.error is not None and status.error is not None:
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


def _not_ours(status: IndexStatus, lock_retry_s: float) -> str:
    """R-M7's reply when this session's writer cannot take the request."""
    if status.holder == "other":
        return replies.other_writer_reply(status.pid)
    report = status.report
    if report is not None and report.over_cap_mb is not None and report.cap_mb is not None:
        return replies.over_cap_reply(report.over_cap_mb, report.cap_mb)
    if status.error is not None:
        return replies.not_updating_reply(status.error)
    return replies.nobody_reply(lock_retry_s)
