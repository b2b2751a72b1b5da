"""Watches never leave the folder (issue 13, item 17; R-I3, R-W3): a watched folder swapped for a symlink to
outside, in a loop, gets no watch placed through the link. The kernel's own list of the inotify instance's watches
(/proc/self/fdinfo) is the witness."""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

from scree.writer_proc.watcher import Event
from scree.writer_proc.watcher_inotify import InotifyWatcher

CHURN_S = 1.5  # how long the swap loop runs while the watcher reads events
FDINFO_INODE = re.compile(r"^inotify wd:\s*\w+ ino:([0-9a-f]+) sdev:", re.MULTILINE)


def allow_all(_rel_dir: str) -> bool:
    return True


def watched_inodes(watcher: InotifyWatcher) -> set[int]:
    fd = watcher._inotify.fileno()
    text = Path(f"/proc/self/fdinfo/{fd}").read_text()
    return {int(found, 16) for found in FDINFO_INODE.findall(text)}


def tree_inodes(top: Path) -> set[int]:
    found = {top.stat().st_ino}
    for here, dirs, _files in os.walk(top):
        found.update((Path(here) / d).lstat().st_ino for d in dirs)
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    top = tmp_path / "outside"
    for i in range(5):
        (top / f"sub{i}" / "deeper").mkdir(parents=True)
        (top / f"sub{i}" / "secret.md").write_text("# Secret\n")
    return top


def test_a_folder_swapped_for_a_symlink_gets_no_watch_through_it(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "notes"
    (root / "docs" / "sub0").mkdir(parents=True)
    watcher = InotifyWatcher(root, allow_all)
    try:
        shutil.rmtree(root / "docs")
        (root / "docs").symlink_to(outside, target_is_directory=True)
        found: list[Event] = []
        watcher._directory_arrived("docs/sub0", found)  # the late event of a folder made before the swap
        assert not watched_inodes(watcher) & tree_inodes(outside)
        assert not found  # and no name from outside is reported
    finally:
        watcher.close()


def test_swapping_in_a_loop_while_events_are_read_never_watches_outside(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "notes"
    (root / "docs").mkdir(parents=True)
    watcher = InotifyWatcher(root, allow_all)
    stop = threading.Event()
    names: list[str] = []

    def read() -> None:
        for batch in watcher.events(stop, 0.05):
            names.extend(event.path for event in batch)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    swaps = 0
    try:
        deadline = time.monotonic() + CHURN_S
        while time.monotonic() < deadline:
            docs = root / "docs"
            for i in range(5):
                (docs / f"sub{i}" / "deeper").mkdir(parents=True, exist_ok=True)
            docs.rename(root / "docs.old")
            docs.symlink_to(outside, target_is_directory=True)
            time.sleep(0.001)
            docs.unlink()
            (root / "docs.old").rename(docs)
            shutil.rmtree(docs)
            docs.mkdir()
            swaps += 1
    finally:
        stop.set()
        reader.join(5)
    try:
        assert swaps > 10
        assert not watched_inodes(watcher) & tree_inodes(outside)
        assert not [name for name in names if "secret" in name]
    finally:
        watcher.close()
