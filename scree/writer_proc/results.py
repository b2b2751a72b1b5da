"""What the writer hands back: why run() returned, its status reports, and the one-line answers it gives the user."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass


class Outcome(enum.Enum):
    """Why run() returned."""

    STOPPED = "stopped"  # `stop` was set
    OVER_CAP = "over_cap"  # R-S4: a new index over SCREE_FIRST_SYNC_MB; nothing was synced
    UNHEALTHY = "unhealthy"  # R-W4: the folder or the index file was removed or replaced
    FAILED = "failed"  # a writer thread died on an unexpected error (logged with its traceback)
    FIRST_SYNC_DONE = "first_sync_done"  # with first_sync_only: the first sync finished; start a fresh writer (R-P3)


@dataclass(frozen=True, slots=True)
class WriterResult:
    outcome: Outcome
    message: str  # one line for the user


@dataclass(frozen=True, slots=True)
class WriterState:
    """One status report: how far the writer got and that it is alive (picklable, for serve's status queue)."""

    first_sync_running: bool = False
    first_sync_done: bool = False
    notes_indexed: int = 0  # notes the first sync has indexed or found up to date so far
    last_error: str | None = None  # the embeddings API is failing (cleared when a sync succeeds again)
    over_cap_mb: float | None = None  # R-S4: the folder's markdown when the cap stopped the first sync
    cap_mb: float | None = None  # R-S4: SCREE_FIRST_SYNC_MB then
    event_batches: int = 0  # batches the event thread has read: it moves while the sync thread waits on the API
    pending: int = 0  # paths waiting for their debounce
    watches: int = 0  # directories watched
    heartbeat: float = 0.0  # time.time() when the report was made


StatusCallback = Callable[[WriterState], None]
Reply = Callable[[str], None]  # takes the one-line answer to a reindex request (R-M7)


@dataclass(frozen=True, slots=True)
class Request:
    """A reindex request (serve's `reindex` tool): one relative path, or the whole folder (None)."""

    path: str | None
    reply: Reply
