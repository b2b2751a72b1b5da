"""What the writer hands back: why run() returned, its status reports, and the one-line answers it gives the user."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scree.redact import redact

if TYPE_CHECKING:
    from scree.writer_proc.sync import SyncReport


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


def error_line(exc: BaseException) -> str:
    """An error's text on one line, with any secret masked (R-E5); "" when it has none."""
    return redact(" ".join(str(exc).split()))


def failed_message(exc: BaseException) -> str:
    """The line for a writer that died on an unexpected error."""
    return f"the writer failed: {error_line(exc) or type(exc).__name__}"


def over_cap_result(folder: Path, size_mb: float, cap_mb: float) -> WriterResult:
    """R-S4: the first sync was skipped because the folder's markdown is over SCREE_FIRST_SYNC_MB."""
    return WriterResult(
        Outcome.OVER_CAP,
        f"not indexed: {folder} has {size_mb:.1f} MB of markdown, over "
        f'SCREE_FIRST_SYNC_MB={cap_mb:g}; run "scree reindex" in it to index it anyway',
    )


def reindex_reply(path: str | None, report: SyncReport) -> str:
    """R-M7's line for a reindex the writer ran, worded as `scree reindex` words it; a skipped file says why (R-I2)."""
    if path is None:
        line = report.summary()
    else:
        skipped = next((reason for p, reason in report.skipped if p == path), None)
        if skipped is not None:
            line = f'"{path}" is not indexed: {skipped}.'
        elif report.unchanged and not report.indexed and not report.removed:
            line = f'"{path}" is already up to date.'
        else:
            line = f'Re-indexed "{path}".'
    if report.outage is not None:
        line += f" The embeddings API is unavailable ({report.outage}); run reindex again later."
    return line


def paused_reply(last_error: str | None) -> str:
    """R-M7's line for a reindex asked during an outage pause (R-E4)."""
    return f"The embeddings API is unavailable ({last_error}); the folder is re-synced when it answers again."
