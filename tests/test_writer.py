"""The writer in-process against real folders, real file events and a real index: first sync, edits, renames,
ignore-rule changes, opt-outs, the first-sync cap, the model check, health, status reports; plus the pure debouncer
and the health comparison (R-W2, R-W3, R-W4, R-S3, R-S4)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cli_helpers
import pytest
from backends import Backend

from scree.config import WATCHER_CHOICES, Settings, load_settings
from scree.errors import IndexMismatchError
from scree.index.backend import fenced, open_reader, open_writer, shared, writer_lock
from scree.paths import ensure_private_dir
from scree.protocol import Finished, Outcome, WriterReport
from scree.writer_proc.debounce import Debouncer, Job, Schedule
from scree.writer_proc.health import FileIdentity, HealthCheck, compare, identity_of
from scree.writer_proc.writer import Writer

DEADLINE_S = 10.0
BACKENDS = [choice for choice in WATCHER_CHOICES if choice != "auto"]  # each real backend
FAST_ENV = {
    "SCREE_EMBEDDER": "hash",
    "SCREE_DEBOUNCE_SECONDS": "0.2",
    "SCREE_OUTAGE_PAUSE_SECONDS": "0.3",
    "SCREE_HEALTH_SECONDS": "0.3",
    "SCREE_LOCK_RETRY_SECONDS": "0.3",
}


def wait_until(condition: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    return cli_helpers.wait_until(condition, what, deadline_s)


write = cli_helpers.write_text


def note(title: str, body: str) -> str:
    return f"# {title}\n\n{body}\n"


@dataclass
class Running:
    """A Writer running on a thread, with every status report it sent."""

    settings: Settings
    writer: Writer
    stop: threading.Event
    states: list[WriterReport] = field(default_factory=list)
    results: list[Finished] = field(default_factory=list)
    thread: threading.Thread | None = None

    def index(self) -> dict[str, str]:
        """path -> the file's chunk texts joined, as the index holds them now (read-only, like a reader)."""
        if not shared(self.settings) and not self.settings.db_path.exists():
            return {}
        with open_reader(self.settings) as store:
            return {path: "\n".join(c.text for c in store.chunks_for_path(path)) for path in store.files()}

    def wait_indexed(self, path: str, *words: str) -> None:
        wait_until(lambda: all(w in self.index().get(path, "\0") for w in words), f"{path} indexed with {words}")

    def wait_gone(self, path: str) -> None:
        wait_until(lambda: path not in self.index(), f"{path} removed from the index")

    def wait_first_sync(self) -> None:
        wait_until(lambda: any(s.complete for s in self.states), "first sync done")

    def result(self) -> Finished:
        assert self.thread is not None
        self.thread.join(DEADLINE_S)
        assert not self.thread.is_alive(), "run() did not return"
        return self.results[0]


def make_settings(folder: Path, data: Path, **env: str) -> Settings:
    return load_settings({"XDG_DATA_HOME": str(data), **FAST_ENV, **env}, notes=str(folder))


@contextmanager
def running(settings: Settings, *, first_sync_only: bool = False) -> Iterator[Running]:
    """Hold the writer lock like `scree watch` does (writer.lock, or the collection's lock in PostgreSQL, whose
    generation fences the writer), run the writer on a thread, stop it and release after."""
    ensure_private_dir(settings.index_dir)
    lock = writer_lock(settings)
    assert lock.try_acquire()
    settings = fenced(settings, lock)
    stop = threading.Event()
    writer = Writer(settings, stop, lambda s: run.states.append(s), first_sync_only=first_sync_only)
    run = Running(settings, writer, stop)
    run.thread = threading.Thread(target=lambda: run.results.append(run.writer.run()), daemon=True)
    run.thread.start()
    try:
        yield run
    finally:
        stop.set()
        run.thread.join(DEADLINE_S)
        lock.release()
    assert not run.thread.is_alive(), "the writer did not stop within the deadline"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "notes"
    write(path / "a.md", note("Alpha", "apples and apricots"))
    write(path / "docs" / "b.md", note("Beta", "bananas and blueberries"))
    return path


@pytest.fixture
def settings(folder: Path, tmp_path: Path, index_backend: Backend) -> Settings:
    """On each backend in turn: the SQLite file, or a collection in PostgreSQL (index_backend)."""
    return make_settings(folder, tmp_path / "data", **index_backend.env())


@pytest.fixture
def sqlite_settings(folder: Path, tmp_path: Path) -> Settings:
    return make_settings(folder, tmp_path / "data")


# --- the debouncer (pure) ---


def test_debouncer_releases_a_path_once_its_last_event_is_old_enough() -> None:
    debouncer = Debouncer(1.5)
    debouncer.add("a.md", 10.0)
    debouncer.add("b.md", 10.5)
    assert debouncer.due(11.4) == []
    assert debouncer.next_due() == pytest.approx(11.5)
    debouncer.add("a.md", 11.0)  # a new event postpones it
    assert debouncer.due(11.6) == []
    assert debouncer.due(12.0) == ["b.md"]
    assert "a.md" in debouncer and len(debouncer) == 1
    assert debouncer.due(12.5) == ["a.md"]
    assert debouncer.next_due() is None and len(debouncer) == 0


def test_debouncer_releases_a_path_that_never_goes_quiet_after_max_wait() -> None:
    debouncer = Debouncer(1.0, max_wait_s=5.0)
    for tick in range(0, 60):
        debouncer.add("log.md", tick * 0.1)  # an event every 100 ms, never a pause of 1 s
        if debouncer.due(tick * 0.1):
            assert tick * 0.1 >= 5.0
            return
    pytest.fail("a path written without pause was never released")


def test_debouncer_immediate_clear_and_sorted_output() -> None:
    debouncer = Debouncer(1.5)
    debouncer.feed([("z.md", 1.0), ("m.md", 1.0), ("a.md", 1.0)])
    debouncer.add("now.md", 2.0, immediate=True)
    assert debouncer.due(2.0) == ["now.md"]
    assert debouncer.due(2.5) == ["a.md", "m.md", "z.md"]
    debouncer.feed([("x.md", 3.0), ("y.md", 3.0)])
    assert debouncer.clear() == ["x.md", "y.md"]
    assert debouncer.due(100.0) == []
    with pytest.raises(ValueError):
        Debouncer(-1)


def test_schedule_orders_resyncs_requests_and_debounced_paths() -> None:
    schedule: Schedule[str] = Schedule(debounce_s=1.0, pause_s=30.0, pause_max_s=300.0)
    assert schedule.take(0.0) is None  # nothing to do, nothing to wait for
    schedule.resync(0.0)
    schedule.add_paths(["a.md"], 0.0)
    assert schedule.take(0.0) == Job(full=True)  # the first sync covers a.md's event
    assert schedule.take(0.0) is None
    schedule.add_paths(["b.md"], 1.0)
    schedule.request("c.md", "reply-c")
    assert schedule.take(1.0) == Job(full=False, paths=("c.md",), request="reply-c")
    assert schedule.take(1.5) == 2.0  # b.md is due once its event is 1 s old
    assert schedule.take(2.0) == Job(full=False, paths=("b.md",))
    schedule.request(None, "reply-all")
    assert schedule.take(3.0) == Job(full=True, rebuild=True, request="reply-all")


def test_schedule_rule_changes_are_debounced_into_one_resync() -> None:
    schedule: Schedule[str] = Schedule(debounce_s=1.0, pause_s=30.0, pause_max_s=300.0)
    schedule.rules_changed(10.0)
    schedule.rules_changed(10.5)  # another write of the same .gitignore
    assert schedule.take(11.0) == 11.5
    assert schedule.take(11.5) == Job(full=True)
    assert schedule.take(11.5) is None


def test_schedule_outage_pauses_double_and_end_in_a_full_resync() -> None:
    schedule: Schedule[str] = Schedule(debounce_s=1.0, pause_s=30.0, pause_max_s=100.0)
    assert schedule.outage(0.0) == 30.0
    schedule.add_paths(["edited-during-outage.md"], 5.0)
    assert schedule.take(10.0) == 30.0  # paused: nothing runs, not even due paths
    schedule.request("x.md", "reply-x")
    assert schedule.take(10.0) == Job(full=False, paths=("x.md",), request="reply-x", paused=True)  # answered now
    assert schedule.take(30.0) == Job(full=True)  # then the whole folder, which covers the edit
    assert [schedule.outage(t) for t in (40.0, 200.0, 400.0)] == [60.0, 100.0, 100.0]
    schedule.recovered()
    assert schedule.outage(600.0) == 30.0


# --- health (R-W4) ---


def test_health_compare_names_what_changed() -> None:
    same = FileIdentity(1, 2)
    assert compare("folder", Path("/x"), same, FileIdentity(1, 2)) is None
    assert compare("folder", Path("/x"), same, None) == "the folder /x was removed or moved away"
    assert compare("index", Path("/i.db"), same, FileIdentity(1, 3)) == "the index /i.db was replaced by another one"


def test_health_check_sees_a_replaced_index_and_a_removed_folder(tmp_path: Path) -> None:
    folder, db = tmp_path / "f", tmp_path / "index.db"
    folder.mkdir()
    db.write_text("x")
    health = HealthCheck(folder, db)
    assert health.problem() is None
    replacement = tmp_path / "new.db"
    replacement.write_text("x")
    os.replace(replacement, db)
    assert health.problem() == f"the index {db} was replaced by another one"
    health = HealthCheck(folder, db)
    folder.rmdir()
    assert identity_of(folder) is None
    assert health.problem() == f"the folder {folder} was removed or moved away"


# --- the writer ---


def test_first_sync_indexes_the_folder_and_reports_progress_and_heartbeats(settings: Settings) -> None:
    with running(settings) as run:
        run.wait_first_sync()
        assert set(run.index()) == {"a.md", "docs/b.md"}
        done = next(s for s in run.states if s.complete)
        assert done.notes_indexed == 2 and not done.first_sync_running and done.last_error is None
        assert any(s.first_sync_running for s in run.states[: run.states.index(done)])
        assert done.watches == 2  # the root and docs/
        sent = len(run.states)
        wait_until(lambda: len(run.states) >= sent + 2, "heartbeats keep coming while idle")
        assert run.states[-1].heartbeat > done.heartbeat
    assert run.result().outcome is Outcome.STOPPED
    with open_reader(settings) as store:
        assert store.is_complete()


def test_first_sync_only_returns_once_the_folder_is_indexed(settings: Settings) -> None:
    with running(settings, first_sync_only=True) as run:
        result = run.result()
    assert result.outcome is Outcome.FIRST_SYNC_DONE
    assert run.states[-1].complete and set(run.index()) == {"a.md", "docs/b.md"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_edit_new_file_and_delete_are_indexed(folder: Path, tmp_path: Path, backend: str) -> None:
    with running(make_settings(folder, tmp_path / "data", SCREE_WATCHER=backend)) as run:
        run.wait_first_sync()
        write(folder / "a.md", note("Alpha", "apples and avocados"))
        run.wait_indexed("a.md", "avocados")
        assert "apricots" not in run.index()["a.md"]
        write(folder / "docs" / "c.md", note("Gamma", "grapes"))
        run.wait_indexed("docs/c.md", "grapes")
        (folder / "docs" / "b.md").unlink()
        run.wait_gone("docs/b.md")


def test_rename_file_folder_and_new_subfolder(folder: Path, settings: Settings) -> None:
    with running(settings) as run:
        run.wait_first_sync()
        (folder / "a.md").rename(folder / "renamed.md")
        run.wait_indexed("renamed.md", "apricots")
        run.wait_gone("a.md")
        (folder / "docs").rename(folder / "guide")
        run.wait_indexed("guide/b.md", "bananas")
        run.wait_gone("docs/b.md")
        write(folder / "guide" / "b.md", note("Beta", "bananas and cherries"))  # the renamed folder is watched
        run.wait_indexed("guide/b.md", "cherries")
        os.makedirs(folder / "new" / "deeper")
        write(folder / "new" / "deeper" / "d.md", note("Delta", "dates"))
        run.wait_indexed("new/deeper/d.md", "dates")
        write(folder / "new" / "deeper" / "d.md", note("Delta", "dates and damsons"))
        run.wait_indexed("new/deeper/d.md", "damsons")
        shutil.rmtree(folder / "new")
        run.wait_gone("new/deeper/d.md")


def test_gitignore_change_removes_newly_ignored_and_adds_newly_unignored(folder: Path, settings: Settings) -> None:
    write(folder / "drafts" / "d.md", note("Draft", "drafty dragons"))
    write(folder / ".gitignore", "drafts/\n")
    with running(settings) as run:
        run.wait_first_sync()
        assert set(run.index()) == {"a.md", "docs/b.md"}
        watches = run.writer.report().watches
        write(folder / ".gitignore", "docs/\n")
        run.wait_gone("docs/b.md")
        run.wait_indexed("drafts/d.md", "dragons")
        assert run.writer.report().watches == watches  # drafts/ watched instead of docs/
        write(folder / "drafts" / "d.md", note("Draft", "drafty dragons and drakes"))  # a watch is there now
        run.wait_indexed("drafts/d.md", "drakes")
        write(folder / "docs" / "b.md", note("Beta", "ignored edit"))  # and none is on docs/ any more
        (folder / ".gitignore").unlink()
        run.wait_indexed("docs/b.md", "ignored edit")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_git_folder_made_or_removed_in_a_subfolder_takes_it_out_of_or_back_into_the_index(
    folder: Path, tmp_path: Path, backend: str
) -> None:
    """R-I1: `git init docs` while the writer watches makes docs/ a nested repository at once, not at the next full
    resync; its .git removed again (nothing watches inside a nested repository) is seen within a health interval."""
    write(folder / "docs" / "deeper" / "c.md", note("Gamma", "grapes"))
    with running(make_settings(folder, tmp_path / "data", SCREE_WATCHER=backend)) as run:
        run.wait_first_sync()
        run.wait_indexed("docs/deeper/c.md", "grapes")
        watches = run.writer.report().watches
        (folder / "docs" / ".git").mkdir()
        run.wait_gone("docs/b.md")
        run.wait_gone("docs/deeper/c.md")
        assert set(run.index()) == {"a.md"}
        wait_until(lambda: run.writer.report().watches == watches - 2, "docs/ and docs/deeper/ no longer watched")
        (folder / "docs" / ".git").rmdir()
        run.wait_indexed("docs/b.md", "bananas")
        run.wait_indexed("docs/deeper/c.md", "grapes")
        wait_until(lambda: run.writer.report().watches == watches, "docs/ and docs/deeper/ watched again")
        write(folder / "docs" / "deeper" / "c.md", note("Gamma", "grapes and gooseberries"))
        run.wait_indexed("docs/deeper/c.md", "gooseberries")


def test_screeignore_and_front_matter_opt_out(folder: Path, settings: Settings) -> None:
    with running(settings) as run:
        run.wait_first_sync()
        write(folder / "docs" / ".screeignore", "b.md\n")
        run.wait_gone("docs/b.md")
        write(folder / "a.md", "---\ntitle: A\nscree: ignore\n---\n" + note("Alpha", "apples"))
        run.wait_gone("a.md")
        write(folder / "a.md", "---\ntitle: A\n---\n" + note("Alpha", "apples again"))
        run.wait_indexed("a.md", "apples again")
        (folder / "docs" / ".screeignore").unlink()
        run.wait_indexed("docs/b.md", "bananas")


def test_recheck_and_a_folder_reindex_see_rules_no_watch_sees(folder: Path, settings: Settings) -> None:
    exclude = folder / ".git" / "info" / "exclude"  # inside .git: never watched, so no event says it changed
    write(exclude, "")
    with running(settings) as run:
        run.wait_first_sync()
        watches = run.writer.report().watches
        write(exclude, "a.md\ndocs/\n")
        run.writer.recheck(["a.md"])
        run.wait_gone("a.md")
        assert "docs/b.md" in run.index()
        replies: list[str] = []
        run.writer.request_reindex(None, replies.append)  # the reindex tool with no path re-reads the rules
        run.wait_gone("docs/b.md")
        wait_until(lambda: replies, "the reindex reply")
        assert replies[0].startswith("Scanned ") and " 1 removed" in replies[0]
        wait_until(lambda: run.writer.report().watches == watches - 1, "the watch on docs/ dropped")


def test_first_sync_cap_skips_a_new_index_over_the_limit(folder: Path, tmp_path: Path) -> None:
    settings = make_settings(folder, tmp_path / "data", SCREE_FIRST_SYNC_MB="0.00001")  # 10 bytes
    with running(settings) as run:
        result = run.result()
        assert result.outcome is Outcome.OVER_CAP
        assert "SCREE_FIRST_SYNC_MB=1e-05" in result.message and '"scree reindex"' in result.message
        assert run.states and run.states[-1].over_cap_mb is not None and run.states[-1].cap_mb == 1e-05
        assert run.index() == {}


def test_cap_does_not_apply_to_an_index_that_has_notes(folder: Path, tmp_path: Path) -> None:
    with running(make_settings(folder, tmp_path / "data")) as run:
        run.wait_first_sync()
    with running(make_settings(folder, tmp_path / "data", SCREE_FIRST_SYNC_MB="0.00001")) as run:
        run.wait_first_sync()


def test_an_index_made_by_another_model_is_a_clear_error(folder: Path, settings: Settings) -> None:
    ensure_private_dir(settings.index_dir)
    with open_writer(settings) as store:
        store.set_model("api:some/other-model", 512)
    writer = Writer(settings, threading.Event())
    with pytest.raises(IndexMismatchError, match="scree reindex --all"):
        writer.run()


def test_removed_folder_stops_the_writer_and_keeps_the_index(folder: Path, settings: Settings) -> None:
    with running(settings) as run:
        run.wait_first_sync()
        shutil.rmtree(folder)
        result = run.result()
    assert result.outcome is Outcome.UNHEALTHY
    assert result.message == f"the folder {folder} was removed or moved away"
    assert set(run.index()) == {"a.md", "docs/b.md"}, "a vanished folder must not empty the index"


def test_replaced_index_stops_the_writer(folder: Path, sqlite_settings: Settings, tmp_path: Path) -> None:
    settings = sqlite_settings  # a file replaced under the writer: SQLite's alone
    with running(settings) as run:
        run.wait_first_sync()
        copy = tmp_path / "copy.db"
        shutil.copyfile(settings.db_path, copy)
        os.replace(copy, settings.db_path)
        result = run.result()
    assert result.outcome is Outcome.UNHEALTHY
    assert result.message == f"the index {settings.db_path} was replaced by another one"
