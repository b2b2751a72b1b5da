"""The one vocabulary between the writer, serve's supervisor and the MCP reader (R-P1, R-P2, R-M5, R-M7).

- the writer's status record (`WriterState`), sent as it is: up serve's queue (so it is picklable), to `scree
  watch`'s log, and kept by the supervisor's board for the reader;
- why a writer ended (`Outcome`, also its process's exit code);
- the messages on the writer child's two queues (down: `ReindexRequest`, `Recheck`; up: `WriterState`,
  `ReindexReply`, `Finished`);
- what the reader makes of it all (`WriterStatus`), through one pure function, `status_of`, that decides whether the
  index is complete, whose it is, and why nobody keeps it current; replies.status_note words it.

Plain data and pure functions: the writer, the supervisor and the reader all import this module, and it imports
nothing of theirs.
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
class WriterResult:
    outcome: Outcome
    message: str  # one line for the user


@dataclass(frozen=True, slots=True)
class WriterState:
    """The writer's own status record. A report at least every HEARTBEAT_S is also what tells the supervisor the
    writer is alive (R-P2)."""

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


@dataclass(frozen=True, slots=True)
class Finished:
    """Up, last: why the child is about to exit (its exit code too) and a line for the user."""

    outcome: Outcome
    message: str


Down = ReindexRequest | Recheck
Up = WriterState | ReindexReply | Finished


# --- what the reader makes of it ---


@dataclass(frozen=True, slots=True)
class WriterStatus:
    """Who keeps the index current, with this session's writer's last report; what the note says (R-M5)."""

    holder: Holder  # "self": this session's writer; "other": another pid holds writer.lock; "none": nobody / unknown
    pid: int | None = None  # the lock holder's pid
    report: WriterState | None = None  # this session's writer's last report (or the one it stopped with)
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


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """What the index file itself records of its progress (its meta): read only where no writer's report says."""

    complete: bool = False
    files: int = 0


@dataclass(frozen=True, slots=True)
class Seen:
    """Everything the reader's side knows at one moment, as the supervisor's board and a lock probe give it."""

    holder: Holder
    pid: int | None = None
    mode: str = SYNC  # "self": the child running now (or next) does the first sync, or watches after it
    latest: WriterState | None = None  # "self": the running writer's last report; "none": the one it parked with
    error: str | None = None  # this session's writer is down, restarting or parked
    index: IndexProgress | None = None  # the index's own record, when it was read
    host: str | None = None  # "other": the holder's machine, when it is another one (issue 31)


def needs_index_record(seen: Seen) -> bool:
    """Whether status_of needs what the index records (a read of its meta): while this session's first sync may
    still run and no report settles it, and while another process holds the lock."""
    if seen.holder == "other":
        return True
    return seen.holder == "self" and seen.mode == SYNC and not (seen.latest is not None and seen.latest.complete)


def status_of(seen: Seen) -> WriterStatus:
    """The one decision of R-M5: whether the index is complete, who keeps it current, and why nobody does.

    This session's writer: the index is complete once a first sync finished in this session (a WATCH child runs),
    or when its writer says so; before the writer's first report, the index's own record decides whether this
    start is a first sync or a catch-up, and while a first sync runs the note counts the files the index holds, as
    a search sees them. Another holder: complete as its index records. Nobody: the error that parked the writer,
    or the report it stopped with over the first-sync cap (which has a note of its own)."""
    index = seen.index or IndexProgress()
    if seen.holder == "other":
        return WriterStatus(holder="other", pid=seen.pid, complete=index.complete, host=seen.host)
    if seen.holder == "none":
        return WriterStatus(holder="none", error=seen.error, report=seen.latest)
    latest = seen.latest
    complete = seen.mode == WATCH or (latest.complete if latest is not None else index.complete)
    running = seen.mode == SYNC and not complete
    return WriterStatus(
        holder="self",
        pid=seen.pid,
        report=latest,
        first_sync_running=running,
        complete=complete,
        error=seen.error,
        indexed_files=index.files if running else 0,
    )


class WriterControl(Protocol):
    """What the MCP reader asks of whoever runs the writer (the supervisor in `serve`)."""

    def status(self) -> WriterStatus:
        """The writer's state now; cheap, never waits for a sync (R-M8)."""
        ...

    def request_reindex(self, path: str | None) -> str:
        """Run or request a reindex of one relative path (already checked against the ignore rules) or the folder;
        returns the R-M7 reply line."""
        ...

    def recheck(self, paths: Sequence[str]) -> None:
        """Tell the writer to re-check files a search dropped (deleted, ignored, opted out; R-M2); never blocks."""
        ...
