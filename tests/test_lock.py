"""writer.lock across real processes: exclusion, the holder's pid, takeover after SIGKILL, release, mode 0600 (R-W1)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scree.index.lock import WriterLock, lock_holder

DEADLINE_S = 10.0

# Holds the lock until stdin closes; says "held <pid>" or "busy <pid of holder>" on stdout first.
HOLDER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from scree.index.lock import WriterLock
    lock = WriterLock(Path(sys.argv[1]))
    if lock.try_acquire():
        if len(sys.argv) > 2:  # a child that inherits every inheritable descriptor and waits on our stdin
            import subprocess
            child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], close_fds=False)
            print("held", os.getpid(), child.pid, flush=True)
        else:
            print("held", os.getpid(), flush=True)
        sys.stdin.read()
        lock.release()
    else:
        print("busy", lock.holder_pid(), flush=True)
    """
)


def wait_for(condition: Callable[[], bool], deadline_s: float = DEADLINE_S) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def start_holder(lock_path: Path, spawn_child: bool = False) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path), *(["spawn"] if spawn_child else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=DEADLINE_S)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


@pytest.fixture
def lock_path(tmp_path: Path) -> Path:
    return tmp_path / "writer.lock"


@pytest.fixture
def holder(lock_path: Path) -> Iterator[subprocess.Popen[str]]:
    proc, line = start_holder(lock_path)
    try:
        assert line == f"held {proc.pid}"
        yield proc
    finally:
        stop(proc)


def test_second_process_cannot_acquire_and_reads_the_holders_pid(
    lock_path: Path, holder: subprocess.Popen[str]
) -> None:
    lock = WriterLock(lock_path)
    assert lock.try_acquire() is False
    assert lock.held is False
    assert lock.holder_pid() == holder.pid
    assert lock_holder(lock_path) == holder.pid

    other, line = start_holder(lock_path)
    stop(other)
    assert line == f"busy {holder.pid}"


def test_sigkilled_holder_is_taken_over(lock_path: Path, holder: subprocess.Popen[str]) -> None:
    lock = WriterLock(lock_path)
    assert lock.try_acquire() is False
    os.kill(holder.pid, signal.SIGKILL)
    try:
        assert wait_for(lock.try_acquire), "the lock of a killed holder was not freed"
        assert lock.held
        assert lock.holder_pid() == os.getpid()
    finally:
        lock.release()


def test_stale_pid_of_a_dead_holder_is_not_reported_as_holding(lock_path: Path) -> None:
    lock_path.write_text("999999\n")
    assert lock_holder(lock_path) is None
    assert WriterLock(lock_path).holder_pid() == 999999


def test_release_then_reacquire(lock_path: Path) -> None:
    first = WriterLock(lock_path)
    assert first.try_acquire()
    assert first.try_acquire(), "acquiring a lock we hold is a no-op"
    assert lock_holder(lock_path) == os.getpid()

    proc, line = start_holder(lock_path)
    stop(proc)
    assert line == f"busy {os.getpid()}"

    first.release()
    first.release()
    assert not first.held
    assert lock_holder(lock_path) is None
    assert first.holder_pid() is None, "release clears the pid"

    proc, line = start_holder(lock_path)
    try:
        assert line == f"held {proc.pid}"
        assert not WriterLock(lock_path).try_acquire()
    finally:
        stop(proc)

    again = WriterLock(lock_path)
    assert again.try_acquire() and again.held
    assert again.holder_pid() == os.getpid()
    again.release()
    assert not again.held


def test_same_process_second_lock_conflicts(lock_path: Path) -> None:
    first = WriterLock(lock_path)
    assert first.try_acquire()
    assert WriterLock(lock_path).try_acquire() is False
    first.release()


def test_child_spawned_after_acquire_does_not_keep_the_lock(lock_path: Path) -> None:
    proc, line = start_holder(lock_path, spawn_child=True)
    try:
        word, holder_pid, child_pid = line.split()
        assert (word, int(holder_pid)) == ("held", proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=DEADLINE_S)
        os.kill(int(child_pid), 0)  # the child outlives its parent
        lock = WriterLock(lock_path)
        assert wait_for(lock.try_acquire), "a child spawned by the holder kept the lock alive"
        lock.release()
    finally:
        stop(proc)  # closing our end of stdin lets the child exit


def test_lock_file_mode_is_0600(lock_path: Path) -> None:
    lock = WriterLock(lock_path)
    old_umask = os.umask(0)
    try:
        assert lock.try_acquire()
        assert stat.S_IMODE(lock_path.stat().st_mode) == 0o600
        lock.release()
    finally:
        os.umask(old_umask)

    lock_path.chmod(0o644)
    assert lock.try_acquire()
    assert stat.S_IMODE(lock_path.stat().st_mode) == 0o600
    lock.release()


def test_garbage_or_missing_file_names_no_pid(tmp_path: Path) -> None:
    missing = tmp_path / "absent.lock"
    assert lock_holder(missing) is None
    assert WriterLock(missing).holder_pid() is None
    garbage = tmp_path / "garbage.lock"
    garbage.write_bytes(b"\xffnot a pid\n")
    assert WriterLock(garbage).holder_pid() is None
    garbage.write_text("-5\n")
    assert WriterLock(garbage).holder_pid() is None


def test_lock_retry_tries_when_due_announces_each_new_holder_once_and_takes_the_lock_once_free(
    tmp_path: Path,
) -> None:
    from scree.index.lock import LockRetry

    path = tmp_path / "writer.lock"
    holder = WriterLock(path)
    assert holder.try_acquire()
    prepared: list[int] = []
    seen: list[int | None] = []
    retry = LockRetry(WriterLock(path), 5.0, lambda: prepared.append(1), seen.append)
    t0 = time.monotonic() - 100.0  # in the past, so wait() below finds a try due
    assert not retry.try_take(t0)
    assert not retry.try_take(t0 + 4.9)  # not due yet: no try at all
    assert not retry.try_take(t0 + 5.0)
    assert (len(prepared), seen) == (2, [os.getpid()])  # one announcement per holder, a preparation per try
    holder.release()
    assert not retry.try_take(t0 + 9.0)
    assert retry.try_take(t0 + 10.0) and retry.lock.held
    retry.lock.release()
    assert retry.wait(lambda: False) and retry.lock.held  # free now: taken at the first try
    retry.lock.release()
    assert not LockRetry(WriterLock(path), 5.0, lambda: None, seen.append).wait(lambda: True)


def test_a_role_written_after_the_pid_is_read_back_and_the_pid_still_parses(lock_path: Path) -> None:
    holder = WriterLock(lock_path, role="reindex")
    assert holder.try_acquire()
    assert lock_path.read_text() == f"{os.getpid()}\nreindex\n"
    other = WriterLock(lock_path)
    assert (other.holder_pid(), other.holder_role(), lock_holder(lock_path)) == (os.getpid(), "reindex", os.getpid())
    holder.release()
    plain = WriterLock(lock_path)
    assert plain.try_acquire() and lock_path.read_text() == f"{os.getpid()}\n" and plain.holder_role() is None
    plain.release()
