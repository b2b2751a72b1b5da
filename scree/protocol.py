"""The one vocabulary between the writer, serve's supervisor and the MCP reader (R-P1, R-P2, R-M5, R-M7).

A status goes through three records, one per stage:

- the writer's report (`WriterReport`), sent as it is: up serve's queue (so it is picklable), to `scree watch`'s
  log, and kept by the supervisor's board (reader_proc/board.py) in the loop's own state (`LoopState`);
- the verdict the reader gives (`IndexStatus`): whether the index is complete, whose it is, and why nobody keeps it
  current, decided by board.status_of and worded by replies.status_note.

Beside them: why a writer ended (`Outcome`, also its process's exit code, and `Finished`, the outcome with a line for
the user), and the other messages on the writer child's two queues (down: `ReindexRequest`, `Recheck`; up:
`ReindexReply`).

Plain data: the writer, the supervisor and the reader all import this module, and it imports nothing of theirs.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Holder = Literal["self", "other", "none"]
SYNC, WATCH = "sync", "watch"  # R-P3: a child that does the first sync and exits; a fresh one that watches


class Outcome(enum.IntEnum):
    """Why a writer ended; the value is also its process's exit code, read when its last message was lost."""

    STOPPED = 0  # `stop` was set
    FAILED = 1  # a writer thread died on an unexpected error (logged with its traceback)
    FIRST_SYNC_DONE = 3  # with first_sync_only: the first sync finished; start a fresh writer (R-P3)
    OVER_CAP = 4  # R-S4: a new index over SCREE_FIRST_SYNC_MB; nothing was synced
    UNHEALTHY = 5  # R-W4: the folder or the index file was removed or replaced
    SETUP_ERROR = 6  # before anything was synced: another model's index, bad settings, no model

    @classmethod
    def of_exit_code(cls, code: int | None) -> Outcome | None:
        """The outcome a process's exit code says; None for a signal or a code no writer exits with."""
        try:
            return cls(code) if code is not None else None
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Finished:
    """Why a writer ended and a line for the user: what Writer.run returns, and a writer child's last message up
    before a planned exit (whose Outcome is also its exit code)."""

    outcome: Outcome
    message: str


@dataclass(frozen=True, slots=True)
class WriterReport:
    """The writer's report on itself, as the writer makes it. One at least every HEARTBEAT_S is also what tells the
    supervisor the writer is alive (R-P2)."""

    first_sync_running: bool = False
    complete: bool = False  # the index holds a finished first sync: it did when this writer opened it, or now does
    notes_indexed: int = 0  # notes the first sync has indexed or found up to date so far
    last_error: str | None = None  # the embeddings API is failing (cleared when a sync succeeds again)
    over_cap_mb: float | None = None  # R-S4: the folder's markdown when the cap stopped the first sync
    cap_mb: float | None = None  # R-S4: SCREE_FIRST_SYNC_MB then
    event_batches: int = 0  # batches the event thread has read: it moves while the sync thread waits on the API
    pending: int = 0  # paths waiting for their debounce
    watches: int = 0  # directories watched
    heartbeat: float = 0.0  # time.time() when the report was made

    @property
    def over_cap(self) -> bool:
        """R-S4: this report is the one a writer stopped with over the first-sync cap."""
        return self.over_cap_mb is not None and self.cap_mb is not None


# --- the writer child's queues (small, picklable, and importable without the writer) ---


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


Down = ReindexRequest | Recheck
Up = WriterReport | ReindexReply | Finished


# --- what the reader makes of it ---


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """The verdict on the index (R-M5): who keeps it current, whether it is complete, why nobody keeps it current;
    with this session's writer's last report. board.status_of decides it, replies.status_note words it."""

    holder: Holder  # "self": this session's writer; "other": another pid holds writer.lock; "none": nobody / unknown
    pid: int | None = None  # the lock holder's pid
    report: WriterReport | None = None  # this session's writer's last report (or the one it stopped with)
    first_sync_running: bool = False  # "self": this session's first sync has not finished yet
    complete: bool = False  # the index holds a finished first sync
    error: str | None = None  # this session's writer is down, restarting or parked
    indexed_files: int = 0  # the files the index itself holds, read by the reader while a first sync runs
    host: str | None = None  # "other": the holder's machine, when it is another one (issue 31: a shared index)

    @property
    def notes_indexed(self) -> int:
        """How far the first sync got: what the writer last said, or what the index holds if that is more (its
        report goes up once a second, the index moves with every write)."""
        return max(self.report.notes_indexed if self.report is not None else 0, self.indexed_files)


class WriterControl(Protocol):
    """What the MCP reader asks of whoever runs the writer (the supervisor in `serve`)."""

    def status(self) -> IndexStatus:
        """The writer's state now; cheap, never waits for a sync (R-M8)."""
        ...

    def request_reindex(self, path: str | None) -> str:
        """Run or request a reindex of one relative path (already checked against the ignore rules) or the folder;
        returns the R-M7 reply line."""
        ...

    def recheck(self, paths: Sequence[str]) -> None:
        """Tell the writer to re-check files a search dropped (deleted, ignored, opted out; R-M2); never blocks."""
        ...
