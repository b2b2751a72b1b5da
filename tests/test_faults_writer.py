"""Faults of the fourth attack on the writer (issue 34): hostile frames on the query socket, and a writer that outlives
its serve. Real `scree watch` and `scree serve` processes, a real Unix socket, real signals.

- a malformed frame (2,000 nested `[` in the header, a frame cut short, garbage) ends that connection only: the
  writer's query thread answers the next real query, and `scree status` says the socket answers;
- a serve SIGKILLed while its writer child is blocked writing its full up-queue (nobody reads it) takes the child with
  it within R-P2's 5 s, and `scree status --check` never calls a dead lock holder healthy.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from cli_helpers import main_here, wait_until
from fault_helpers import hash_env, scree
from test_shared_model import local_env, model  # noqa: F401 - the fixture
from test_supervisor import gone, make_folder

from scree.config import load_settings
from scree.embedders import query_wire

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Unix sockets, /proc")

DEADLINE_S = 60.0
REPLY_S = 10.0
HOSTILE_S = 3.0  # a frame the writer cannot read is dropped at once; silence this long is a dead thread


@pytest.fixture
def watch(tmp_path: Path, model: Path) -> Iterator[tuple[Path, dict[str, str], subprocess.Popen[str]]]:  # noqa: F811
    folder = make_folder(tmp_path)
    env = local_env(tmp_path / "data", model)
    proc = subprocess.Popen(
        [sys.executable, "-m", "scree.cli", "watch", "--notes", str(folder)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield folder, env, proc
    finally:
        proc.kill()
        proc.communicate(timeout=10)  # reaps it and closes its stderr


def ask(path: Path, frame: bytes, timeout: float = REPLY_S) -> query_wire.Frame | str:
    """Send `frame` on the query socket: the reply frame, or "dropped" (the writer closed the connection) or "silent"
    (nobody answered within `timeout`: the query thread is gone)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        with query_wire.address(str(path)) as where:
            sock.connect(where)
        try:
            sock.sendall(frame)
            sock.shutdown(socket.SHUT_WR)
            return query_wire.read_frame(sock)
        except TimeoutError:
            return "silent"
        except (query_wire.WireError, ConnectionResetError, BrokenPipeError):
            return "dropped"


def socket_pid(path: Path) -> int | None:
    """The pid of the process listening at `path` (SO_PEERCRED), or None while nobody does."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, query_wire.address(str(path)) as where:
            sock.connect(where)
            return int(struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0])
    except OSError:
        return None


def hostile_frames() -> list[bytes]:
    nested = b"[" * 2000  # under MAX_HEADER: json.loads raises RecursionError
    deep_object = b'{"a":' * 1500
    return [
        struct.pack(">II", len(nested), 0) + nested,
        struct.pack(">II", len(deep_object), 0) + deep_object,
        struct.pack(">II", 4096, 10) + b'{"v":1',  # cut short
        b"\xff" * 8 + b"garbage",  # lengths far over the caps
        struct.pack(">II", 2, 3) + b"[]" + b"abc",  # JSON, not an object
        struct.pack(">II", 11, 4) + b'{"v":1e999}' + b"\xff\xfe\xfd\xfc",
    ]


def status_json(folder: Path, env: dict[str, str]) -> dict[str, object]:
    """`scree status --json` run in this process (main_here): polled while the watch under test starts."""
    proc = main_here("status", "--json", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_hostile_frames_end_their_connection_only_and_the_query_thread_answers_on(
    watch: tuple[Path, dict[str, str], subprocess.Popen[str]],
) -> None:
    folder, env, proc = watch
    settings = load_settings(env, notes=str(folder))
    path = settings.query_socket_path
    status = wait_until(
        lambda: (s := status_json(folder, env))["first_sync_done"] and path.is_socket() and s, "first sync", DEADLINE_S
    )
    identity, dims = status["model"], status["dimensions"]
    assert isinstance(identity, str) and isinstance(dims, int)
    good = query_wire.request(identity, dims, "compost in the garden")
    # `scree watch` itself listens once its first-sync child has handed over
    wait_until(lambda: socket_pid(path) == proc.pid, "the watching writer listens", DEADLINE_S)
    first = ask(path, good)
    assert isinstance(first, query_wire.Frame) and len(query_wire.vector_of(first, identity, dims)) == dims * 4
    answers = [ask(path, frame, timeout=HOSTILE_S) for frame in hostile_frames()]
    assert answers == ["dropped"] * len(answers), answers  # each ends its own connection, at once
    after = ask(path, good)
    assert isinstance(after, query_wire.Frame), f"the writer's query thread no longer answers: {after}"
    assert len(query_wire.vector_of(after, identity, dims)) == dims * 4
    assert status_json(folder, env)["query_socket"] == "answering"
    assert proc.poll() is None
    os.kill(proc.pid, signal.SIGSTOP)  # a writer whose query thread cannot answer: `scree status` says so
    try:
        assert status_json(folder, env)["query_socket"] == "not answering"
    finally:
        os.kill(proc.pid, signal.SIGCONT)


# --- a writer that outlives its serve (R-P2) ---

# A parent that spawns a writer child the way serve's supervisor does, then stops reading its up-queue and fills both
# the queue's pipe and the stderr pipe it shares with the child (the test never reads it): every write the child makes
# to either blocks, as a serve SIGKILLed mid-start left one, and the child must still go when this parent is killed.
BLOCKED_PARENT = """
import os, sys, threading, time
from scree.config import load_settings
from scree.index.folder import prepare_index_dir
from scree.index.lock import WriterLock
from scree.protocol import WATCH
from scree.writer_proc.child import WriterChild

settings = load_settings(os.environ, notes=sys.argv[1])
prepare_index_dir(settings.index_dir, custom_db=False)
lock = WriterLock(settings.lock_path)
assert lock.try_acquire()
child = WriterChild.start(settings, WATCH, lock.fileno())
child._up.put(b"x" * (1 << 20))  # this side's feeder fills the up-queue's pipe; nobody ever reads it
threading.Thread(target=os.write, args=(2, b"y" * (1 << 20)), daemon=True).start()  # and the shared stderr
print(child.pid, flush=True)
time.sleep(3600)
"""
ORPHAN_BAR_S = 5.0  # R-P2: a writer child exits within 5 s of its parent's death


def blocked_on_pipes(pid: int) -> int:
    """How many threads of `pid` are blocked writing a full pipe (wchan pipe_write, anon_pipe_write)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0
    blocked = 0
    for task in tasks:
        try:
            blocked += "pipe_write" in (task / "wchan").read_text()
        except OSError:
            continue
    return blocked


def test_a_writer_whose_pipes_are_full_still_exits_within_5_s_of_its_parent_being_killed(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    env = hash_env(tmp_path / "data")
    parent = subprocess.Popen(
        [sys.executable, "-c", BLOCKED_PARENT, str(folder)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,  # never read: the child's logging blocks once it is full
        text=True,
    )
    child: int | None = None
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        wait_until(lambda: blocked_on_pipes(parent.pid) >= 2, "the parent's writes block on full pipes", DEADLINE_S)
        wait_until(lambda: len(psutil.Process(child).threads()) >= 3, "the writer's threads run", DEADLINE_S)
        parent.kill()
        parent.wait(10)
        killed_at = time.monotonic()
        end = killed_at + ORPHAN_BAR_S
        while not gone(child) and time.monotonic() < end:
            time.sleep(0.05)
        assert gone(child), f"the writer {child} outlived its parent by more than {ORPHAN_BAR_S} s"
    finally:
        parent.kill()
        if child is not None and not gone(child):
            os.kill(child, signal.SIGKILL)
        parent.communicate(timeout=10)  # reaps it and closes its pipes


HOLD_LOCK = """
import os, subprocess, sys
from scree.config import load_settings
from scree.index.folder import prepare_index_dir
from scree.index.lock import WriterLock

settings = load_settings(os.environ, notes=sys.argv[1])
prepare_index_dir(settings.index_dir, custom_db=False)
lock = WriterLock(settings.lock_path)
assert lock.try_acquire()
# a process that is not scree keeps the lock (the same open file) after this one, whose pid the file names, exits
holder = subprocess.Popen(
    ["sleep", "120"], pass_fds=[lock.fileno()], start_new_session=True,
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
print(holder.pid, flush=True)
os._exit(0)
"""


def test_status_check_never_calls_a_dead_or_foreign_lock_holder_healthy(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    env = hash_env(tmp_path / "data")
    built = scree(env, "reindex", "--notes", str(folder))
    assert built.returncode == 0, built.stderr
    done = subprocess.run(
        [sys.executable, "-c", HOLD_LOCK, str(folder)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    holder = int(done.stdout)
    try:
        lock = load_settings(env, notes=str(folder)).lock_path
        dead = int(lock.read_text().split()[0])
        assert dead != holder and gone(dead)
        check = scree(env, "status", "--check", "--notes", str(folder))
        assert check.returncode == 1, check.stdout
        assert f"pid {dead}" in check.stderr and "not running" in check.stderr, check.stderr
        lock.write_text(f"{holder}\n")  # a live pid, but not a scree process
        check = scree(env, "status", "--check", "--notes", str(folder))
        assert check.returncode == 1, check.stdout
        assert f"pid {holder}" in check.stderr and "not scree" in check.stderr, check.stderr
    finally:
        os.kill(holder, signal.SIGKILL)
