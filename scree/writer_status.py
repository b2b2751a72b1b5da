"""The writer's report, the status the reader makes of it (replies.status_note words it), and the control surface
the reader calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Holder = Literal["self", "other", "none"]


@dataclass(frozen=True, slots=True)
class WriterState:
    """The writer's own status report, sent as it is: to `scree watch`'s log, and up serve's queue (picklable) to
    the supervisor, whose board keeps the last one for the note (R-M5). A report at least every HEARTBEAT_S is also
    what tells the supervisor the writer is alive (R-P2)."""

    first_sync_running: bool = False
    first_sync_done: bool = False
    notes_indexed: int = 0  # notes the first sync has indexed or found up to date so far
    last_error: str | None = None  # the embeddings API is failing (cleared when a sync succeeds again)
    over_cap_mb: float | None = None  # R-S4: the folder's markdown when the cap stopped the first sync
    cap_mb: float | None = None  # R-S4: SCREE_FIRST_SYNC_MB then
    index_complete: bool = False  # the index had a finished first sync when this writer opened it (a catch-up)
    event_batches: int = 0  # batches the event thread has read: it moves while the sync thread waits on the API
    pending: int = 0  # paths waiting for their debounce
    watches: int = 0  # directories watched
    heartbeat: float = 0.0  # time.time() when the report was made


@dataclass(frozen=True, slots=True)
class WriterStatus:
    """Who keeps the index current, with this session's writer's last report; what the note says (R-M5)."""

    holder: Holder  # "self": this session's writer; "other": another pid holds writer.lock; "none": nobody / unknown
    pid: int | None = None  # the lock holder's pid
    report: WriterState | None = None  # this session's writer's last report (or the one it stopped with)
    first_sync_running: bool = False  # "self": this session's first sync has not finished yet
    first_sync_done: bool = False  # the index is complete: this session's first sync finished, or the index says so
    error: str | None = None  # this session's writer is down, restarting or parked
    indexed_files: int = 0  # the files the index itself holds, read by the reader while a first sync runs

    @property
    def notes_indexed(self) -> int:
        """How far the first sync got: what the writer last said, or what the index holds if that is more (its
        report goes up once a second, the index moves with every write)."""
        return max(self.report.notes_indexed if self.report is not None else 0, self.indexed_files)


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
