"""Stop signals for long-running commands (R-W5): the first SIGTERM/SIGINT sets an event, a second exits at once."""

from __future__ import annotations

import os
import signal
import threading
import types
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
SIGNAL_EXIT_BASE = 128  # a second signal exits at once with 128 + its number, as a shell reports it


class SignalLatch:
    """The first SIGTERM/SIGINT sets `stop`; a second one exits the process at once (the kernel drops our locks).

    Handlers only set the event and count: the main loop notices and winds down (STYLE.md example 2).
    """

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.received = 0
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        for sig in STOP_SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, _frame: types.FrameType | None) -> None:
        self.received += 1
        if self.received > 1:
            os._exit(SIGNAL_EXIT_BASE + signum)
        self.stop.set()
