"""Pure scheduling of the writer's work: debounced paths (R-W2), full resyncs, reindex requests, outage pauses (R-E4).

No clock, no threads, no I/O: the caller passes the time (any monotonic clock) and guards the objects with its own
lock. The Debouncer takes (path, time) events and gives out paths once their last event is `delay_s` old; a path
that keeps changing without a pause is still released once its first pending event is `max_wait_s` old, so a file
written every second (a log kept in markdown) is indexed now and then instead of never. The Schedule puts the
debounced paths, full resyncs, reindex requests and outage pauses in one order for the sync thread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

MAX_WAIT_FACTOR = 20.0  # a path waits at most this many debounce delays (30 s at the default 1.5 s, R-W2)


class Debouncer:
    """Paths waiting for quiet; `due(now)` takes out those whose last event is old enough."""

    def __init__(self, delay_s: float, max_wait_s: float | None = None) -> None:
        if delay_s < 0:
            raise ValueError(f"debounce delay must be >= 0, not {delay_s}")
        self.delay_s = delay_s
        self.max_wait_s = max(delay_s, max_wait_s if max_wait_s is not None else delay_s * MAX_WAIT_FACTOR)
        self._first: dict[str, float] = {}  # path -> time of its first event since it was last released
        self._last: dict[str, float] = {}  # path -> time of its latest event

    def add(self, path: str, now: float, *, immediate: bool = False) -> None:
        """Record an event for `path` at `now`; `immediate` makes it due at once (a re-check someone asked for)."""
        self._first.setdefault(path, now)
        self._last[path] = now
        if immediate:
            self._first[path] = self._last[path] = now - self.max_wait_s

    def feed(self, events: Iterable[tuple[str, float]]) -> None:
        """add() for each (path, time)."""
        for path, at in events:
            self.add(path, at)

    def _release_at(self, path: str) -> float:
        return min(self._last[path] + self.delay_s, self._first[path] + self.max_wait_s)

    def due(self, now: float) -> list[str]:
        """Remove and return, sorted, every path whose last event is at least `delay_s` old (or first `max_wait_s`)."""
        ready = sorted(path for path in self._last if self._release_at(path) <= now)
        for path in ready:
            del self._first[path], self._last[path]
        return ready

    def next_due(self) -> float | None:
        """When the next path will be due (it may be in the past), or None when nothing waits."""
        if not self._last:
            return None
        return min(self._release_at(path) for path in self._last)

    def clear(self) -> list[str]:
        """Forget every waiting path (a full resync covers them); returns them, sorted."""
        waiting = sorted(self._last)
        self._first.clear()
        self._last.clear()
        return waiting

    def __len__(self) -> int:
        return len(self._last)

    def __contains__(self, path: object) -> bool:
        return path in self._last


R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Job(Generic[R]):
    """One piece of work for the sync thread."""

    full: bool  # resync the whole folder; else re-check `paths`
    paths: tuple[str, ...] = ()
    rebuild: bool = False  # re-read the rules and rebuild the watches first
    request: R | None = None  # a reindex request to answer once the job is done
    paused: bool = False  # R-E4: an outage pause is running: answer `request` at once and sync nothing


class Schedule(Generic[R]):
    """What the sync thread does next (pure: the caller passes the time and holds the lock).

    In order: nothing during an outage pause but answering requests; a due full resync (the first sync, after a rule
    change, an overflow or an outage; it covers every path waiting, so they are dropped); the oldest reindex
    request; the paths whose debounce ran out. Outage pauses double from `pause_s` up to `pause_max_s` (R-E4) and
    end in a full resync, so files changed during the outage are indexed without another edit.
    """

    def __init__(self, debounce_s: float, pause_s: float, pause_max_s: float) -> None:
        self.debouncer = Debouncer(debounce_s)
        self._pause_s = pause_s
        self._pause_max_s = max(pause_s, pause_max_s)
        self._next_pause_s = pause_s
        self._paused_until = 0.0
        self._resync_at: float | None = None
        self._rebuild = False
        self._requests: deque[tuple[str | None, R]] = deque()

    def add_paths(self, paths: Iterable[str], now: float, *, immediate: bool = False) -> None:
        for path in paths:
            self.debouncer.add(path, now, immediate=immediate)

    def resync(self, now: float, *, rebuild: bool = False) -> None:
        """A full resync as soon as possible (after a running pause)."""
        self._resync_at = now if self._resync_at is None else min(self._resync_at, now)
        self._rebuild = self._rebuild or rebuild

    def rules_changed(self, now: float) -> None:
        """An ignore file changed: resync once its events have been quiet for the debounce delay."""
        self._resync_at = max(self._resync_at or now, now + self.debouncer.delay_s)

    def request(self, path: str | None, item: R) -> None:
        """A reindex request: one path, or the whole folder (None) with the rules re-read."""
        self._requests.append((path, item))

    def outage(self, now: float) -> float:
        """The API failed: pause, then resync everything; returns how long this pause is."""
        pause = self._next_pause_s
        self._next_pause_s = min(pause * 2, self._pause_max_s)
        self._paused_until = now + pause
        self._resync_at = self._paused_until
        return pause

    def recovered(self) -> None:
        """A sync went through: the next outage pauses from the start value again."""
        self._next_pause_s = self._pause_s

    def take(self, now: float) -> Job[R] | float | None:
        """The job due now, else when to look again (None: not before something is added)."""
        if now < self._paused_until:
            if self._requests:
                path, item = self._requests.popleft()
                return Job(full=path is None, paths=(path,) if path else (), request=item, paused=True)
            return self._paused_until
        if self._resync_at is not None and self._resync_at <= now:
            self._resync_at = None
            self.debouncer.clear()  # their events came before this resync reads the files
            rebuild, self._rebuild = self._rebuild, False
            return Job(full=True, rebuild=rebuild)
        if self._requests:
            path, item = self._requests.popleft()
            return Job(full=path is None, paths=(path,) if path else (), rebuild=path is None, request=item)
        due = self.debouncer.due(now)
        if due:
            return Job(full=False, paths=tuple(due))
        deadlines = [t for t in (self._resync_at, self.debouncer.next_due()) if t is not None]
        return min(deadlines) if deadlines else None
