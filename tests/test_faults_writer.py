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
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run_scree, wait_until
from test_shared_model import local_env, model  # noqa: F401 - the fixture
from test_supervisor import make_folder

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
        proc.wait(10)


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
    proc = run_scree("status", "--json", "--notes", str(folder), env=env)
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
