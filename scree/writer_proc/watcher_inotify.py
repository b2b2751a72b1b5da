"""The Linux watcher backend: one inotify instance, one watch per allowed directory (R-W2, R-W3)."""

from __future__ import annotations

import errno
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inotify_simple import INotify, flags

from scree.errors import ScreeError
from scree.logs import get_logger
from scree.writer_proc.watcher import (
    OVERFLOW_EVENT,
    Change,
    DirFilter,
    Event,
    Watcher,
    collapse,
    is_under,
    join_rel,
    same_directory,
)

log = get_logger(__name__)

# Events on a watched directory's entries; ONLYDIR|DONT_FOLLOW: a path swapped for a file or symlink gets no watch.
DIR_MASK = (
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
PROC_FD = Path("/proc/self/fd")  # a watch placed through it is on the open directory itself
ARRIVED = flags.CREATE | flags.MOVED_TO
GONE = flags.DELETE | flags.MOVED_FROM
CHANGED = flags.MODIFY | flags.CLOSE_WRITE | flags.ATTRIB
ROOT_GONE = flags.DELETE_SELF | flags.MOVE_SELF


class InotifyWatcher(Watcher):
    """Linux: one inotify instance, one watch per allowed directory, a wd -> relative directory table."""

    def __init__(self, root: Path, dir_filter: DirFilter) -> None:
        super().__init__(root, dir_filter)
        self._dirs: dict[int, str] = {}
        self._limit_warned = False
        self._proc_fd = PROC_FD.is_dir()
        try:
            self._inotify: Any = INotify()  # close-on-exec: a spawned child does not keep our watches
        except OSError as exc:
            raise ScreeError(f"cannot start inotify: {exc.strerror} (see fs.inotify.max_user_instances)") from exc
        self._watch_root()

    @property
    def watch_count(self) -> int:
        return len(self._dirs)

    def _add_watch_at(self, rel_dir: str, fd: int) -> bool:
        """Watch the very directory open as `fd` (issue 13): through /proc/self/fd, which names that inode whatever
        the path leads to now; without /proc, the path with DONT_FOLLOW, checked against `fd` after."""
        if not self._proc_fd:
            if not super()._add_watch_at(rel_dir, fd):
                return False
            return same_directory(self._abs(rel_dir), fd) or self._undo(rel_dir)
        return self._add_watch(rel_dir, f"{PROC_FD}/{fd}", DIR_MASK & ~flags.DONT_FOLLOW)

    def _undo(self, rel_dir: str) -> bool:
        """The path changed under the watch just placed: take it off again."""
        for wd, watched in list(self._dirs.items()):
            if watched == rel_dir:
                del self._dirs[wd]
                try:
                    self._inotify.rm_watch(wd)
                except OSError:
                    pass
        return False

    def _add_watch(self, rel_dir: str, target: str | None = None, mask: int = DIR_MASK) -> bool:
        try:
            wd = int(self._inotify.add_watch(target or self._abs(rel_dir), mask))
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
            if is_under(rel_dir, top):
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
                if rel_dir == "" and mask & ROOT_GONE:
                    self._root_gone()
                continue
            rel = join_rel(rel_dir, str(event.name))
            if mask & flags.ISDIR:
                self._directory_event(mask, rel, out)
            elif mask & ARRIVED:
                out.append(Event(Change.ADDED, rel))
            elif mask & GONE:
                out.append(Event(Change.DELETED, rel))
            elif mask & CHANGED:
                out.append(Event(Change.MODIFIED, rel))
        return collapse(out)

    def _directory_event(self, mask: int, rel: str, out: list[Event]) -> None:
        if mask & GONE:
            out.append(Event(Change.DELETED, rel))
            self._forget(rel)
        elif mask & ARRIVED:
            self._directory_arrived(rel, out)

    def _rewatch(self) -> None:
        """Re-walk with the current filter; inodes still watched keep their wd, so no event is lost meanwhile."""
        before = set(self._dirs)
        self._dirs.clear()
        self._watch_tree("", None)
        for wd in before - set(self._dirs):
            try:
                self._inotify.rm_watch(wd)
            except OSError:
                pass

    def _release(self) -> None:
        self._dirs.clear()
        self._inotify.close()  # drops every watch with the descriptor

    def _wait_released(self) -> None:
        pass  # no threads of its own: closing the descriptor was all
