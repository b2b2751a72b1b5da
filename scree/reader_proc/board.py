"""The board `scree serve`'s supervisor loop posts to and the reader's threads read: the writer's view, why it is
parked, and the reindex requests and re-checks queued for it. Locks and events only, no I/O."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

from scree.protocol import SYNC, WATCH, Outcome, Seen, WriterState
from scree.replies import SHUTTING_DOWN_REPLY

MAX_RECHECKS = 1000  # paths queued for the next child at most; its start-up sync re-checks everything anyway


@dataclass(frozen=True, slots=True)
class Parked:
    """Why the supervisor let go of the lock, and when it tries again."""

    error: str | None  # the note's reason; None for the first-sync cap, which has its own note
    report: WriterState | None  # the writer's last report when it stopped over the cap (its size and the cap)
    signature: Hashable  # the index file's identity then: a change (`scree reindex`) ends the parking
    retry_at: float | None  # monotonic; None: only a change of the index ends it

    @classmethod
    def after(
        cls, outcome: Outcome, message: str, latest: WriterState | None, signature: Hashable, retry_at: float
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

    def seen(self) -> Seen:
        return Seen(holder="none", error=self.error, latest=self.report)


@dataclass(frozen=True, slots=True)
class WriterView:
    """The loop's state at one moment, as the reader's threads see it."""

    held: bool = False
    mode: str = SYNC
    child_pid: int | None = None
    latest: WriterState | None = None  # the running writer's last report, as it sent it
    error: str | None = None  # this session's writer is down (and restarting)
    parked: Parked | None = None
    lock_error: str | None = None  # why writer.lock cannot even be tried (the index folder cannot be made)
    read_only: str | None = None  # why this session never writes (issue 31: a reader role, no checkout)

    def own(self, pid: int) -> Seen:
        """What this session knows of its own writer while it holds the lock (protocol.status_of decides)."""
        return Seen(holder="self", pid=pid, mode=self.mode, latest=self.latest, error=self.error)


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
    """All the loop shares with the reader's threads: its view, and the reindex requests and re-checks queued for it.

    The loop is the view's only writer: it swaps in a new one, always under the mutex, so a reader's thread sees one
    consistent moment; Pending records are touched under the mutex too, except the answer each waits on."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._view = WriterView()
        self._pending: dict[int, Pending] = {}
        self._rechecks: list[str] = []
        self._ids = itertools.count(1)

    @property
    def view(self) -> WriterView:
        with self._mutex:
            return self._view

    # --- the loop's posts (one new view each) ---

    def lock_taken(self) -> None:
        """A fresh start: a SYNC child comes first (R-P3), and nothing is parked or reported any more."""
        with self._mutex:
            self._view = replace(self._view, held=True, mode=SYNC, parked=None, latest=None, lock_error=None)

    def lock_failed(self, reason: str) -> None:
        """writer.lock could not be tried; the loop tries again at the next retry."""
        with self._mutex:
            self._view = replace(self._view, lock_error=reason)

    def serving_read_only(self, reason: str) -> None:
        """The lock can never be taken by this process: it only reads, and a reindex request is answered so."""
        with self._mutex:
            self._view = replace(self._view, read_only=reason)

    def lock_released(self) -> None:
        with self._mutex:
            self._view = replace(self._view, held=False)

    def child_started(self, pid: int | None) -> None:
        with self._mutex:
            self._view = replace(self._view, child_pid=pid)

    def child_gone(self) -> None:
        with self._mutex:
            self._view = replace(self._view, child_pid=None)

    def child_reported(self, status: WriterState, first: bool) -> None:
        """A heartbeat; the first from a new child also says the writer is back."""
        with self._mutex:
            self._view = replace(self._view, latest=status, error=None if first else self._view.error)

    def first_sync_finished(self) -> None:
        """R-P3: the SYNC child is done; a WATCH child comes next."""
        with self._mutex:
            self._view = replace(self._view, mode=WATCH)

    def writer_down(self, error: str) -> None:
        with self._mutex:
            self._view = replace(self._view, error=error)

    def park(self, parked: Parked) -> None:
        """The lock is let go; the next time it is taken, the first sync runs again."""
        with self._mutex:
            self._view = replace(self._view, parked=parked, mode=SYNC, error=None)

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
            self._view = replace(self._view, child_pid=None)
        for request in pending:
            request.answer(SHUTTING_DOWN_REPLY)
