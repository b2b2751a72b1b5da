"""Sessions share one offline model (issue 24): real `scree serve` processes over stdio, whose readers have the
index's writer embed their search queries over the query socket (scree/embedders/remote_query.py,
scree/writer_proc/query_server.py).

Covers five serves in one folder each answering a semantic search while only the writer maps the model, a writer
SIGKILLed while readers query (every query answered, by a retry, the restarted writer or a local load), a process
of another user refused at both ends of the socket (SO_PEERCRED, real processes that drop to `nobody`), and the API
embedder's path unchanged (no socket; the reader calls the API itself).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from embed_server import EmbedServer
from test_supervisor import (
    Serve,
    make_folder,
    scree_env,
    start_serve,
    wait_until,
    writer_pids,
)

from scree.config import load_settings
from scree.embedders.model_install import MODEL_FILE, check_model
from scree.index.lock import WriterLock, lock_holder
from scree.paths import data_home

__all__ = ["start_serve"]  # the fixture, shared with test_supervisor

LOCAL_LOADED = "loading the offline model in this reader"
QUERIES = ("compost in the garden", "gardens and soil", "word2 about compost", "what rots in a heap")


@pytest.fixture(scope="module")
def model(request: pytest.FixtureRequest) -> Path:
    """The offline model: the machine's installed copy when there is one, else the suite's installer fixture."""
    mine = data_home(os.environ) / "models" / "all-MiniLM-L6-v2"
    try:
        check_model(mine)
        return mine
    except Exception:
        installed: Path = request.getfixturevalue("installed")
        return installed


def local_env(data: Path, model: Path, **extra: str) -> dict[str, str]:
    return scree_env(data, SCREE_EMBEDDER="local", SCREE_LOCAL_MODEL_DIR=str(model), **extra)


def semantic(serve: Serve, query: str) -> str:
    text, is_error = serve.call("search_docs", {"query": query, "mode": "semantic", "k": 3})
    assert not is_error, text
    assert "semantic search is off" not in text, text
    assert 'path="n' in text, text  # a hit from the folder
    return text


def maps_model(pid: int) -> bool:
    try:
        return MODEL_FILE in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def loaded_locally(serve: Serve) -> bool:
    return any(record.get("event") == LOCAL_LOADED for record in serve.logs())


def the_writer(serves: list[Serve]) -> int:
    """The pid of the watching writer child, once one serve has it."""
    return int(wait_until(lambda: next((p for s in serves for p in writer_pids(s.pid)), None), "a writer child"))


needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps")


@needs_linux
def test_five_sessions_answer_semantic_searches_and_only_the_writer_holds_the_model(
    tmp_path: Path, model: Path, start_serve: Callable[..., Serve]
) -> None:
    folder = make_folder(tmp_path)
    env = local_env(tmp_path / "data", model)
    serves = [start_serve(folder, env) for _ in range(5)]
    for serve in serves:
        serve.initialize()
    holder = next(
        s
        for s in serves
        if s.pid == wait_until(lambda: lock_holder(load_settings(env, notes=str(folder)).lock_path), "a lock holder")
    )
    writer = holder.wait_watching()
    for n, serve in enumerate(serves):
        semantic(serve, QUERIES[n % len(QUERIES)])
    for serve in serves:
        assert not maps_model(serve.pid), f"reader {serve.pid} loaded its own model: {serve.tail()}"
        assert not loaded_locally(serve), serve.tail()
    assert maps_model(writer)  # the one copy, in the writer child
    socket_path = load_settings(env, notes=str(folder)).query_socket_path
    assert socket_path.is_socket() and socket_path.stat().st_mode & 0o777 == 0o600
    assert socket_path.parent.stat().st_mode & 0o777 == 0o700


@needs_linux
def test_a_writer_killed_while_readers_query_costs_no_query_an_answer(
    tmp_path: Path, model: Path, start_serve: Callable[..., Serve]
) -> None:
    folder = make_folder(tmp_path)
    env = local_env(tmp_path / "data", model)
    serves = [start_serve(folder, env) for _ in range(3)]
    for serve in serves:
        serve.initialize()
    writer = the_writer(serves)
    holder = next(s for s in serves if writer in s.writers())
    writer = holder.wait_watching()
    answered = [0] * len(serves)
    killed = threading.Event()
    failures: list[BaseException] = []

    def keep_asking(index: int) -> None:
        # every call must come back within the client's timeout (Serve.request fails the test otherwise)
        try:
            n = 0
            while not killed.is_set() or n < 8:
                semantic(serves[index], QUERIES[n % len(QUERIES)])
                answered[index] += 1
                n = n + 1 if killed.is_set() else 0
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            failures.append(exc)

    threads = [threading.Thread(target=keep_asking, args=(i,), daemon=True) for i in range(len(serves))]
    for thread in threads:
        thread.start()
    wait_until(lambda: all(answered), "every reader answered a query before the kill")
    os.kill(writer, signal.SIGKILL)
    killed.set()
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive(), "a reader's queries hung"
    assert not failures, failures[0]
    # the supervisor restarted the writer, and the readers go back to it
    wait_until(lambda: holder.writers() and holder.writers()[0] != writer, "a restarted writer")
    for serve in serves:
        semantic(serve, "compost again")


def run_as_nobody(code: str, *args: str) -> subprocess.Popen[str]:
    """Python `code` in a process that drops to the `nobody` user (the test runs as root) once it has imported what
    it needs: nobody cannot read this interpreter's library under /root."""
    nobody = pwd.getpwnam("nobody")
    prelude = (
        "import os, sys, socket, json, struct\nfrom scree.embedders import query_wire\n"
        f"os.setgid({nobody.pw_gid}); os.setgroups([]); os.setuid({nobody.pw_uid})\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", prelude + code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder `nobody` can reach, outside pytest's private tmp (its parents are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="scree-s24-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


CONNECT_AND_ASK = """
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(10)
sock.connect(sys.argv[1])
try:
    sock.sendall(query_wire.request("local:all-MiniLM-L6-v2", 384, "compost"))
    query_wire.read_frame(sock)
    print("answered")
except (query_wire.WireError, OSError) as exc:
    print("refused", type(exc).__name__)
"""

FAKE_WRITER = """
path = sys.argv[1]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o666)
server.listen(4)
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    with conn:
        try:
            query_wire.read_frame(conn)
            conn.sendall(query_wire.reply("local:all-MiniLM-L6-v2", 384, bytes(384 * 4)))
        except (query_wire.WireError, OSError):
            pass
"""


@needs_linux
@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="drops to another user: needs root")
def test_a_process_of_another_user_is_refused_at_both_ends_of_the_socket(
    tmp_path: Path, model: Path, open_dir: Path, start_serve: Callable[..., Serve]
) -> None:
    folder = make_folder(tmp_path)
    db = open_dir / "index.db"
    env = local_env(tmp_path / "data", model)
    # The writer's end: a socket opened to everyone on purpose, so only the SO_PEERCRED check stands in the way.
    serve = start_serve(folder, env, "--db", str(db))
    serve.initialize()
    serve.wait_watching()
    socket_path = load_settings(env, notes=str(folder), db=str(db)).query_socket_path
    wait_until(socket_path.is_socket, "the writer's query socket")
    socket_path.chmod(0o666)
    asker = run_as_nobody(CONNECT_AND_ASK, str(socket_path))
    out, err = asker.communicate(timeout=30)
    assert out.startswith("refused"), (out, err)
    wait_until(
        lambda: any("another user" in str(r.get("event")) for r in serve.logs()), "the writer logged the refusal"
    )
    semantic(serve, "compost")  # its own reader is still answered
    serve.close()

    # The reader's end: a socket where the writer's should be, served by `nobody`; the reader never takes its vector.
    lock = WriterLock(db.with_name(db.name + ".lock"))
    assert lock.try_acquire()  # no scree writer will bind the socket: the lock is held, so a reader expects one
    try:
        socket_path.unlink(missing_ok=True)
        fake = run_as_nobody(FAKE_WRITER, str(socket_path))
        try:
            assert fake.stdout is not None and fake.stdout.readline().strip() == "listening", fake.stderr
            reader = start_serve(folder, env, "--db", str(db))
            reader.initialize()
            text = semantic(reader, "compost in the garden")
            assert "n" in text
            records = reader.logs()
            assert any(r.get("event") == LOCAL_LOADED for r in records), reader.tail()
            assert any("another user" in str(r.get("reason")) for r in records), reader.tail()
        finally:
            fake.kill()
            fake.communicate(timeout=10)
    finally:
        lock.release()


def test_the_api_embedder_path_is_unchanged(
    tmp_path: Path, embed_server: EmbedServer, start_serve: Callable[..., Serve]
) -> None:
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="api", SCREE_API_BASE=embed_server.url, SCREE_API_KEY="test-key")
    serves = [start_serve(folder, env) for _ in range(2)]
    for serve in serves:
        serve.initialize()
    writer = the_writer(serves)
    holder = next(s for s in serves if writer in s.writers())
    holder.wait_watching()
    other = next(s for s in serves if s is not holder)
    before = embed_server.request_count()
    text, is_error = other.call("search_docs", {"query": "compost", "mode": "semantic", "k": 3})
    assert not is_error, text
    assert embed_server.request_count() == before + 1  # the reader asked the API itself
    assert not load_settings(env, notes=str(folder)).query_socket_path.exists()
