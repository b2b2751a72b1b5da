"""`scree watch` end to end: real processes, real file events, real signals, the real embeddings HTTP server.

Covers edits becoming searchable on both watcher backends, SIGTERM/SIGINT stops within 5 s with the lock freed, a
second signal exiting at once, `reindex` and `reindex --all` against a running watch, a second watch waiting and then
taking over a SIGKILLed one (R-P4), an API outage healed without another edit (R-E4), the event thread reading on
while the API hangs (R-W2), health failures (R-W4), the first-sync cap (R-S4), a model mismatch, and SIGKILL at
random points of a large sync leaving every file fully old or fully new (R-S2).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import cli_helpers
import fault_helpers
import pytest
import sqlite_vec
from backends import Backend
from embed_server import EmbedServer

from scree.config import Settings, load_settings
from scree.content.chunking import chunk_markdown
from scree.content.files import decode_text
from scree.index.backend import holder
from scree.index.lock import lock_holder
from scree.store import SqliteReader
from scree.store.schema import VECTOR_TABLE

DEADLINE_S = 15.0
STOP_BAR_S = 5.0  # R-W5
TAKEOVER_BAR_S = 5.0  # R-P4
FAST_ENV = {**fault_helpers.FAST_ENV, "SCREE_LOG_FORMAT": "json"}
HANG_S = 20.0  # the API's delay per request while the writer must keep reading events
KILL_FILES = 300
KILL_ROUNDS = 3


def wait_until(condition: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    return cli_helpers.wait_until(condition, what, deadline_s)


write = cli_helpers.write_text


def base_env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env.update({"XDG_DATA_HOME": str(data), "SCREE_EMBEDDER": "hash", **FAST_ENV, **extra})
    return env


def api_env(data: Path, server: EmbedServer, **extra: str) -> dict[str, str]:
    return base_env(data, SCREE_EMBEDDER="api", SCREE_API_BASE=server.url, SCREE_API_KEY="test-key", **extra)


def scree(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scree.cli", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def search_paths(env: dict[str, str], folder: Path, query: str) -> list[str]:
    """A keyword search run in this process (cli_helpers.main_here): the tests poll it while watch indexes."""
    done = cli_helpers.main_here("search", "--notes", str(folder), "--json", "--mode", "keyword", query, env=env)
    assert done.returncode == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)["hits"]]


class Watch:
    """A running `scree watch`, its stderr collected line by line on a thread."""

    def __init__(self, env: dict[str, str], folder: Path, python_flags: tuple[str, ...] = ()) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *python_flags, "-m", "scree.cli", "watch", "--notes", str(folder)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def logs(self) -> list[dict[str, Any]]:
        out = []
        for line in list(self.lines):
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def plain(self) -> list[str]:
        return [line for line in list(self.lines) if not line.startswith("{")]

    def wait_log(self, event: str, deadline_s: float = DEADLINE_S, **fields: Any) -> dict[str, Any]:
        """The first log record of `event` with these fields, from the watching process itself by default: the
        first sync runs in a spawned child (role "writer") whose records share stderr."""
        fields.setdefault("role", "watch")
        found: list[dict[str, Any]] = []

        def seen() -> bool:
            found[:] = [
                r for r in self.logs() if r.get("event") == event and all(r.get(k) == v for k, v in fields.items())
            ]
            if not found and self.proc.poll() is not None:
                pytest.fail(f"watch exited ({self.proc.returncode}) before logging {event!r}: {self.lines[-5:]}")
            return bool(found)

        wait_until(seen, f"log {event!r} {fields}", deadline_s)
        return found[0]

    def wait_exit(self, deadline_s: float = DEADLINE_S) -> int:
        try:
            code = self.proc.wait(deadline_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"watch did not exit within {deadline_s} s: {self.lines[-5:]}")
        self._reader.join(DEADLINE_S)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return code

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, float]:
        started = time.monotonic()
        self.proc.send_signal(sig)
        code = self.wait_exit()
        return code, time.monotonic() - started

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.wait_exit()


@pytest.fixture
def start_watch() -> Iterator[Callable[[dict[str, str], Path], Watch]]:
    started: list[Watch] = []

    def start(env: dict[str, str], folder: Path) -> Watch:
        watch = Watch(env, folder)
        started.append(watch)
        return watch

    yield start
    for watch in started:
        watch.kill()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "notes"
    write(path / "a.md", "# Alpha\n\napples and apricots\n")
    write(path / "docs" / "b.md", "# Beta\n\nbananas and blueberries\n")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def settings_for(env: dict[str, str], folder: Path) -> Settings:
    return load_settings(env, notes=str(folder))


@pytest.mark.parametrize(("backend", "sig"), [("inotify", signal.SIGTERM), ("watchdog", signal.SIGINT)])
def test_edit_becomes_searchable_and_a_signal_stops_within_5s(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch], backend: str, sig: int
) -> None:
    env = base_env(data, SCREE_WATCHER=backend)
    watch = start_watch(env, folder)
    watch.wait_log("first sync done")
    assert lock_holder(settings_for(env, folder).lock_path) == watch.pid  # the lock file names the watch
    write(folder / "a.md", "# Alpha\n\napples and quokkas\n")
    wait_until(lambda: search_paths(env, folder, "quokkas") == ["a.md"], "the edit is searchable")
    code, seconds = watch.stop(sig)
    assert code == 0 and seconds < STOP_BAR_S
    assert lock_holder(settings_for(env, folder).lock_path) is None


def test_reindex_and_reindex_all_answer_while_watch_holds_the_lock(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch], index_backend: Backend
) -> None:
    env = base_env(data, **index_backend.env())
    watch = start_watch(env, folder)
    watch.wait_log("first sync done")
    done = scree(env, "reindex", "--notes", str(folder))
    assert done.returncode == 0
    assert done.stdout.strip() == (
        f"Another scree process (pid {watch.pid}) keeps this index current; edits are picked up within a few seconds."
    )
    done = scree(env, "reindex", "-all", "--notes", str(folder))
    assert done.returncode == 1
    assert f"reindex --all refused: another scree process (pid {watch.pid})" in done.stderr
    assert "Traceback" not in done.stderr
    assert search_paths(env, folder, "apricots") == ["a.md"]  # nothing was dropped


def test_second_watch_waits_then_takes_over_a_killed_holder_and_syncs_first(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch], index_backend: Backend
) -> None:
    env = base_env(data, **index_backend.env())
    first = start_watch(env, folder)
    first.wait_log("first sync done")
    second = start_watch(env, folder)
    waiting = f"scree: waiting: another scree process (pid {first.pid}) holds"
    wait_until(lambda: any(line.startswith(waiting) for line in second.plain()), "the second watch names the holder")
    first.proc.kill()
    killed = time.monotonic()
    write(folder / "a.md", "# Alpha\n\napples and meanwhile mangoes\n")  # while nobody watches
    second.wait_log("writer lock taken", deadline_s=TAKEOVER_BAR_S)
    assert time.monotonic() - killed < TAKEOVER_BAR_S
    second.wait_log("first sync done")
    assert search_paths(env, folder, "mangoes") == ["a.md"]
    assert holder(settings_for(env, folder)) == second.pid
    assert sum(1 for line in second.plain() if line.startswith("scree: waiting")) == 1, "say it once, not per retry"
    code, _ = second.stop()
    assert code == 0


def test_outage_then_recovery_indexes_an_edit_made_during_it(
    folder: Path, data: Path, embed_server: EmbedServer, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    env = api_env(data, embed_server)
    watch = start_watch(env, folder)
    watch.wait_log("first sync done")
    embed_server.down()
    write(folder / "a.md", "# Alpha\n\napples and outage oranges\n")
    watch.wait_log("embeddings unavailable; pausing, then resyncing the folder")
    assert search_paths(env, folder, "oranges") == []
    embed_server.up()
    wait_until(lambda: search_paths(env, folder, "oranges") == ["a.md"], "indexed after recovery, no further edit")
    watch.wait_log("embeddings API answering again")
    code, _ = watch.stop()
    assert code == 0


def _hang_api(watch: Watch, folder: Path, server: EmbedServer) -> None:
    """First sync done, then every API request hangs HANG_S, and the sync thread is stuck in one."""
    watch.wait_log("first sync done")
    before = server.request_count()
    server.set(delay_s=HANG_S)
    write(folder / "a.md", "# Alpha\n\napples and stuck starfruit\n")
    wait_until(lambda: server.request_count() > before, "the sync thread is waiting on the API")


def test_event_thread_keeps_reading_while_the_api_hangs_and_sigterm_still_stops(
    folder: Path, data: Path, embed_server: EmbedServer, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    watch = start_watch(api_env(data, embed_server, SCREE_LOG_LEVEL="debug"), folder)
    _hang_api(watch, folder, embed_server)
    hung_at = time.monotonic()
    write(folder / "docs" / "c.md", "# Gamma\n\ngrapes\n")
    write(folder / "docs" / "d.md", "# Delta\n\ndates\n")
    for name in ("docs/c.md", "docs/d.md"):
        wait_until(
            lambda name=name: any(name in r.get("paths", []) for r in watch.logs() if r.get("event") == "file events"),
            f"an event batch naming {name}",
            deadline_s=5.0,
        )
    wait_until(
        lambda: any(r.get("pending", 0) >= 2 for r in watch.logs() if r.get("event") == "writer status"),
        "heartbeats keep reporting the pending paths",
        deadline_s=5.0,
    )
    assert time.monotonic() - hung_at < HANG_S, "all of this happened while one request was still hanging"
    code, seconds = watch.stop()
    assert code == 0 and seconds < STOP_BAR_S
    assert lock_holder(settings_for(api_env(data, embed_server), folder).lock_path) is None


def test_a_second_signal_exits_at_once(
    folder: Path, data: Path, embed_server: EmbedServer, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    watch = start_watch(api_env(data, embed_server), folder)
    _hang_api(watch, folder, embed_server)
    started = time.monotonic()
    watch.proc.send_signal(signal.SIGTERM)
    watch.wait_log("stopping", deadline_s=2.0)  # handled: a second signal now is not merged into the first
    watch.proc.send_signal(signal.SIGTERM)
    code = watch.wait_exit()
    assert code == 128 + signal.SIGTERM
    assert time.monotonic() - started < STOP_BAR_S - 1.0
    assert lock_holder(settings_for(api_env(data, embed_server), folder).lock_path) is None


@pytest.mark.parametrize("damage", ["remove the folder", "replace index.db"])
def test_health_failure_exits_non_zero_with_a_one_line_reason(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch], damage: str
) -> None:
    env = base_env(data)
    settings = settings_for(env, folder)
    watch = start_watch(env, folder)
    watch.wait_log("first sync done")
    if damage == "remove the folder":
        shutil.rmtree(folder)
        reason = f"scree: the folder {folder} was removed or moved away"
    else:
        copy = data / "copy.db"
        shutil.copyfile(settings.db_path, copy)
        os.replace(copy, settings.db_path)
        reason = f"scree: the index {settings.db_path} was replaced by another one"
    assert watch.wait_exit() == 1
    assert watch.plain()[-1] == reason
    assert lock_holder(settings.lock_path) is None


def test_first_sync_cap_leaves_the_folder_to_reindex(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    env = base_env(data, SCREE_FIRST_SYNC_MB="0.00001")
    watch = start_watch(env, folder)
    assert watch.wait_exit() == 0
    message = watch.plain()[-1]
    assert message.startswith(f"scree: not indexed: {folder} has 0.0 MB of markdown, over SCREE_FIRST_SYNC_MB=1e-05")
    assert message.endswith('run "scree reindex" in it to index it anyway')
    assert lock_holder(settings_for(env, folder).lock_path) is None
    assert search_paths(env, folder, "apricots") == []
    done = scree(env, "reindex", "--notes", str(folder))
    assert done.returncode == 0 and done.stdout.startswith("Scanned 2 files: 2 indexed")
    assert search_paths(env, folder, "apricots") == ["a.md"]


def test_an_index_made_by_another_model_stops_watch_with_the_fix(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    cli_helpers.reindex_here(base_env(data), folder)  # set-up
    env = base_env(data, SCREE_EMBEDDER="api", SCREE_API_BASE="http://127.0.0.1:9/v1", SCREE_API_KEY="test-key")
    watch = start_watch(env, folder)
    assert watch.wait_exit() == 1
    assert "scree reindex --all" in watch.plain()[-1] and "Traceback" not in "\n".join(watch.lines)
    assert lock_holder(settings_for(env, folder).lock_path) is None


@pytest.fixture(scope="module")
def watch_imports(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every module a real `scree watch` with the API embedder imported through a first sync and one edit, as
    `python -X importtime` lists them (one run for the tests below)."""
    tmp = tmp_path_factory.mktemp("imports")
    folder = tmp / "notes"
    write(folder / "a.md", "# Alpha\n\napples\n")
    with EmbedServer() as server:
        watch = Watch(api_env(tmp / "data", server), folder, python_flags=("-X", "importtime"))
        try:
            watch.wait_log("first sync done")
            write(folder / "a.md", "# Alpha\n\napples and imported ideas\n")
            watch.wait_log("synced changed files")
            assert watch.stop()[0] == 0
        finally:
            watch.kill()
    imported = {line.rsplit("|", 1)[-1].strip() for line in watch.plain() if line.startswith("import time:")}
    assert "scree.embedders.api" in imported and "scree.writer_proc.writer" in imported
    return imported


@pytest.mark.parametrize("package", ["mcp", "tokenizers", "onnxruntime", "openvino", "numpy", "sqlite3"])
def test_watch_with_the_api_embedder_imports_only_what_it_uses(watch_imports: set[str], package: str) -> None:
    """Idle memory (R-P3, §10): the writer never loads the MCP stack or the offline model's libraries."""
    assert not {name for name in watch_imports if name.split(".")[0] == package}


# --- SIGKILL in the middle of a large sync (R-S2) ---


def kill_note(index: int, version: int) -> str:
    """Each version has a different number of sections, so a half-written file could not pass for either."""
    parts = [f"# Note {index}\n\nversion {version} of note {index}\n"]
    for section in range(version % 3 + 1):
        parts.append(f"## Part {section}\n\nnote{index} v{version} s{section} " + "text " * 40 + "\n")
    return "\n".join(parts)


def check_consistent(settings: Settings, shas: dict[str, dict[str, int]], texts: dict[int, dict[str, str]]) -> int:
    """Every indexed file is exactly one written version; chunks, keywords and vectors match one for one.

    Returns how many files hold the newest version."""
    conn = apsw.Connection(str(settings.db_path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(str(sqlite_vec.loadable_path()))
    try:
        chunks, fts, vectors = (
            conn.execute(sql).fetchone()[0]  # type: ignore[index]
            for sql in (
                "select count(*) from chunks",
                "select count(*) from chunks_fts_docsize",
                f"select count(*) from {VECTOR_TABLE}",
            )
        )
        assert chunks == fts == vectors, f"chunks {chunks}, keyword rows {fts}, vectors {vectors}"
        orphans = conn.execute(
            f"select count(*) from {VECTOR_TABLE} where chunk_id not in (select id from chunks)"
        ).fetchone()
        assert orphans is not None and orphans[0] == 0
        stray = conn.execute("select count(*) from chunks where path not in (select path from files)").fetchone()
        assert stray is not None and stray[0] == 0
    finally:
        conn.close()
    newest = max(texts)
    at_newest = 0
    with SqliteReader.open(settings.db_path, settings.folder) as store:
        for path, state in store.files().items():
            version = shas[path].get(state.sha256)
            assert version is not None, f"{path} holds a version that was never written"
            expected = [c.text for c in chunk_markdown(texts[version][path])]
            assert [c.text for c in store.chunks_for_path(path)] == expected, f"{path} is neither old nor new"
            at_newest += version == newest
    return at_newest


# its own deadlines (a reindex, three rounds of up to 60 s, a last sync of up to 60 s) add up past the suite's
# 120 s: beside the other tests (pytest-xdist) a slow round must fail on its deadline, saying which, not on this one
@pytest.mark.timeout(300)
def test_sigkill_at_random_points_of_a_large_sync_leaves_every_file_old_or_new(
    tmp_path: Path, data: Path, embed_server: EmbedServer, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    folder = tmp_path / "big"
    env = api_env(data, embed_server, SCREE_BATCH_SIZE="8")
    paths = [f"d{i % 10}/n{i:03d}.md" for i in range(KILL_FILES)]
    shas: dict[str, dict[str, int]] = {path: {} for path in paths}
    texts: dict[int, dict[str, str]] = {}
    partial: list[int] = []  # files at the newest version when each round was killed

    def write_version(version: int) -> None:
        texts[version] = {}
        for i, path in enumerate(paths):
            raw = kill_note(i, version).encode("utf-8")
            write(folder / path, raw.decode("utf-8"))
            shas[path][hashlib.sha256(raw).hexdigest()] = version
            texts[version][path] = decode_text(raw)

    write_version(0)
    settings = settings_for(env, folder)
    cli_helpers.reindex_here(env, folder)  # set-up: version 0
    assert check_consistent(settings, shas, texts) == KILL_FILES
    embed_server.set(delay_s=0.05)  # each request slow enough that a 300-file sync lasts seconds
    for version in range(1, KILL_ROUNDS + 1):
        write_version(version)
        # A write transaction holds about WRITE_BATCH_CHUNKS rows (2 to 4 chunks a file here: fewer than KILL_FILES
        # files), so the count jumps by a batch at a time and a target past the last batch's start lands after the
        # sync. The first round's target comes before the first batch ends, so at least one kill lands mid-sync.
        target = rng.randint(1, KILL_FILES // 4 if version == 1 else KILL_FILES - 1)
        watch = start_watch(env, folder)
        wait_until(
            lambda v=version, t=target, w=watch: count_at(settings, shas, v) >= t or _synced(w),
            f"round {version}: {target} files rewritten (seed {seed})",
            deadline_s=60.0,
        )
        watch.kill()
        partial.append(check_consistent(settings, shas, texts))
    assert any(0 < done < KILL_FILES for done in partial), f"no kill landed mid-sync: {partial} (seed {seed})"
    embed_server.set(delay_s=0.0)
    watch = start_watch(env, folder)
    watch.wait_log("first sync done", deadline_s=60.0)
    assert check_consistent(settings, shas, texts) == KILL_FILES, f"seed {seed}"
    with SqliteReader.open(settings.db_path, settings.folder) as store:
        assert store.counts()[0] == KILL_FILES and store.is_complete()
    assert watch.stop()[0] == 0


def _synced(watch: Watch) -> bool:
    return any(r.get("event") == "first sync done" for r in watch.logs())


def count_at(settings: Settings, shas: dict[str, dict[str, int]], version: int) -> int:
    if not settings.db_path.exists():
        return 0
    with SqliteReader.open(settings.db_path, settings.folder) as store:
        return sum(1 for path, state in store.files().items() if shas[path].get(state.sha256) == version)


# --- kernel queue overflow (R-W3) ---

INOTIFY_QUEUE_PROC = Path("/proc/sys/fs/inotify/max_queued_events")
EVENTS_PER_CHURN = 4  # CREATE, MODIFY, CLOSE_WRITE, DELETE of a file with a new name: nothing to coalesce
CHURN_MARGIN = 1000


def indexed(settings: Settings) -> dict[str, str]:
    """path -> the file's chunk texts joined, as the index holds them now (read-only, like a reader)."""
    if not settings.db_path.exists():
        return {}
    with SqliteReader.open(settings.db_path, settings.folder) as store:
        return {path: "\n".join(c.text for c in store.chunks_for_path(path)) for path in store.files()}


def wait_stopped(pid: int) -> None:
    """Until the kernel shows the process stopped (SIGSTOP is delivered asynchronously)."""

    def state() -> bool:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] in "Tt"

    wait_until(state, f"pid {pid} stopped")


def churn(folder: Path, cycles: int) -> None:
    """Create, write and delete `cycles` differently named files (.txt: never indexed) as fast as possible."""
    for n in range(cycles):
        path = os.path.join(folder, f"churn-{n}.txt")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, b"x")
        os.close(fd)
        os.unlink(path)


@pytest.mark.parametrize("backend", ["inotify", "watchdog"])
def test_queue_overflow_rebuilds_watches_and_resyncs_what_changed_meanwhile(
    folder: Path, data: Path, start_watch: Callable[[dict[str, str], Path], Watch], backend: str
) -> None:
    """While the watch is stopped (SIGSTOP) nothing reads its inotify queue: churn fills it past
    fs.inotify.max_queued_events, so the edits made after it are lost as events and only a resync can find them."""
    write(folder / "gone.md", "# Gone\n\ngooseberries\n")
    env = base_env(data, SCREE_WATCHER=backend, SCREE_LOG_LEVEL="debug")
    settings = settings_for(env, folder)
    watch = start_watch(env, folder)
    watch.wait_log("first sync done")
    assert set(indexed(settings)) == {"a.md", "docs/b.md", "gone.md"}
    os.kill(watch.pid, signal.SIGSTOP)
    try:
        wait_stopped(watch.pid)
        churn(folder, max(int(INOTIFY_QUEUE_PROC.read_text()), 16384) // EVENTS_PER_CHURN + CHURN_MARGIN)
        write(folder / "a.md", "# Alpha\n\napples and overflowing olives\n")  # edited
        write(folder / "new.md", "# New\n\nnectarines\n")  # created
        (folder / "gone.md").unlink()  # deleted
        write(folder / "docs" / "b.md", "# Beta\n\nbananas and buried blackberries\n")  # in a subfolder
        write(folder / "fresh" / "deeper" / "f.md", "# Fresh\n\nfigs\n")  # in folders made during the overflow
    finally:
        os.kill(watch.pid, signal.SIGCONT)
    wait_until(
        lambda: (
            (index := indexed(settings)).keys() == {"a.md", "docs/b.md", "new.md", "fresh/deeper/f.md"}
            and "olives" in index["a.md"]
            and "blackberries" in index["docs/b.md"]
        ),
        "every change made during the overflow indexed by the resync",
        deadline_s=30.0,
    )
    events = [r for r in watch.logs() if r.get("event") == "file events"]
    assert any(r.get("rules") for r in events), "the overflow was taken as a reason to rebuild and resync"
    named = {p for r in events for p in r.get("paths", [])}
    assert not named & {"a.md", "new.md", "gone.md", "docs/b.md", "fresh/deeper/f.md"}, "those events were lost"
    write(folder / "fresh" / "deeper" / "f.md", "# Fresh\n\nfigs and feijoas\n")  # the rebuilt watches see it
    wait_until(lambda: "feijoas" in indexed(settings).get("fresh/deeper/f.md", ""), "an edit in the new folder")
    assert watch.stop()[0] == 0


def test_a_killed_watch_takes_its_first_sync_child_with_it_and_the_child_names_watch(
    tmp_path: Path, embed_server: EmbedServer, start_watch: Callable[[dict[str, str], Path], Watch]
) -> None:
    folder = tmp_path / "notes"
    for n in range(200):
        write(folder / f"n{n}.md", f"# Note {n}\n\nslow words {n}\n")
    embed_server.set(delay_s=0.5)  # 16 chunks a request: the first sync runs for seconds
    env = api_env(tmp_path / "data", embed_server, SCREE_BATCH_SIZE="16", SCREE_LOG_LEVEL="debug")
    watch = start_watch(env, folder)
    child = watch.wait_log("writer child started", role="writer", mode="sync")["pid"]
    watch.proc.kill()  # SIGKILL: the child sees its parent's pipe close
    wait_until(
        lambda: any(r.get("event") == "scree watch went away; stopping the writer" for r in watch.logs()),
        "the child's log that scree watch went away",
        DEADLINE_S,
    )
    assert not any("serve went away" in str(r.get("event")) for r in watch.logs())
    wait_until(lambda: not _alive(child), "the child exited", DEADLINE_S)
    assert lock_holder(settings_for(env, folder).lock_path) is None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # re-parented to init, which reaps it once it exits
    except ProcessLookupError:
        return False
    return True
