"""The watcher backend for any platform: watchdog's Observer with one non-recursive watch per allowed directory."""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from watchdog.events import (
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MOVED,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from scree.errors import ScreeError
from scree.writer_proc.watcher import OVERFLOW_EVENT, Change, DirFilter, Event, Watcher, collapse, is_under

WATCHDOG_QUEUE_LIMIT = 65536  # events held between reads before the watchdog backend reports OVERFLOW (R-W3)
WATCHDOG_BATCH_LIMIT = 4096  # events translated per yield, so a burst does not starve the stop check
OBSERVER_JOIN_TIMEOUT_S = 5.0  # R-W5: never wait longer than this for watchdog's threads
# R-W3: when the kernel's inotify queue overflows, watchdog (7.1) rebuilds only recursive watches and hands no event
# to a handler, so for our non-recursive watches its warning log record is the only sign that events were lost.
WATCHDOG_OVERFLOW_LOGGER = "watchdog.observers.inotify_c"
WATCHDOG_OVERFLOW_TEXT = "queue overflowed"
# Only what scree acts on; opens, closes without a write and directory metadata are noise.
EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileAttribEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class _QueueHandler(FileSystemEventHandler):
    """Runs on watchdog's dispatch thread: hand the event over without blocking; a full queue means OVERFLOW."""

    def __init__(self, sink: queue.Queue[FileSystemEvent], overflowed: threading.Event) -> None:
        super().__init__()
        self._sink = sink
        self._overflowed = overflowed

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            self._sink.put_nowait(event)
        except queue.Full:
            self._overflowed.set()


class _OverflowLogHandler(logging.Handler):
    """Sets `overflowed` when watchdog logs that the kernel dropped events (watchdog shares one inotify descriptor
    between observers, so every watcher in the process lost events)."""

    def __init__(self, overflowed: threading.Event) -> None:
        super().__init__(logging.WARNING)
        self._overflowed = overflowed

    def emit(self, record: logging.LogRecord) -> None:
        if WATCHDOG_OVERFLOW_TEXT in record.getMessage():
            self._overflowed.set()


class WatchdogWatcher(Watcher):
    """Any platform: watchdog's Observer with one non-recursive watch per allowed directory (a recursive watch would
    reach into filtered folders). Events are translated on the reading thread, which also places new watches."""

    def __init__(self, root: Path, dir_filter: DirFilter, queue_limit: int = WATCHDOG_QUEUE_LIMIT) -> None:
        super().__init__(root, dir_filter)
        from watchdog.observers import Observer  # picks the platform's emitter; imported only when used

        self._queue: queue.Queue[FileSystemEvent] = queue.Queue(maxsize=queue_limit)
        self._overflowed = threading.Event()
        self._handler = _QueueHandler(self._queue, self._overflowed)
        self._overflow_log = _OverflowLogHandler(self._overflowed)
        self._watches: dict[str, Any] = {}
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        logging.getLogger(WATCHDOG_OVERFLOW_LOGGER).addHandler(self._overflow_log)  # removed by _release()
        self._watch_root()

    @property
    def watch_count(self) -> int:
        return len(self._watches)

    def _add_watch(self, rel_dir: str) -> bool:
        if rel_dir in self._watches:
            return True
        try:
            watch = self._observer.schedule(
                self._handler, self._abs(rel_dir), recursive=False, event_filter=EVENT_FILTER
            )
        except OSError as exc:
            if rel_dir == "":
                raise ScreeError(f"cannot watch {self._root_str}: {exc.strerror}") from exc
            return False
        self._watches[rel_dir] = watch
        return True

    def _forget(self, top: str) -> None:
        for rel_dir in [d for d in self._watches if is_under(d, top)]:
            watch = self._watches.pop(rel_dir)
            try:
                self._observer.unschedule(watch)
            except KeyError:
                pass

    def _rel(self, path: bytes | str) -> str | None:
        """The event path relative to the root, or None when it lies outside it."""
        text = os.fsdecode(path)
        if not text:
            return None
        try:
            rel = os.path.relpath(text, self._root_str)
        except ValueError:  # another drive on Windows
            return None
        if rel == os.curdir:
            return ""
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return None
        return rel.replace(os.sep, "/")

    def events(self, stop: threading.Event, timeout_s: float = 0.5) -> Iterator[list[Event]]:
        while not stop.is_set() and not self._closed:
            raw: list[FileSystemEvent] = []
            try:
                raw.append(self._queue.get(timeout=timeout_s))
                while len(raw) < WATCHDOG_BATCH_LIMIT:
                    raw.append(self._queue.get_nowait())
            except queue.Empty:
                pass
            if self._overflowed.is_set():
                self._overflowed.clear()
                self._drain()
                yield [OVERFLOW_EVENT]
                continue
            with self._lock:
                batch = self._translate(raw)
            yield batch

    def _drain(self) -> None:
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return

    def _translate(self, raw: list[FileSystemEvent]) -> list[Event]:
        out: list[Event] = []
        for event in raw:
            src = self._rel(event.src_path)
            dest = self._rel(event.dest_path) if event.event_type == EVENT_TYPE_MOVED else None
            if event.is_directory:
                self._directory_event(event.event_type, src, dest, out)
            elif src is None or src == "":
                if dest:
                    out.append(Event(Change.ADDED, dest))  # moved in from outside the root
            elif event.event_type == EVENT_TYPE_MOVED:
                out.append(Event(Change.DELETED, src))
                if dest:
                    out.append(Event(Change.ADDED, dest))
            elif event.event_type == EVENT_TYPE_CREATED:
                out.append(Event(Change.ADDED, src))
            elif event.event_type == EVENT_TYPE_DELETED:
                out.append(Event(Change.DELETED, src))
            else:
                out.append(Event(Change.MODIFIED, src))
        return collapse(out)

    def _directory_event(self, event_type: str, src: str | None, dest: str | None, out: list[Event]) -> None:
        if src == "" and event_type in (EVENT_TYPE_DELETED, EVENT_TYPE_MOVED):
            self._root_gone()
            return
        if src is not None and event_type in (EVENT_TYPE_DELETED, EVENT_TYPE_MOVED):
            out.append(Event(Change.DELETED, src))
            self._forget(src)
        arrived = dest if event_type == EVENT_TYPE_MOVED else src if event_type == EVENT_TYPE_CREATED else None
        if arrived:
            self._directory_arrived(arrived, out)

    def _rewatch(self) -> None:
        """Unschedule everything and schedule again: a watchdog watch cannot be checked for a stale inode. Events
        during the gap can be lost, which is why callers resync after a rebuild."""
        self._observer.unschedule_all()
        self._watches.clear()
        self._watch_tree("", None)

    def _release(self) -> None:
        self._watches.clear()
        logging.getLogger(WATCHDOG_OVERFLOW_LOGGER).removeHandler(self._overflow_log)
        self._observer.stop()  # unschedules every watch on its way out

    def _wait_released(self) -> None:
        self._observer.join(timeout=OBSERVER_JOIN_TIMEOUT_S)
