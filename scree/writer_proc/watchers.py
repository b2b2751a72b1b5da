"""Which watcher backend a writer gets (SCREE_WATCHER): inotify on Linux, watchdog elsewhere, or the one asked for.

Apart from watcher.py, the contract both backends import, so neither backend imports the module that picks it."""

from __future__ import annotations

import sys
from pathlib import Path

from scree.config import WATCHER_CHOICES
from scree.errors import ConfigError
from scree.writer_proc.watcher import DirFilter, Watcher


def make_watcher(root: Path, dir_filter: DirFilter, backend: str = "auto") -> Watcher:
    """The watcher for this platform ("auto": inotify on Linux, watchdog elsewhere) or the one asked for.

    Each backend is imported only when chosen, so a Linux writer never loads watchdog."""
    if backend == "auto":
        backend = "inotify" if sys.platform == "linux" else "watchdog"
    if backend == "inotify":
        if sys.platform != "linux":
            raise ConfigError("the inotify watcher needs Linux; use SCREE_WATCHER=watchdog or auto")
        from scree.writer_proc.watcher_inotify import InotifyWatcher

        return InotifyWatcher(root, dir_filter)
    if backend == "watchdog":
        from scree.writer_proc.watcher_watchdog import WatchdogWatcher

        return WatchdogWatcher(root, dir_filter)
    raise ConfigError(f"unknown watcher {backend!r}; choose one of: {', '.join(WATCHER_CHOICES)}")
