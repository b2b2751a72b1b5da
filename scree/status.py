"""The writer's status as the reader sees it (replies.status_note words it) and the control surface the reader calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Holder = Literal["self", "other", "none"]


@dataclass(frozen=True, slots=True)
class WriterStatus:
    """Who keeps the index current and how far it got; what search needs to say in its note (R-M5)."""

    holder: Holder  # "self": this session's writer; "other": another pid holds writer.lock; "none": nobody / unknown
    pid: int | None = None  # the lock holder's pid
    first_sync_running: bool = False
    notes_indexed: int = 0
    error: str | None = None  # this session's writer stopped or crashed
    over_cap_mb: float | None = None  # R-S4: the folder's markdown, when the first-sync cap stopped the sync
    cap_mb: float | None = None  # R-S4: SCREE_FIRST_SYNC_MB
    first_sync_done: bool = False


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
