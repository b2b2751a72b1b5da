"""A writer whose stderr nobody reads (issue 34): serve's stderr is a pipe to the MCP client, and a client that stops
reading it once froze the writer child's threads at their next log line, so an edit after the pipe filled was never
indexed. A real `scree serve`, its stderr a real pipe that the test fills and never reads, real file edits.

The scenario is run_undrained (bench.faults counts its figure too): it returns how many of the writer's threads are
blocked writing a full pipe, and whether the edits made after the pipe filled were indexed. At debug level, as a
user chasing a problem runs it, the writer logs every edit; at info, a warning (a file it cannot read) does."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from fault_helpers import hash_env
from test_faults_writer import blocked_on_pipes
from test_supervisor import kill_tree, make_folder, writer_pids

from scree.config import load_settings
from scree.stderr_pipe import MAX_PENDING_BYTES, NonBlockingStderr
from scree.store import SqliteReader

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: a pipe reopened, wchan")

EDITS = 12
START_S = 60.0  # serve's writer starts after the handshake grace and syncs five notes
EDIT_S = 15.0  # an edit is indexed within the debounce and a sync; on a busy machine, still far under this


@dataclass(frozen=True)
class Undrained:
    indexed_after_full: bool  # every edit made after the pipe filled (each logged by the writer) was indexed
    blocked_threads: int  # the writer's threads sleeping in a write to the full pipe
    problem: str = ""


def fill(fd: int) -> int:
    """Fill the pipe `fd` is an end of, through an open file of its own (non-blocking: the flag stays off the
    descriptor serve writes through); bytes written."""
    out = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
    written = 0
    try:
        for size in (4096, 1):
            while True:
                try:
                    written += os.write(out, b"x" * size)
                except BlockingIOError:
                    break
    finally:
        os.close(out)
    return written


def indexed(db: Path, folder: Path, path: str) -> bool:
    if not db.exists():
        return False
    with SqliteReader.open(db, folder) as store:
        return bool(store.chunks_for_path(path))


def wait(condition: object, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@contextmanager
def serve_unread(folder: Path, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`scree serve` over `folder` whose stderr is a pipe nobody reads (its read end, for the test to fill)."""
    read_end, write_end = os.pipe()
    serve = subprocess.Popen(
        [sys.executable, "-m", "scree.cli", "serve", "--notes", str(folder)],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=write_end,
    )  # fmt: skip
    os.close(write_end)
    try:
        yield serve, read_end
    finally:
        kill_tree(serve.pid)
        serve.communicate(timeout=30)
        os.close(read_end)


def run_undrained(root: Path, env: dict[str, str]) -> Undrained:
    """serve with its stderr a pipe nobody reads: fill it, make two edits, and see what the writer did."""
    folder = make_folder(root)
    db = load_settings(env, notes=str(folder)).db_path
    with serve_unread(folder, env) as (serve, read_end):
        if not wait(lambda: writer_pids(serve.pid) and indexed(db, folder, "n1.md"), START_S):
            return Undrained(False, 0, "serve's writer never indexed the folder")
        (folder / "zero.md").write_text("# Zero\n\nan edit before the pipe fills: the watching writer is up\n")
        if not wait(lambda: indexed(db, folder, "zero.md"), START_S):
            return Undrained(False, 0, "serve's watching writer never indexed an edit")
        writer = writer_pids(serve.pid)[0]
        fill(read_end)
        for number in range(EDITS):  # each edit logs a few lines: the room a full pipe may still have runs out
            name = f"after{number}.md"
            (folder / name).write_text(f"# After {number}\n\nedit {number} after stderr filled, logged by the writer\n")
            if not wait(lambda name=name: indexed(db, folder, name), EDIT_S):  # type: ignore[misc]
                return Undrained(False, blocked_on_pipes(writer), f"edit {number} after the pipe filled: not indexed")
        return Undrained(True, blocked_on_pipes(writer))


def test_a_writer_whose_stderr_is_never_read_goes_on_indexing(tmp_path: Path) -> None:
    found = run_undrained(tmp_path, hash_env(tmp_path / "data", SCREE_LOG_LEVEL="debug"))
    assert not found.problem, found.problem
    assert found.blocked_threads == 0, f"{found.blocked_threads} writer threads blocked writing the full stderr pipe"
    assert found.indexed_after_full, "an edit made after stderr filled was never indexed"


def test_serve_whose_stderr_is_never_read_still_restarts_a_killed_writer(tmp_path: Path) -> None:
    """serve's own threads log to the same pipe: its supervisor says "writer exited" and "restarting it" when the
    writer dies. With the pipe full and nobody reading it, that line must not stop the supervisor: a SIGKILLed
    writer is replaced by a new one."""
    env = hash_env(tmp_path / "data", SCREE_LOG_LEVEL="debug")
    with serve_unread(make_folder(tmp_path), env) as (serve, read_end):
        assert wait(lambda: writer_pids(serve.pid), START_S), "serve never started its writer"
        first = writer_pids(serve.pid)[0]
        fill(read_end)
        os.kill(first, signal.SIGKILL)
        assert wait(lambda: any(pid != first for pid in writer_pids(serve.pid)), START_S), (
            "serve's supervisor never replaced its killed writer while its stderr was full"
        )


def test_lines_a_full_pipe_cannot_take_are_counted_and_said_once_it_drains() -> None:
    """NonBlockingStderr over a real pipe that is full: write() returns at once, what the buffer cannot hold is
    counted, and once the pipe is read the lines it kept come out whole, then one line says how many were dropped."""
    read_end, write_end = os.pipe()
    try:
        stream = NonBlockingStderr(write_end)
        fill(read_end)
        line = "a log line of one hundred bytes " + "." * 67 + "\n"
        for _ in range(MAX_PENDING_BYTES // len(line) + 50):
            stream.write(line)
        dropped = stream.dropped
        assert dropped >= 49
        os.set_blocking(read_end, False)
        received = b""
        end = time.monotonic() + 10.0
        notice = f"{dropped} log lines dropped: stderr was not read".encode()
        while notice not in received and time.monotonic() < end:
            try:
                received += os.read(read_end, 1 << 16)
            except BlockingIOError:
                time.sleep(0.01)
        assert notice in received
        kept = received.replace(b"x", b"").split(b"\n")
        assert all(piece in (line.encode().rstrip(), notice, b"") for piece in kept)
        assert stream.drain(5.0) and stream.dropped == 0
    finally:
        os.close(read_end)
        os.close(write_end)


def test_drain_waits_for_a_slow_reader_as_long_as_it_reads() -> None:
    """At exit a process drains its queued lines; the last one (often why it ends) is behind the rest. A reader that
    is slow but reading gets every line, the last included, however long the backlog takes in all; only a pipe that
    takes nothing for the whole `timeout` ends the wait."""
    read_end, write_end = os.pipe()
    received = bytearray()
    stop = threading.Event()

    def read_slowly() -> None:
        while b"the last line" not in received and not stop.wait(0.02):
            with contextlib.suppress(BlockingIOError):
                received.extend(os.read(read_end, 4096))

    reader = threading.Thread(target=read_slowly, daemon=True)
    try:
        stream = NonBlockingStderr(write_end)
        fill(read_end)
        line = "a queued log line of about sixty bytes, waiting its turn....\n"
        for _ in range(MAX_PENDING_BYTES // len(line) - 10):
            stream.write(line)
        stream.write("the last line: why the process ends\n")
        os.set_blocking(read_end, False)
        reader.start()  # ~320 KB at 4 KB per 20 ms: well over a second, each read within the timeout
        assert stream.drain(0.5), "drain gave up on a reader that was still reading"
        reader.join(10.0)
        assert b"the last line: why the process ends" in received
    finally:
        stop.set()
        if reader.is_alive():
            reader.join(5.0)
        os.close(write_end)
        os.close(read_end)
