"""Both watcher backends against real folders and real file events: changes, new and renamed folders, filtered
folders that cost no watches, rebuild after a filter change, and queue overflow (R-W2, R-W3)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scree.config import WATCHER_CHOICES
from scree.errors import ConfigError, ScreeError
from scree.writer_proc.watcher import Change, Event, Watcher
from scree.writer_proc.watcher_watchdog import WatchdogWatcher
from scree.writer_proc.watchers import make_watcher

BACKENDS = [choice for choice in WATCHER_CHOICES if choice != "auto"]  # each real backend
DEADLINE_S = 10.0
POLL_S = 0.02
READ_TIMEOUT_S = 0.1
FILTERED_SUBFOLDERS = 5000
QUEUE_PROC = Path("/proc/sys/fs/inotify/max_queued_events")
SMALL_KERNEL_QUEUE = 256


class NameFilter:
    """Allows a directory unless one of its parts is hidden or in `ignored`; the set can change between rebuilds."""

    def __init__(self, *ignored: str) -> None:
        self.ignored = set(ignored)

    def __call__(self, rel_dir: str) -> bool:
        return not any(part.startswith(".") or part in self.ignored for part in rel_dir.split("/"))


class Collector:
    """Consumes watcher.events() on a background thread, like the writer's event thread, and keeps every event."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher
        self.stop = threading.Event()
        self.batches = 0
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for batch in self.watcher.events(self.stop, timeout_s=READ_TIMEOUT_S):
                with self._lock:
                    self._events.extend(batch)
                    self.batches += 1
        except BaseException as exc:  # surfaced in the test thread by events()/wait_for()
            self._error = exc

    @property
    def events(self) -> list[Event]:
        if self._error is not None:
            raise self._error
        with self._lock:
            return list(self._events)

    def wait_for(self, *expected: Event) -> list[Event]:
        """Every event seen once all `expected` have arrived; fails at the deadline naming what is missing."""
        end = time.monotonic() + DEADLINE_S
        while True:
            seen = self.events
            missing = [event for event in expected if event not in seen]
            if not missing:
                return seen
            if time.monotonic() > end:
                pytest.fail(f"not reported within {DEADLINE_S} s: {missing}; seen: {seen[-20:]}")
            time.sleep(POLL_S)

    def settle(self, root: Path, tag: str) -> list[Event]:
        """Write a marker file and wait for it: events caused before it have been delivered by then."""
        marker = f"marker-{tag}.md"
        (root / marker).write_text("marker\n")
        return self.wait_for(Event(Change.ADDED, marker))

    def close(self) -> None:
        self.stop.set()
        self._thread.join(timeout=DEADLINE_S)
        assert not self._thread.is_alive(), "events() did not honour stop"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


@pytest.fixture
def watch(backend: str) -> Iterator[Callable[[Path, NameFilter], tuple[Watcher, Collector]]]:
    """Start a watcher and its collector on a folder; both are stopped after the test."""
    started: list[tuple[Watcher, Collector]] = []

    def start(folder: Path, dir_filter: NameFilter) -> tuple[Watcher, Collector]:
        watcher = make_watcher(folder, dir_filter, backend)
        collector = Collector(watcher)
        started.append((watcher, collector))
        return watcher, collector

    yield start
    for watcher, collector in started:
        collector.close()
        watcher.close()


def write(path: Path, text: str = "# note\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_file_create_modify_delete(root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]) -> None:
    _, collector = watch(root, NameFilter())
    write(root / "a.md")
    collector.wait_for(Event(Change.ADDED, "a.md"))
    with (root / "a.md").open("a") as handle:
        handle.write("more\n")
    collector.wait_for(Event(Change.MODIFIED, "a.md"))
    (root / "a.md").unlink()
    collector.wait_for(Event(Change.DELETED, "a.md"))


def test_file_rename(root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]) -> None:
    write(root / "docs" / "old.md")
    _, collector = watch(root, NameFilter())
    (root / "docs" / "old.md").rename(root / "docs" / "new.md")
    collector.wait_for(Event(Change.DELETED, "docs/old.md"), Event(Change.ADDED, "docs/new.md"))
    (root / "docs" / "new.md").rename(root / "top.md")
    collector.wait_for(Event(Change.DELETED, "docs/new.md"), Event(Change.ADDED, "top.md"))


def test_file_written_right_after_mkdir_is_not_lost(
    root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]
) -> None:
    watcher, collector = watch(root, NameFilter())
    assert watcher.watch_count == 1
    os.mkdir(root / "sub")
    write(root / "sub" / "x.md")
    os.makedirs(root / "deep" / "a" / "b")
    write(root / "deep" / "a" / "b" / "y.md")
    collector.wait_for(Event(Change.ADDED, "sub/x.md"), Event(Change.ADDED, "deep/a/b/y.md"))
    assert watcher.watch_count == 5
    write(root / "deep" / "a" / "b" / "z.md")
    collector.wait_for(Event(Change.ADDED, "deep/a/b/z.md"))


def test_renamed_folder_reports_old_dir_deleted_and_every_file_under_the_new_one(
    tmp_path: Path, root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]
) -> None:
    write(root / "docs" / "one.md")
    write(root / "docs" / "inner" / "two.md")
    watcher, collector = watch(root, NameFilter())
    assert watcher.watch_count == 3
    (root / "docs").rename(root / "guide")
    collector.wait_for(
        Event(Change.DELETED, "docs"),
        Event(Change.ADDED, "guide/one.md"),
        Event(Change.ADDED, "guide/inner/two.md"),
    )
    assert watcher.watch_count == 3

    mark = len(collector.events)
    write(root / "guide" / "inner" / "three.md")
    seen = collector.wait_for(Event(Change.ADDED, "guide/inner/three.md"))
    assert not [e for e in seen[mark:] if e.path.startswith("docs")], "a watch kept its old folder name"

    outside = tmp_path / "moved-out"
    (root / "guide").rename(outside)
    collector.wait_for(Event(Change.DELETED, "guide"))
    write(outside / "inner" / "gone.md")
    seen = collector.settle(root, "moved-out")
    assert watcher.watch_count == 1
    assert not [e for e in seen if "gone.md" in e.path], "a folder moved out of the root is still watched"

    write(root / "again" / "sub" / "a.md")
    collector.wait_for(Event(Change.ADDED, "again/sub/a.md"))
    shutil.rmtree(root / "again")
    collector.wait_for(Event(Change.DELETED, "again"))
    collector.settle(root, "after-rmtree")
    assert watcher.watch_count == 1


def test_filtered_folder_costs_no_watches_and_reports_nothing(
    root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]
) -> None:
    write(root / "docs" / "a.md")
    write(root / "pkg" / "readme.md")
    write(root / "node_modules" / "lib" / "readme.md")
    write(root / ".hidden" / "secret.md")
    watcher, collector = watch(root, NameFilter("node_modules"))
    allowed_dirs = 3  # root, docs, pkg
    assert watcher.watch_count == allowed_dirs

    for n in range(FILTERED_SUBFOLDERS):
        os.mkdir(root / "node_modules" / f"dep{n}")
    write(root / "node_modules" / "dep7" / "notes.md")
    write(root / "node_modules" / "lib" / "readme.md", "changed\n")
    os.makedirs(root / "pkg" / "node_modules" / "inner")
    write(root / "pkg" / "node_modules" / "inner" / "x.md")
    write(root / ".hidden" / "secret.md", "changed\n")
    seen = collector.settle(root, "filtered")

    assert watcher.watch_count == allowed_dirs
    leaked = [e for e in seen if "node_modules" in e.path or ".hidden" in e.path]
    assert not leaked, f"events from filtered folders: {leaked[:5]}"


def test_rebuild_follows_a_changed_filter(
    root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]
) -> None:
    write(root / "docs" / "a.md")
    write(root / "drafts" / "sub" / "b.md")
    dir_filter = NameFilter("drafts")
    watcher, collector = watch(root, dir_filter)
    assert watcher.watch_count == 2
    write(root / "drafts" / "sub" / "hidden-while-ignored.md")
    seen = collector.settle(root, "ignored")
    assert not [e for e in seen if e.path.startswith("drafts")]

    dir_filter.ignored = {"docs"}
    watcher.rebuild()
    assert watcher.watch_count == 3  # root, drafts, drafts/sub
    write(root / "drafts" / "sub" / "c.md")
    collector.wait_for(Event(Change.ADDED, "drafts/sub/c.md"))
    mark = len(collector.events)
    write(root / "docs" / "now-ignored.md")
    seen = collector.settle(root, "rebuilt")
    assert not [e for e in seen[mark:] if e.path.startswith("docs")]


def test_symlinked_folder_is_not_followed(
    tmp_path: Path, root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    watcher, collector = watch(root, NameFilter())
    assert watcher.watch_count == 1
    write(outside / "escape.md")
    seen = collector.settle(root, "symlink")
    assert not [e for e in seen if e.path.startswith("link/")]


def test_events_honours_stop_within_the_timeout(
    root: Path, watch: Callable[[Path, NameFilter], tuple[Watcher, Collector]]
) -> None:
    _, collector = watch(root, NameFilter())
    end = time.monotonic() + DEADLINE_S
    while collector.batches < 3 and time.monotonic() < end:
        time.sleep(POLL_S)
    assert collector.batches >= 3, "idle events() should yield empty batches so the caller can check stop"
    assert collector.events == []
    started = time.monotonic()
    collector.close()
    assert time.monotonic() - started < READ_TIMEOUT_S + 1.0


@contextmanager
def small_kernel_queue() -> Iterator[int]:
    """Lower fs.inotify.max_queued_events while a watcher is created (read at inotify_init) when we are root; the
    old value is restored at once. Yields the limit that applies to the new instance."""
    limit = int(QUEUE_PROC.read_text())
    try:
        QUEUE_PROC.write_text(f"{SMALL_KERNEL_QUEUE}\n")
    except OSError:
        yield limit
        return
    try:
        yield SMALL_KERNEL_QUEUE
    finally:
        QUEUE_PROC.write_text(f"{limit}\n")


def test_inotify_queue_overflow_is_reported(root: Path) -> None:
    dir_filter = NameFilter()
    with small_kernel_queue() as limit:
        watcher = make_watcher(root, dir_filter, "inotify")
    with watcher:
        stop = threading.Event()
        batches = watcher.events(stop, timeout_s=READ_TIMEOUT_S)
        # Each new file is CREATE, MODIFY and CLOSE_WRITE: a third of the limit overfills the unread queue.
        for n in range(limit // 3 + 100):
            (root / f"f{n}.md").write_text("x")
        seen: list[Event] = []
        end = time.monotonic() + DEADLINE_S
        while Event(Change.OVERFLOW, "") not in seen and time.monotonic() < end:
            seen.extend(next(batches))
        assert Event(Change.OVERFLOW, "") in seen

        watcher.rebuild()
        assert watcher.watch_count == 1
        write(root / "after.md")
        while Event(Change.ADDED, "after.md") not in seen and time.monotonic() < end:
            seen.extend(next(batches))
        assert Event(Change.ADDED, "after.md") in seen
        stop.set()


def test_watchdog_queue_overflow_is_reported(root: Path) -> None:
    with WatchdogWatcher(root, NameFilter(), queue_limit=8) as watcher:
        stop = threading.Event()
        batches = watcher.events(stop, timeout_s=READ_TIMEOUT_S)
        seen: list[Event] = []
        end = time.monotonic() + DEADLINE_S
        round_ = 0
        # While the generator is paused nothing drains the queue; a round of writes overfills it.
        while Event(Change.OVERFLOW, "") not in seen and time.monotonic() < end:
            for n in range(100):
                (root / f"r{round_}-{n}.md").write_text("x")
            round_ += 1
            seen.extend(next(batches))
        assert Event(Change.OVERFLOW, "") in seen
        stop.set()


def test_unknown_backend_is_a_clear_error(root: Path) -> None:
    with pytest.raises(ConfigError, match="unknown watcher"):
        make_watcher(root, NameFilter(), "fsevents")


def test_missing_root_is_a_clear_error(tmp_path: Path, backend: str) -> None:
    with pytest.raises(ScreeError, match="cannot watch"):
        make_watcher(tmp_path / "missing", NameFilter(), backend)
