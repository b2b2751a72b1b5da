"""How a writer ended: an Outcome that is also its process's exit code, with a line for the user."""

from __future__ import annotations

import enum
from dataclasses import dataclass


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
