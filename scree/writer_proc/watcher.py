"""File events under the folder as batches of (change, relative path), from inotify on Linux or watchdog elsewhere.

This module is the contract and what both backends share; the backends live in watcher_inotify.py and
watcher_watchdog.py; watchers.py picks one. Both place one non-recursive watch per directory the caller's
filter allows and never one inside a filtered directory (R-W3), so `node_modules/` costs nothing. A DELETED path may
name a directory that was deleted or moved away: the caller treats it as a prefix and drops everything below it. A
directory that appears (created or moved in) is watched first and listed second, and every file found in it is
reported ADDED, so files written between the mkdir and the watch are not lost; a renamed directory therefore reads as
DELETED old dir + ADDED for each file under the new one. OVERFLOW means events were lost: the caller calls rebuild()
and resyncs.
"""

from __future__ import annotations

import enum
import os
import threading
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scree.content.ignore import GIT_DIR
from scree.logs import get_logger

if TYPE_CHECKING:
    from scree.content.ignore import IgnorePolicy

log = get_logger(__name__)


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


class IgnoreDirFilter:
    """A DirFilter over the ignore rules, with its own IgnorePolicy so the sync thread's is never shared.

    It also remembers the nested repositories it turned away: nothing watches inside them, so only a look at their
    `.git` (vanished_repos) can tell that one became a plain folder again.
    """

    def __init__(self, policy: IgnorePolicy) -> None:
        self.policy = policy
        self._lock = threading.Lock()  # the event thread and a rebuild may ask at once
        self._nested: set[str] = set()

    def __call__(self, rel_dir: str) -> bool:
        with self._lock:
            allowed = self.policy.entered(rel_dir)
            if not allowed and os.path.lexists(os.path.join(self.policy.root, rel_dir, GIT_DIR)):
                self._nested.add(rel_dir)
            return allowed

    def invalidate(self) -> None:
        with self._lock:
            self.policy.invalidate()
            self._nested.clear()  # the rebuild that follows finds the ones still there

    def vanished_repos(self) -> list[str]:
        """The `.git` paths of nested repositories seen before that are gone now (each reported once)."""
        with self._lock:
            gone = sorted(d for d in self._nested if not os.path.lexists(os.path.join(self.policy.root, d, GIT_DIR)))
            self._nested.difference_update(gone)
        return [join_rel(d, GIT_DIR) for d in gone]


def join_rel(rel_dir: str, name: str) -> str:
    """`name` inside the relative directory `rel_dir` ("" is the root)."""
    return f"{rel_dir}/{name}" if rel_dir else name


def is_under(rel: str, top: str) -> bool:
    """Whether relative path `rel` is `top` or lies below it."""
    return rel == top or rel.startswith(top + "/")


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_dir_nofollow(root: str, rel_dir: str) -> int | None:
    """A descriptor of root/rel_dir reached one folder at a time without following a symlink (the root itself may
    sit below one), or None when a component is missing, not a folder, or a symlink (issue 13: a watched folder
    swapped for a symlink to outside must not get its watch, or its names listed, through the link)."""
    if os.open not in os.supports_dir_fd:
        return None
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return None
    for name in rel_dir.split("/") if rel_dir else ():
        try:
            next_fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = next_fd
    return fd


def same_directory(path: str, fd: int) -> bool:
    """Is `path`, looked at without following its last component, the directory open as `fd`?"""
    try:
        seen, opened = os.stat(path, follow_symlinks=False), os.fstat(fd)
    except OSError:
        return False
    return (seen.st_dev, seen.st_ino) == (opened.st_dev, opened.st_ino)


def list_dir(path: str | int) -> list[tuple[str, bool]]:
    """(name, is a real directory) for each entry of a path or an open directory; symlinks are never followed; a
    vanished folder lists empty."""
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


def collapse(events: list[Event]) -> list[Event]:
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
    A backend's constructor sets itself up, then calls _watch_root().
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

    @property
    @abstractmethod
    def watch_count(self) -> int:
        """How many directories are watched."""

    @abstractmethod
    def _add_watch(self, rel_dir: str) -> bool:
        """Watch one directory (the lock is held); False when it cannot be watched (vanished, not a directory)."""

    def _add_watch_at(self, rel_dir: str, fd: int) -> bool:
        """Watch the directory open as `fd` (reached without following symlinks), known as `rel_dir`. By default the
        path is watched, and only while it still leads to that directory; inotify watches the descriptor itself."""
        if not same_directory(self._abs(rel_dir), fd):
            return False
        return self._add_watch(rel_dir)

    @abstractmethod
    def _rewatch(self) -> None:
        """Place every watch again from the current filter (the lock is held, the watcher is open)."""

    @abstractmethod
    def _release(self) -> None:
        """Drop the watch table and stop the backend (the lock is held; called once)."""

    @abstractmethod
    def _wait_released(self) -> None:
        """After _release(), outside the lock: wait for the backend's own threads, if it has any."""

    def rebuild(self) -> None:
        """Drop every watch and place them again from the current filter (after an ignore file change or OVERFLOW)."""
        with self._lock:
            if not self._closed:
                self._rewatch()

    def close(self) -> None:
        """Remove every watch and free the backend; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._release()
        self._wait_released()

    def _watch_root(self) -> None:
        """Place the first watches; if that fails, free the backend before the constructor's error goes up."""
        try:
            with self._lock:
                self._watch_tree("", None)
        except BaseException:
            self.close()
            raise

    def _abs(self, rel: str) -> str:
        return os.path.join(self._root_str, *rel.split("/")) if rel else self._root_str

    def _watch_tree(self, top: str, found: list[Event] | None) -> None:
        """Watch `top` and every allowed directory below it; each watch is placed before its directory is listed, so a
        file created meanwhile is seen by one or the other. Files listed go to `found` as ADDED."""
        pending = [top]
        while pending:
            rel_dir = pending.pop()
            fd = open_dir_nofollow(self._root_str, rel_dir)
            if fd is None:
                if rel_dir == "" or os.open not in os.supports_dir_fd:  # the root's own error; no openat (Windows)
                    if self._add_watch(rel_dir):
                        pending.extend(self._list_and_queue(rel_dir, self._abs(rel_dir), found))
                continue
            try:
                if self._add_watch_at(rel_dir, fd):
                    pending.extend(self._list_and_queue(rel_dir, fd, found))
            finally:
                os.close(fd)

    def _list_and_queue(self, rel_dir: str, where: str | int, found: list[Event] | None) -> list[str]:
        """The allowed folders below `rel_dir` (listed from `where`), its files reported to `found` as ADDED."""
        below: list[str] = []
        for name, is_dir in list_dir(where):
            rel = join_rel(rel_dir, name)
            if is_dir:
                if self.dir_filter(rel):
                    below.append(rel)
            elif found is not None:
                found.append(Event(Change.ADDED, rel))
        return below

    def _directory_arrived(self, rel: str, out: list[Event]) -> None:
        """A directory created or moved in: watched with its tree when the rules allow; a `.git` is passed on as an
        event though it is never watched, since it turns its folder into a nested repository (the writer re-reads
        the rules and resyncs)."""
        if self.dir_filter(rel):
            self._watch_tree(rel, out)
        elif rel.rpartition("/")[2] == GIT_DIR:
            out.append(Event(Change.ADDED, rel))

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
