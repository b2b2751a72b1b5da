"""File events under the folder as batches of (change, relative path), from inotify on Linux or watchdog elsewhere.

Both backends place one non-recursive watch per directory the caller's filter allows and never one inside a filtered
directory (R-W3), so `node_modules/` costs nothing. A DELETED path may name a directory that was deleted or moved
away: the caller treats it as a prefix and drops everything below it. A directory that appears (created or moved in)
is watched first and listed second, and every file found in it is reported ADDED, so files written between the mkdir
and the watch are not lost; a renamed directory therefore reads as DELETED old dir + ADDED for each file under the
new one. OVERFLOW means events were lost: the caller calls rebuild() and resyncs.
"""

from __future__ import annotations

import enum
import errno
import os
import queue
import sys
import threading
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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

from scree.errors import ConfigError, ScreeError
from scree.logs import get_logger

if sys.platform == "linux":
    from inotify_simple import INotify, flags

    # Events on a watched directory's entries; ONLYDIR|DONT_FOLLOW: a path swapped for a file or symlink gets no watch.
    _INOTIFY_DIR_MASK = (
        flags.CREATE
        | flags.DELETE
        | flags.MODIFY
        | flags.CLOSE_WRITE
        | flags.ATTRIB
        | flags.MOVED_FROM
        | flags.MOVED_TO
        | flags.DELETE_SELF
        | flags.MOVE_SELF
        | flags.ONLYDIR
        | flags.DONT_FOLLOW
    )
    _INOTIFY_ARRIVED = flags.CREATE | flags.MOVED_TO
    _INOTIFY_GONE = flags.DELETE | flags.MOVED_FROM
    _INOTIFY_CHANGED = flags.MODIFY | flags.CLOSE_WRITE | flags.ATTRIB
    _INOTIFY_ROOT_GONE = flags.DELETE_SELF | flags.MOVE_SELF

log = get_logger(__name__)

BACKENDS = ("auto", "inotify", "watchdog")
WATCHDOG_QUEUE_LIMIT = 65536  # events held between reads before the watchdog backend reports OVERFLOW (R-W3)
WATCHDOG_BATCH_LIMIT = 4096  # events translated per yield, so a burst does not starve the stop check
OBSERVER_JOIN_TIMEOUT_S = 5.0  # R-W5: never wait longer than this for watchdog's threads
# Only what scree acts on; opens, closes without a write and directory metadata are noise.
_WATCHDOG_EVENT_FILTER: list[type[FileSystemEvent]] = [
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

DirFilter = Callable[[str], bool]


class Change(enum.Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"  # a file, or a directory whose whole subtree is gone (treat the path as a prefix)
    OVERFLOW = "overflow"  # events were lost: rebuild() the watches and resync


@dataclass(frozen=True, slots=True)
class Event:
    change: Change
    path: str  # relative to the root, "/"-separated; "" for OVERFLOW


OVERFLOW_EVENT = Event(Change.OVERFLOW, "")


def _join(rel_dir: str, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def _under(rel: str, top: str) -> bool:
    return rel == top or rel.startswith(top + "/")


def _list_dir(path: str) -> list[tuple[str, bool]]:
    """(name, is a real directory) for each entry; symlinks are never followed; a vanished folder lists empty."""
    entries: list[tuple[str, bool]] = []
    try:
        with os.scandir(path) as listing:
            for entry in listing:
                try:
                    entries.append((entry.name, entry.is_dir(follow_symlinks=False)))
                except OSError:
                    continue
    except OSError:
        return []
    return entries


def _collapse(events: list[Event]) -> list[Event]:
    """Drop immediate repeats (a large write is many MODIFY events); order is kept, so ADDED-DELETED-ADDED stays."""
    out: list[Event] = []
    for event in events:
        if not out or out[-1] != event:
            out.append(event)
    return out


class Watcher(ABC):
    """Raw file events for one folder, read on the writer's event thread (R-W2).

    `dir_filter(rel_dir)` says whether a directory below the root may be watched (the root always is).
    events() may run on one thread while rebuild(), watch_count and close() are called from another.
    """

    def __init__(self, root: Path, dir_filter: DirFilter) -> None:
        self.root = root.resolve()
        self.dir_filter = dir_filter
        self._root_str = str(self.root)
        self._lock = threading.RLock()  # guards the watch table; never held while waiting for events
        self._closed = False

    @abstractmethod
    def events(self, stop: threading.Event, timeout_s: float = 0.5) -> Iterator[list[Event]]:
        """Yield batches as they arrive, [] after `timeout_s` without any, until `stop` is set or close() is called."""

    @abstractmethod
    def rebuild(self) -> None:
        """Drop every watch and place them again from the current filter (after an ignore file change or OVERFLOW)."""

    @property
    @abstractmethod
    def watch_count(self) -> int:
        """How many directories are watched."""

    @abstractmethod
    def close(self) -> None:
        """Remove every watch and free the backend; idempotent."""

    @abstractmethod
    def _add_watch(self, rel_dir: str) -> bool:
        """Watch one directory (the lock is held); False when it cannot be watched (vanished, not a directory)."""

    def _abs(self, rel: str) -> str:
        return os.path.join(self._root_str, *rel.split("/")) if rel else self._root_str

    def _watch_tree(self, top: str, found: list[Event] | None) -> None:
        """Watch `top` and every allowed directory below it; each watch is placed before its directory is listed, so a
        file created meanwhile is seen by one or the other. Files listed go to `found` as ADDED."""
        pending = [top]
        while pending:
            rel_dir = pending.pop()
            if not self._add_watch(rel_dir):
                continue
            for name, is_dir in _list_dir(self._abs(rel_dir)):
                rel = _join(rel_dir, name)
                if is_dir:
                    if self.dir_filter(rel):
                        pending.append(rel)
                elif found is not None:
                    found.append(Event(Change.ADDED, rel))

    def _root_gone(self) -> None:
        # The health check (R-W4) decides what a vanished root means; a DELETED "" would empty the index.
        log.warning("the watched folder itself was deleted or moved", root=self._root_str)

    def __enter__(self) -> Watcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.close()


class InotifyWatcher(Watcher):
    """Linux: one inotify instance, one watch per allowed directory, a wd -> relative directory table."""

    def __init__(self, root: Path, dir_filter: DirFilter) -> None:
        super().__init__(root, dir_filter)
        self._dirs: dict[int, str] = {}
        self._limit_warned = False
        try:
            self._inotify: Any = INotify()  # close-on-exec: a spawned child does not keep our watches
        except OSError as exc:
            raise ScreeError(f"cannot start inotify: {exc.strerror} (see fs.inotify.max_user_instances)") from exc
        try:
            with self._lock:
                self._watch_tree("", None)
        except BaseException:
            self._inotify.close()
            raise

    @property
    def watch_count(self) -> int:
        return len(self._dirs)

    def _add_watch(self, rel_dir: str) -> bool:
        try:
            wd = int(self._inotify.add_watch(self._abs(rel_dir), _INOTIFY_DIR_MASK))
        except OSError as exc:
            if rel_dir == "":
                raise ScreeError(f"cannot watch {self._root_str}: {exc.strerror}") from exc
            if exc.errno == errno.ENOSPC and not self._limit_warned:
                self._limit_warned = True
                log.warning("inotify watch limit reached; raise fs.inotify.max_user_watches", folder=rel_dir)
            return False
        self._dirs[wd] = rel_dir  # an inode already watched keeps its wd: this also records a rename we missed
        return True

    def _forget(self, top: str) -> None:
        """Remove the watches of `top` and below: moved away, they would report under stale names."""
        for wd, rel_dir in list(self._dirs.items()):
            if _under(rel_dir, top):
                del self._dirs[wd]
                try:
                    self._inotify.rm_watch(wd)
                except OSError:
                    pass  # already gone with its directory

    def events(self, stop: threading.Event, timeout_s: float = 0.5) -> Iterator[list[Event]]:
        timeout_ms = max(0, int(timeout_s * 1000))
        while not stop.is_set() and not self._closed:
            try:
                raw = list(self._inotify.read(timeout=timeout_ms))
            except (OSError, ValueError):
                if self._closed:
                    return
                raise
            with self._lock:
                batch = self._translate(raw)
            yield batch

    def _translate(self, raw: list[Any]) -> list[Event]:
        out: list[Event] = []
        for event in raw:
            mask = int(event.mask)
            if mask & flags.Q_OVERFLOW:
                out.append(OVERFLOW_EVENT)
                continue
            if mask & flags.IGNORED:
                self._dirs.pop(int(event.wd), None)
                continue
            rel_dir = self._dirs.get(int(event.wd))
            if rel_dir is None:
                continue  # a watch we already dropped
            if not event.name:
                if rel_dir == "" and mask & _INOTIFY_ROOT_GONE:
                    self._root_gone()
                continue
            rel = _join(rel_dir, str(event.name))
            if mask & flags.ISDIR:
                self._directory_event(mask, rel, out)
            elif mask & _INOTIFY_ARRIVED:
                out.append(Event(Change.ADDED, rel))
            elif mask & _INOTIFY_GONE:
                out.append(Event(Change.DELETED, rel))
            elif mask & _INOTIFY_CHANGED:
                out.append(Event(Change.MODIFIED, rel))
        return _collapse(out)

    def _directory_event(self, mask: int, rel: str, out: list[Event]) -> None:
        if mask & _INOTIFY_GONE:
            out.append(Event(Change.DELETED, rel))
            self._forget(rel)
        elif mask & _INOTIFY_ARRIVED and self.dir_filter(rel):
            self._watch_tree(rel, out)

    def rebuild(self) -> None:
        """Re-walk with the current filter; inodes still watched keep their wd, so no event is lost meanwhile."""
        with self._lock:
            if self._closed:
                return
            before = set(self._dirs)
            self._dirs.clear()
            self._watch_tree("", None)
            for wd in before - set(self._dirs):
                try:
                    self._inotify.rm_watch(wd)
                except OSError:
                    pass

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._dirs.clear()
            self._inotify.close()  # drops every watch with the descriptor


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


class WatchdogWatcher(Watcher):
    """Any platform: watchdog's Observer with one non-recursive watch per allowed directory (a recursive watch would
    reach into filtered folders). Events are translated on the reading thread, which also places new watches."""

    def __init__(self, root: Path, dir_filter: DirFilter, queue_limit: int = WATCHDOG_QUEUE_LIMIT) -> None:
        super().__init__(root, dir_filter)
        from watchdog.observers import Observer  # picks the platform's emitter; imported only when used

        self._queue: queue.Queue[FileSystemEvent] = queue.Queue(maxsize=queue_limit)
        self._overflowed = threading.Event()
        self._handler = _QueueHandler(self._queue, self._overflowed)
        self._watches: dict[str, Any] = {}
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        try:
            with self._lock:
                self._watch_tree("", None)
        except BaseException:
            self._observer.stop()
            self._observer.join(timeout=OBSERVER_JOIN_TIMEOUT_S)
            raise

    @property
    def watch_count(self) -> int:
        return len(self._watches)

    def _add_watch(self, rel_dir: str) -> bool:
        if rel_dir in self._watches:
            return True
        try:
            watch = self._observer.schedule(
                self._handler, self._abs(rel_dir), recursive=False, event_filter=_WATCHDOG_EVENT_FILTER
            )
        except OSError as exc:
            if rel_dir == "":
                raise ScreeError(f"cannot watch {self._root_str}: {exc.strerror}") from exc
            return False
        self._watches[rel_dir] = watch
        return True

    def _forget(self, top: str) -> None:
        for rel_dir in [d for d in self._watches if _under(d, top)]:
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
        return _collapse(out)

    def _directory_event(self, event_type: str, src: str | None, dest: str | None, out: list[Event]) -> None:
        if src == "" and event_type in (EVENT_TYPE_DELETED, EVENT_TYPE_MOVED):
            self._root_gone()
            return
        if src is not None and event_type in (EVENT_TYPE_DELETED, EVENT_TYPE_MOVED):
            out.append(Event(Change.DELETED, src))
            self._forget(src)
        arrived = dest if event_type == EVENT_TYPE_MOVED else src if event_type == EVENT_TYPE_CREATED else None
        if arrived and self.dir_filter(arrived):
            self._watch_tree(arrived, out)

    def rebuild(self) -> None:
        """Unschedule everything and schedule again: a watchdog watch cannot be checked for a stale inode. Events
        during the gap can be lost, which is why callers resync after a rebuild."""
        with self._lock:
            if self._closed:
                return
            self._observer.unschedule_all()
            self._watches.clear()
            self._watch_tree("", None)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._watches.clear()
            self._observer.stop()  # unschedules every watch on its way out
        self._observer.join(timeout=OBSERVER_JOIN_TIMEOUT_S)


def make_watcher(root: Path, dir_filter: DirFilter, backend: str = "auto") -> Watcher:
    """The watcher for this platform ("auto": inotify on Linux, watchdog elsewhere) or the one asked for."""
    if backend == "auto":
        backend = "inotify" if sys.platform == "linux" else "watchdog"
    if backend == "inotify":
        if sys.platform != "linux":
            raise ConfigError("the inotify watcher needs Linux; use SCREE_WATCHER=watchdog or auto")
        return InotifyWatcher(root, dir_filter)
    if backend == "watchdog":
        return WatchdogWatcher(root, dir_filter)
    raise ConfigError(f"unknown watcher {backend!r}; choose one of: {', '.join(BACKENDS)}")
