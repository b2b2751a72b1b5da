"""Pure debouncing (R-W2): (path, time) events in, paths out once their last event is `delay_s` old.

No clock, no threads, no I/O: the caller passes the time (any monotonic clock) and guards the object with its own
lock. A path that keeps changing without a pause is still released once its first pending event is `max_wait_s` old,
so a file written every second (a log kept in markdown) is indexed now and then instead of never.
"""

from __future__ import annotations

from collections.abc import Iterable

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
