"""Stop signals for long-running commands (R-W5): the first SIGTERM/SIGINT sets an event, a second exits at once;
for the writer child, the same taken by a thread of its own with a kernel deadline behind it, and its parent's death
delivered as a signal of its own (issue 34)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import types
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
SIGNAL_EXIT_BASE = 128  # a second signal exits at once with 128 + its number, as a shell reports it
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# The kernel's notice that the parent died (signal_on_parent_death): a real-time signal nobody else sends. Not
# SIGTERM: the kernel sends it again for each thread of the dying parent the child passes through, and a second
# SIGTERM means "exit at once", before the child has said why it stops. None where there is no PR_SET_PDEATHSIG
# (macOS, Windows): there the writer's own watch on its parent (child._exit_with_parent) is the only notice.
PARENT_DEATH_SIGNAL: int | None = signal.SIGRTMIN if sys.platform == "linux" else None
_deadline_lock = threading.Lock()


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


def hard_exit_in(seconds: float) -> bool:
    """Have the kernel end this process `seconds` from now whatever its threads are doing (SIGALRM, whose default
    action needs no Python code, no lock and no GIL), or sooner: a deadline already armed is never put off by a
    later one. Callable from any thread. False where there is no setitimer."""
    if not hasattr(signal, "setitimer"):
        return False
    with _deadline_lock:  # two syscalls, never blocking: read the armed deadline, then set a sooner one
        left, _interval = signal.getitimer(signal.ITIMER_REAL)
        if not 0 < left <= seconds:
            signal.setitimer(signal.ITIMER_REAL, seconds)
    return True


class StopSignals:
    """SignalLatch for a process whose threads may all be blocked (the writer child, issue 34).

    Python runs a signal handler only on the main thread, and only once that thread runs again: one blocked on a lock
    that a thread stuck writing a full pipe holds never does. Here SIGTERM and SIGINT are blocked in every thread and
    taken by one thread in sigwait(): the first sets `stop` and arms hard_exit_in(`hard_exit_s`); a second exits at
    once. PARENT_DEATH_SIGNAL, taken there too, stops as a first signal does however often it comes: it is never a
    second. Where sigwait is missing (Windows) it is SignalLatch. install() runs on the main thread before any other
    thread starts, so every thread (and every library's) inherits the blocked mask.
    """

    def __init__(self, stop: threading.Event, hard_exit_s: float) -> None:
        self.stop = stop
        self.hard_exit_s = hard_exit_s
        self._taken = STOP_SIGNALS + ((PARENT_DEATH_SIGNAL,) if PARENT_DEATH_SIGNAL is not None else ())

    def install(self) -> None:
        if not (hasattr(signal, "pthread_sigmask") and hasattr(signal, "sigwait") and hasattr(signal, "setitimer")):
            SignalLatch(self.stop).install()
            return
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_BLOCK, self._taken)
        threading.Thread(target=self._take, name="scree-signals", daemon=True).start()

    def _take(self) -> None:
        received = 0
        while True:
            signum = signal.sigwait(self._taken)
            if signum != PARENT_DEATH_SIGNAL:
                received += 1
                if received > 1:
                    os._exit(SIGNAL_EXIT_BASE + signum)
            hard_exit_in(self.hard_exit_s)  # first, before anything that could block
            self.stop.set()


def signal_on_parent_death(parent_pid: int | None) -> bool:
    """Linux: have the kernel send this process PARENT_DEATH_SIGNAL when its parent dies (PR_SET_PDEATHSIG), a
    notice no blocked thread can stall; StopSignals must be installed first (the signal's default action ends the
    process). False when the parent (`parent_pid`) is already gone, having died while this process started (the
    caller then exits at once: nothing has begun); True otherwise, also where there is no prctl.

    The kernel ties it to the thread that made this process (serve's supervisor thread, which outlives its writer;
    watch's main thread) and, when a parent with threads dies, sends it once more for each of them that the child
    is handed to on the way to init: one to four in a row, seen with a SIGKILLed `scree watch`."""
    if PARENT_DEATH_SIGNAL is not None:
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    return parent_pid is None or not hasattr(os, "getppid") or os.getppid() == parent_pid
