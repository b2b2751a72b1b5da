"""`scree serve`'s supervised writer end to end: real serve processes over stdio, real writer children, real signals.

Covers the handshake and search answering during a first sync (with its note) and the fresh watching writer after it
(R-P1, R-P3, R-M5, R-M8), a writer child that imports no MCP code, a writer killed, frozen or over its memory limit
being restarted while search says `[index not updating: …]` (R-P2), a SIGKILLed serve whose writer exits by itself
and frees the lock, three serves with one writer and a takeover that syncs an edit made meanwhile (R-P4), SIGTERM
and a second signal (R-W5), the first-sync cap and a health failure in serve (R-S4, R-W4), and the reindex replies
(R-M7). Every stdout line of every serve must be JSON-RPC (R-P5).
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import apsw
import cli_helpers
import psutil
import pytest
from backends import Backend
from embed_server import EmbedServer
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

from scree.config import load_settings
from scree.index.backend import holder
from scree.index.lock import WriterLock, lock_holder

SCREE = str(Path(sys.executable).with_name("scree"))
DEADLINE_S = 20.0
POLL_S = 0.02
CALL_TIMEOUT_S = 40.0  # a reindex may wait 25 s for the writer
BAR_S = 5.0  # R-P2 / R-P4 / R-W5: writer exit, takeover and stop all within 5 s
MARGIN_S = 1.5  # process start-up and polling on a busy 2-core machine
READER_DRAIN_S = 10.0  # a killed serve's pipes reach their end once every process holding them has exited
FIRST_SYNC_FILES = 300
SYNC_COMMITS_FILES = 1100  # one chunk each: two commits of 512 rows before the last
FAST_ENV = {
    "SCREE_EMBEDDER": "hash",
    "SCREE_DEBOUNCE_SECONDS": "0.2",
    "SCREE_HEALTH_SECONDS": "0.3",
    "SCREE_LOCK_RETRY_SECONDS": "0.3",
    "SCREE_WRITER_RESTART_SECONDS": "0.5",  # long enough for a poll to see the "not updating" note
    "SCREE_WRITER_RESTART_MAX_SECONDS": "1",
    "SCREE_WRITER_HEARTBEAT_SECONDS": "2",
    "SCREE_LOG_FORMAT": "json",
    "SCREE_LOG_LEVEL": "info",
}
FIRST_SYNC_NOTE = re.compile(r"\[index incomplete: first sync in progress, (\d+) files? indexed so far\]")
FIRST_SYNC_REPLY = re.compile(
    r"The first sync is still running \((\d+) files? indexed so far\); new and changed files are included\."
)
SCANNED = re.compile(r"Scanned (\d+) files?: (\d+) indexed, (\d+) removed, (\d+) failed, (\d+) deferred\.")


def wait_until(condition: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    return cli_helpers.wait_until(condition, what, deadline_s)


write = cli_helpers.write_text


def make_folder(root: Path, files: int = 5) -> Path:
    folder = root / "notes"
    for n in range(1, files + 1):
        write(folder / f"n{n}.md", f"# Note {n}\n\nword{n} about gardens and compost\n")
    write(folder / ".hidden/x.md", "# Hidden\n")
    return folder


def scree_env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env.update({"XDG_DATA_HOME": str(data), **FAST_ENV, **extra})
    return env


def api_extra(server: EmbedServer) -> dict[str, str]:
    return {"SCREE_EMBEDDER": "api", "SCREE_API_BASE": server.url, "SCREE_API_KEY": "test-key"}


def lock_path(folder: Path, env: dict[str, str]) -> Path:
    return load_settings(env, notes=str(folder)).lock_path


def note_of(text: str) -> str | None:
    """The status note: the last line of a reply when it is a [bracketed] line."""
    last = text.rsplit("\n", 1)[-1]
    return last if last.startswith("[") and last.endswith("]") else None


def note_starting(serve: Serve, prefix: str) -> str | None:
    note = note_of(serve.search("gardens"))
    return note if note is not None and note.startswith(prefix) else None


def writer_pids(serve_pid: int) -> list[int]:
    """The spawned writer children of a serve (its other child is multiprocessing's resource tracker)."""
    pids = []
    try:
        children = psutil.Process(serve_pid).children()
    except psutil.Error:
        return []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "spawn_main" in " ".join(child.cmdline()):
                pids.append(child.pid)
        except psutil.Error:
            continue
    return pids


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def kill_tree(pid: int) -> None:
    try:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass


class Serve:
    """`scree serve` as a real process, driven with JSON-RPC lines; every stdout line it writes must be JSON-RPC."""

    def __init__(self, folder: Path, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [SCREE, "serve", "--notes", str(folder), *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.not_json_rpc: list[bytes] = []
        self.stderr_lines: list[str] = []
        self._ids = itertools.count(1)
        self.readers = (
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        )
        for reader in self.readers:
            reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self.not_json_rpc.append(line)
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.not_json_rpc.append(line)
                continue
            self.messages.put(message)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip("\n"))

    def logs(self) -> list[dict[str, Any]]:
        out = []
        for line in list(self.stderr_lines):
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        end = time.monotonic() + CALL_TIMEOUT_S
        while True:
            try:
                message = self.messages.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"serve {self.pid} did not answer {method} within {CALL_TIMEOUT_S} s: {self.tail()}")
            if message.get("id") == request_id:
                return message

    def initialize(self) -> float:
        started = time.monotonic()
        reply = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
        )
        elapsed = time.monotonic() - started
        assert "search_docs first" in reply["result"]["instructions"]
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        assert len(result["content"]) == 1 and "structuredContent" not in result
        return result["content"][0]["text"], bool(result.get("isError"))

    def search(self, query: str) -> str:
        text, is_error = self.call("search_docs", {"query": query, "mode": "keyword", "k": 3})
        assert not is_error, text
        return text

    def reindex(self, path: str | None = None) -> str:
        text, _ = self.call("reindex", {} if path is None else {"path": path})
        return text

    def writers(self) -> list[int]:
        return writer_pids(self.pid)

    def wait_watching(self) -> int:
        """Wait until the watching writer answers a reindex (the first sync is over); its pid."""
        end = time.monotonic() + DEADLINE_S
        while not SCANNED.fullmatch(reply := self.reindex()):
            assert time.monotonic() < end, f"the watching writer never answered reindex: {reply}; {self.tail()}"
            time.sleep(POLL_S)
        pids = self.writers()
        assert len(pids) == 1, pids
        return pids[0]

    def close(self, deadline_s: float = BAR_S + MARGIN_S) -> int:
        """Close stdin as a client does when it goes away (R-W5); the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.wait(deadline_s)

    def wait(self, deadline_s: float) -> int:
        try:
            return self.proc.wait(deadline_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve {self.pid} did not exit within {deadline_s} s: {self.tail()}")

    def tail(self) -> list[str]:
        return self.stderr_lines[-12:]


@pytest.fixture
def start_serve() -> Iterator[Callable[..., Serve]]:
    started: list[Serve] = []

    def start(folder: Path, env: dict[str, str], *args: str) -> Serve:
        serve = Serve(folder, env, *args)
        started.append(serve)
        return serve

    yield start
    for serve in started:
        kill_tree(serve.pid)
        serve.proc.wait(10)
        if serve.proc.stdin is not None:
            serve.proc.stdin.close()
        # a pipe is closed only once its reader has read to the end: closing it under a blocked read (a writer that
        # outlived serve still holds it) raised ValueError in the reader thread, failing the test at teardown
        for reader, stream in zip(serve.readers, (serve.proc.stdout, serve.proc.stderr), strict=True):
            reader.join(READER_DRAIN_S)
            if stream is not None and not reader.is_alive():
                stream.close()
    for serve in started:  # R-P5: nothing but MCP on stdout, in any process, all along
        assert serve.not_json_rpc == [], serve.not_json_rpc[:3]


# --- the first sync: handshake, notes, a fresh writer after it (SDK client) ---


def text_of(result: Any) -> str:
    assert isinstance(result, CallToolResult) and result.structured_content is None
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


def serve_pid_of(folder: Path) -> int:
    for child in psutil.Process().children():
        try:
            if "serve" in child.cmdline() and str(folder) in child.cmdline():
                return child.pid
        except psutil.Error:
            continue
    pytest.fail("the SDK client's serve process was not found")


def maps_of(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.slow
def test_handshake_and_search_answer_during_the_first_sync_then_a_fresh_writer_watches(
    tmp_path: Path, embed_server: EmbedServer
) -> None:
    folder = make_folder(tmp_path, FIRST_SYNC_FILES)
    embed_server.set(delay_s=0.5)  # with 16 chunks a request, the first sync takes about 10 s
    extra = {**FAST_ENV, **api_extra(embed_server), "SCREE_BATCH_SIZE": "16", "SCREE_LOG_LEVEL": "debug"}
    extra["XDG_DATA_HOME"] = str(tmp_path / "data")
    params = StdioServerParameters(command=SCREE, args=["serve", "--notes", str(folder)], env=extra)
    errlog_path = tmp_path / "serve.log"
    seen: set[int] = set()

    async def search(client: Client, query: str) -> str:
        return text_of(await client.call_tool("search_docs", {"query": query, "mode": "keyword", "k": 3}))

    async def body(client: Client, serve_pid: int) -> None:
        text = await search(client, "gardens")  # the handshake did not wait: the first sync is still running
        note = note_of(text)
        assert note is not None and FIRST_SYNC_NOTE.fullmatch(note), text
        seen.update(writer_pids(serve_pid))
        first_writer = wait_until(lambda: writer_pids(serve_pid), "the first-sync writer")[0]
        assert "pydantic_core" in maps_of(serve_pid) and "pydantic_core" not in maps_of(first_writer)  # no MCP
        reply = text_of(await client.call_tool("reindex", {"path": "n1.md"}))
        assert FIRST_SYNC_REPLY.fullmatch(reply), reply  # R-M7 while the first sync runs

        deadline = time.monotonic() + 60
        while note_of(await search(client, "gardens")) is not None:  # until the first sync is done
            seen.update(writer_pids(serve_pid))
            assert time.monotonic() < deadline, "the first sync never finished"
            await anyio.sleep(0.1)
        watcher = wait_until(lambda: [p for p in writer_pids(serve_pid) if p != first_writer], "the fresh writer")
        seen.update(watcher)
        assert gone(first_writer) and len(writer_pids(serve_pid)) == 1
        assert seen == {first_writer, watcher[0]}  # R-P3: the pid changed exactly once

        write(folder / "n2.md", "# Note 2\n\nquokkas in the garden\n")  # the fresh writer watches
        deadline = time.monotonic() + DEADLINE_S
        while not (await search(client, "quokkas")).startswith('<hit n="1" path="n2.md"'):
            assert time.monotonic() < deadline, "the edit was never indexed"
            await anyio.sleep(0.1)
        assert writer_pids(serve_pid) == watcher

    async def main() -> None:
        with errlog_path.open("w") as errlog:
            started = time.monotonic()
            async with Client(
                stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=CALL_TIMEOUT_S
            ) as client:
                handshake_s = time.monotonic() - started
                assert handshake_s < 10.0
                serve_pid = serve_pid_of(folder)
                await body(client, serve_pid)
        assert gone(serve_pid) and all(gone(pid) for pid in seen)

    anyio.run(main)
    assert lock_holder(lock_path(folder, scree_env(tmp_path / "data"))) is None
    logs = [json.loads(line) for line in errlog_path.read_text().splitlines() if line.startswith("{")]
    children = [r for r in logs if r.get("event") in ("writer child started", "writer child exiting")]
    assert {(r["event"], r["mode"]) for r in children} >= {
        ("writer child started", "sync"),
        ("writer child exiting", "sync"),
        ("writer child started", "watch"),
    }
    assert all(r["mcp_loaded"] is False for r in children)  # R-P3: the writer imports nothing of the MCP stack
    assert [r["outcome"] for r in children if r["event"] == "writer child exiting" and r["mode"] == "sync"] == [
        "first_sync_done"
    ]


@pytest.mark.slow
def test_the_first_answer_and_the_first_sync_note_count_what_the_index_holds(
    tmp_path: Path, embed_server: EmbedServer, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path, FIRST_SYNC_FILES)
    env = scree_env(tmp_path / "data", **api_extra(embed_server), SCREE_BATCH_SIZE="16")
    assert cli_helpers.run_scree("reindex", "--notes", str(folder), env=env).returncode == 0

    # fully indexed: the first answer has no note, whether or not the writer has reported yet
    serve = start_serve(folder, env)
    serve.initialize()
    assert note_of(serve.search("gardens")) is None
    assert serve.close() == 0

    # an index whose first sync never finished: before the writer reports, the note counts what the index holds
    db = load_settings(env, notes=str(folder)).db_path
    conn = apsw.Connection(str(db))
    conn.execute("delete from meta where key = 'first_sync_done'")
    conn.close()
    serve = start_serve(folder, env)
    serve.initialize()
    note = note_of(serve.search("gardens"))
    assert note in (None, f"[index incomplete: first sync in progress, {FIRST_SYNC_FILES} files indexed so far]")
    assert serve.close() == 0

    # a real first sync, slowed, that commits twice before its end (512 rows a transaction): the count in the note
    # never lags the notes a search finds
    big = make_folder(tmp_path / "big", SYNC_COMMITS_FILES)
    big_env = {**env, "SCREE_BATCH_SIZE": "64"}
    embed_server.set(delay_s=0.5)  # 64 chunks a request: about 9 s
    serve = start_serve(big, big_env)
    serve.initialize()
    seen_during_sync = 0
    deadline = time.monotonic() + 120
    while note := note_of(text := serve.call("search_docs", {"query": "gardens", "mode": "keyword", "k": 50})[0]):
        counted = FIRST_SYNC_NOTE.fullmatch(note)
        assert counted is not None, note
        found = text.count("<hit n=")  # one chunk a note
        assert int(counted.group(1)) >= found, (note, found)
        seen_during_sync += found > 0
        assert time.monotonic() < deadline, "the first sync never finished"
        time.sleep(0.1)
    assert seen_during_sync >= 3  # the check ran while the index filled
    assert serve.close() == 0


# --- faults (R-P2) ---


def test_a_killed_or_frozen_writer_is_restarted_while_search_says_so(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path)
    serve = start_serve(folder, scree_env(tmp_path / "data", SCREE_LOG_LEVEL="debug"))
    serve.initialize()
    writer = serve.wait_watching()

    os.kill(writer, signal.SIGKILL)
    note = wait_until(lambda: note_of(serve.search("gardens")), "a note after SIGKILL")
    assert note == "[index not updating: the writer process was killed by SIGKILL; restarting it]"
    assert serve.search("word3").startswith('<hit n="1" path="n3.md"')  # serving what is indexed
    writer = wait_until(lambda: [p for p in serve.writers() if p != writer], "a new writer after SIGKILL")[0]
    wait_until(lambda: note_of(serve.search("gardens")) is None, "the note goes once the writer is back")
    write(folder / "n2.md", "# Note 2\n\nquokkas in the garden\n")
    wait_until(lambda: serve.search("quokkas").startswith('<hit n="1" path="n2.md"'), "an edit after the restart")

    os.kill(writer, signal.SIGSTOP)  # hung: no heartbeat
    note = wait_until(lambda: note_of(serve.search("gardens")), "a note after SIGSTOP")
    assert (
        note
        == "[index not updating: the writer stopped answering (no heartbeat for 2 s) and was killed; restarting it]"
    )
    assert gone(writer)  # killed, not left frozen
    wait_until(lambda: [p for p in serve.writers() if p != writer], "a new writer after the hang")
    wait_until(lambda: note_of(serve.search("gardens")) is None, "the note goes after the hang")
    write(folder / "n4.md", "# Note 4\n\nwombats in the garden\n")
    wait_until(lambda: serve.search("wombats").startswith('<hit n="1" path="n4.md"'), "an edit after the hang")
    assert serve.close() == 0


def test_a_writer_over_its_memory_limit_is_killed_restarted_and_reported(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path)
    serve = start_serve(folder, scree_env(tmp_path / "data", SCREE_WRITER_MAX_RSS_MB="5"))
    serve.initialize()
    seen: set[int] = set()

    def reported() -> str | None:
        seen.update(serve.writers())
        note = note_of(serve.search("gardens"))
        return note if note and "over SCREE_WRITER_MAX_RSS_MB=5, and was killed; restarting it]" in note else None

    note = wait_until(reported, "the memory note")
    assert re.fullmatch(r"\[index not updating: the writer used \d+ MB of memory, over .*\]", note), note
    wait_until(lambda: seen.update(serve.writers()) or len(seen) >= 2, "a restarted writer")
    assert serve.close() == 0
    assert all(gone(pid) for pid in seen)


def test_the_writer_starts_once_the_handshake_is_done_or_after_the_grace_without_one(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    """R-M8: the writer's interpreter start never competes with the reader's own start-up for the client's handshake;
    a client that never handshakes still gets its folder indexed."""
    folder = make_folder(tmp_path)
    waiting = scree_env(tmp_path / "data", SCREE_WRITER_HANDSHAKE_GRACE_SECONDS="600")
    serve = start_serve(folder, waiting)
    lock = lock_path(folder, waiting)
    wait_until(lambda: lock_holder(lock) == serve.pid, "serve holds writer.lock")
    quiet_until = time.monotonic() + 1.0
    while time.monotonic() < quiet_until:  # the lock is held, yet no writer starts before the handshake
        assert serve.writers() == [], serve.tail()
        time.sleep(POLL_S)
    serve.initialize()
    serve.wait_watching()  # well before the 600 s grace: the handshake started it

    other = make_folder(tmp_path / "other")
    silent = start_serve(other, scree_env(tmp_path / "data", SCREE_WRITER_HANDSHAKE_GRACE_SECONDS="0.5"))
    wait_until(lambda: silent.writers(), "a writer without any handshake")
    silent.initialize()  # only now, to see what that writer did
    silent.wait_watching()
    assert "word3" in silent.search("word3")
    assert silent.close() == 0 and serve.close() == 0


def test_a_search_that_met_a_blank_index_file_finds_the_index_once_built(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    """A writer creates index.db empty, then writes its schema: a search in between must not pin that blank file."""
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data")
    settings = load_settings(env, notes=str(folder))
    settings.index_dir.mkdir(parents=True, mode=0o700)
    held = WriterLock(settings.lock_path)
    assert held.try_acquire()  # another writer, mid-creation: the file exists and is still blank
    os.close(os.open(settings.db_path, os.O_WRONLY | os.O_CREAT, 0o600))
    serve = start_serve(folder, env)
    serve.initialize()
    assert serve.search("word2").startswith("No matching documents.")
    held.release()  # that writer goes away; this serve takes over and builds the index
    wait_until(lambda: serve.search("word2").startswith('<hit n="1" path="n2.md"'), "the built index is searched")
    assert serve.close() == 0


def holder_of(folder: Path, env: dict[str, str]) -> Callable[[], int | None]:
    """The pid holding the index's writer lock now, on either backend (writer.lock, or the collection's lock)."""
    settings = load_settings(env, notes=str(folder))
    return lambda: holder(settings)


def test_a_killed_serve_takes_its_writer_and_the_lock_with_it(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve], index_backend: Backend
) -> None:
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data", **index_backend.env())
    serve = start_serve(folder, env)
    serve.initialize()
    writer = serve.wait_watching()
    lock_holder_now = holder_of(folder, env)
    assert lock_holder_now() == serve.pid  # the lock names the serve, whose writer shares its lock (or session)

    serve.proc.kill()
    killed_at = time.monotonic()
    wait_until(lambda: gone(writer), "the orphaned writer exits", BAR_S)
    wait_until(lambda: lock_holder_now() is None, "the lock is free", BAR_S - (time.monotonic() - killed_at))


# --- several sessions (R-P4) ---


def test_three_serves_one_writer_and_a_takeover_syncs_an_edit_made_meanwhile(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve], index_backend: Backend
) -> None:
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data", **index_backend.env())
    lock_holder_now = holder_of(folder, env)
    serves = [start_serve(folder, env) for _ in range(3)]
    for serve in serves:
        serve.initialize()
    holder_pid = wait_until(lock_holder_now, "one serve holds the writer lock")
    holder = next(s for s in serves if s.pid == holder_pid)
    writer = holder.wait_watching()
    others = [s for s in serves if s is not holder]
    for serve in serves:  # one writer among them; every session answers, with no note once the index is built
        assert len(serve.writers()) == (1 if serve is holder else 0)
        text = serve.search("word3")
        assert text.startswith('<hit n="1" path="n3.md"') and note_of(text) is None, text
    assert others[0].reindex() == (
        f"Another scree process (pid {holder_pid}) keeps this index current; edits are picked up within a few seconds."
    )

    holder.proc.kill()
    killed_at = time.monotonic()
    write(folder / "n5.md", "# Note 5\n\nplatypus notes written while nobody watched\n")
    new_holder = wait_until(lambda: lock_holder_now() in {s.pid for s in others}, "a takeover", BAR_S + MARGIN_S)
    assert new_holder and time.monotonic() - killed_at <= BAR_S + MARGIN_S
    assert gone(writer)
    wait_until(lambda: others[0].search("platypus").startswith('<hit n="1" path="n5.md"'), "the edit synced")
    # the first-sync child exits and a fresh one watches (R-P3): between the two there is briefly none
    wait_until(lambda: sum(len(s.writers()) for s in others) == 1, "one watching writer among the others")
    for serve in others:
        assert serve.close() == 0


# --- stopping (R-W5) ---


@pytest.mark.slow
def test_sigterm_stops_within_5_s_and_a_second_signal_exits_at_once(
    tmp_path: Path, embed_server: EmbedServer, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path)
    embed_server.set(delay_s=30.0)  # the writer is stuck in an API request: its stop takes the full deadline
    env = scree_env(tmp_path / "data", **api_extra(embed_server))
    lock = lock_path(folder, env)

    serve = start_serve(folder, env)
    serve.initialize()
    writer = wait_until(serve.writers, "a writer")[0]
    wait_until(embed_server.request_count, "the writer waits on the API")
    started = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.wait(BAR_S + MARGIN_S) == 0
    assert time.monotonic() - started > 2.0  # it did wait for the writer
    assert gone(writer) and lock_holder(lock) is None

    serve = start_serve(folder, env)
    serve.initialize()
    writer = wait_until(serve.writers, "a writer")[0]
    wait_until(lambda: embed_server.request_count() >= 2, "the new writer waits on the API")
    serve.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: any(r.get("event") == "signal received; stopping the writer" for r in serve.logs()), "1st")
    started = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.wait(1.0) == 128 + signal.SIGTERM
    assert time.monotonic() - started < 1.0
    wait_until(lambda: gone(writer), "the writer exits by itself", BAR_S)
    wait_until(lambda: lock_holder(lock) is None, "writer.lock is free", MARGIN_S)


# --- reindex replies, the first-sync cap and health in serve (R-M7, R-S4, R-W4) ---


def test_reindex_replies_while_this_session_writes(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path)
    serve = start_serve(folder, scree_env(tmp_path / "data", SCREE_DEBOUNCE_SECONDS="5"))
    serve.initialize()
    serve.wait_watching()
    assert serve.reindex("n1.md") == '"n1.md" is already up to date.'
    write(folder / "n1.md", "# Note 1\n\nhedgehogs\n")  # the watcher's debounce is 5 s: the request comes first
    assert serve.reindex("n1.md") == 'Re-indexed "n1.md".'
    write(folder / "n6.md", "# Note 6\n\nnew note\n")
    assert serve.reindex() == "Scanned 6 files: 1 indexed, 0 removed, 0 failed, 0 deferred."
    text, is_error = serve.call("reindex", {"path": ".hidden/x.md"})
    assert is_error and text == 'refused: ".hidden/x.md" is ignored by scree (hidden path)'
    assert serve.close() == 0


def test_over_the_first_sync_cap_serve_lets_go_until_reindex(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data", SCREE_FIRST_SYNC_MB="0.0001")
    serve = start_serve(folder, env)
    serve.initialize()
    note = wait_until(lambda: note_starting(serve, "[not indexed"), "the cap note")
    assert re.fullmatch(
        r'\[not indexed: this folder has \d+\.\d MB of markdown, over SCREE_FIRST_SYNC_MB=0.0001; run "scree reindex"'
        r" in it to index it anyway\]",
        note,
    ), note
    assert re.fullmatch(r"Not indexed: this folder has .* to index it anyway\.", serve.reindex())
    assert lock_holder(lock_path(folder, env)) is None and serve.writers() == []  # R-S4: the lock is released

    done = subprocess.run([SCREE, "reindex", "--notes", str(folder)], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    wait_until(lambda: lock_holder(lock_path(folder, env)) == serve.pid, "serve writes again after the reindex")
    serve.wait_watching()
    text = serve.search("word2")
    assert text.startswith('<hit n="1" path="n2.md"') and note_of(text) is None
    assert serve.close() == 0


def test_a_replaced_index_stops_the_writer_and_frees_the_lock(
    tmp_path: Path, start_serve: Callable[[Path, dict[str, str]], Serve]
) -> None:
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data", SCREE_WRITER_RESTART_MAX_SECONDS="60")
    settings = load_settings(env, notes=str(folder))
    serve = start_serve(folder, env)
    serve.initialize()
    serve.wait_watching()
    assert serve.search("word2").startswith('<hit n="1" path="n2.md"')

    settings.db_path.rename(settings.db_path.with_name("moved.db"))
    note = wait_until(lambda: note_of(serve.search("word2")), "the health note")
    assert note == f"[index not updating: the index {settings.db_path} was removed or moved away]"
    assert serve.search("word2").startswith('<hit n="1" path="n2.md"')  # R-W4: serving what is indexed
    wait_until(lambda: lock_holder(settings.lock_path) is None and not serve.writers(), "the lock is released")
    assert serve.reindex() == f"The index is not updating: the index {settings.db_path} was removed or moved away."
    assert serve.close() == 0
