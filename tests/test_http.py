"""`scree serve --http` (R-M9) over real HTTP on 127.0.0.1: the SDK's streamable HTTP client for the tools, raw
requests for what a client must not get: forged Host and Origin headers, missing and wrong tokens, oversized bodies,
unknown and expired sessions, too many sessions; /healthz with the index present, missing and corrupted; SIGTERM."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_helpers import wait_until, write_file
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, TextContent

from scree.config import load_settings
from scree.index.folder import prepare_index_dir
from scree.index.lock import WriterLock, lock_holder
from scree.reader_proc.http_access import MISSING_TOKEN, WRONG_TOKEN

SCREE = str(Path(sys.executable).parent / "scree")
TOKEN = "t0k3n-for-the-http-tests-5d1f0a"
DEADLINE_S = 30.0
STOP_BAR_S = 5.0  # R-W5
PROTOCOL = "2025-06-18"
IDLE_S = 1.0  # the idle timeout the session tests run with
ACCEPT = "application/json, text/event-stream"
NAMES = "allowed: 127.0.0.1, ::1, localhost; add a name with --allow-host"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class HttpServe:
    """A running `scree serve --http --port 0`, its stderr gathered line by line."""

    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    port: int = 0
    stdout: str = ""
    reader: threading.Thread | None = None

    def read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines) if line.startswith("{")]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> int:
        """SIGTERM, the exit code; the pipes are read to their end and closed (stdout kept in `stdout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(DEADLINE_S)
        if self.proc.stdout is not None and not self.proc.stdout.closed:
            self.stdout = self.proc.stdout.read()
            self.proc.stdout.close()
        if self.reader is not None:
            self.reader.join(DEADLINE_S)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return self.proc.returncode


def serve_env(data: Path, token: str | None = TOKEN, **extra: str) -> dict[str, str]:
    """The environment of a serve under test: its own data and config folders, and SCREE_HTTP_TOKEN unless `token`
    is None (a token is required by default, loopback too: issue 25)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env.update(XDG_DATA_HOME=str(data), SCREE_EMBEDDER="hash", SCREE_LOG_FORMAT="json", SCREE_DEBOUNCE_SECONDS="0.2")
    env.update(XDG_CONFIG_HOME=str(data / "config"))
    if token is not None:
        env.update(SCREE_HTTP_TOKEN=token)
    env.update(extra)
    return env


def start_serve(folder: Path, env: dict[str, str], *args: str) -> HttpServe:
    proc = subprocess.Popen(
        [SCREE, "serve", "--http", "--port", "0", "--notes", str(folder), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    serve = HttpServe(proc)
    serve.reader = threading.Thread(target=serve.read, daemon=True)
    serve.reader.start()

    def listening() -> int:
        if proc.poll() is not None:
            pytest.fail(f"serve --http exited with {proc.returncode}: {serve.lines[-5:]}")
        ports = [r["port"] for r in serve.records() if r.get("event") == "serving MCP over HTTP"]
        return ports[0] if ports else 0

    serve.port = wait_until(listening, "serve --http listening", DEADLINE_S)
    return serve


def notes_in(root: Path) -> Path:
    write_file(root / "notes", "README.md", "# Project\n\nReleases are cut from main every second week.\n")
    write_file(root / "notes", "docs/guide.md", "# Guide\n\n## Tokens\n\nBearer tokens rotate monthly.\n")
    return root / "notes"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return notes_in(tmp_path)


@pytest.fixture
def started(folder: Path, tmp_path: Path) -> Iterator[list[HttpServe]]:
    servers: list[HttpServe] = []
    yield servers
    for serve in servers:
        serve.stop()


def launch(started: list[HttpServe], folder: Path, env: dict[str, str], *args: str) -> HttpServe:
    serve = start_serve(folder, env, *args)
    started.append(serve)
    return serve


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def raw(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> Answer:
    """One request exactly as given: no Host or other header added (http.client adds none when told not to)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE_S)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
    finally:
        conn.close()


def local(port: int, token: str | None = TOKEN, **extra: str) -> dict[str, str]:
    """A local request's headers: Host, and the bearer token unless `token` is None."""
    auth = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return {"Host": f"127.0.0.1:{port}", **auth, **extra}


def rpc(method: str, n: int = 1, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).encode()


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
INITIALIZE = rpc("initialize", protocolVersion=PROTOCOL, capabilities={}, clientInfo={"name": "raw", "version": "0"})


def mcp_headers(port: int, session: str | None = None, token: str | None = TOKEN, **extra: str) -> dict[str, str]:
    headers = local(port, token, **{"Content-Type": "application/json", "Accept": ACCEPT}, **extra)
    if session is not None:
        headers.update({"Mcp-Session-Id": session, "Mcp-Protocol-Version": PROTOCOL})
    return headers


def open_session(port: int, **extra: str) -> str:
    answer = raw(port, "POST", "/mcp", mcp_headers(port, **extra), INITIALIZE)
    assert answer.status == 200, answer
    session = answer.headers["mcp-session-id"]
    done = raw(port, "POST", "/mcp", mcp_headers(port, session, **extra), INITIALIZED)
    assert done.status == 202, done
    return session


def ping(port: int, session: str, **extra: str) -> Answer:
    return raw(port, "POST", "/mcp", mcp_headers(port, session, **extra), rpc("ping", 7))


def text_of(result: Any) -> str:
    assert isinstance(result, CallToolResult) and len(result.content) == 1
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


def run_client(url: str, token: str | None, body: Any) -> Any:
    """The SDK's streamable HTTP client against `url`, with a bearer token when given."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as http_client:
            async with Client(streamable_http_client(url, http_client=http_client), mode="legacy") as client:
                return await body(client)

    return anyio.run(main)


def wait_first_sync(serve: HttpServe, token: str | None = TOKEN) -> dict[str, Any]:
    def synced() -> dict[str, Any] | None:
        answer = raw(serve.port, "GET", "/healthz", local(serve.port, token))
        return answer.json() if answer.status == 200 and answer.json()["first_sync_done"] else None

    result: dict[str, Any] = wait_until(synced, "first sync done, seen by /healthz", DEADLINE_S)
    return result


# --- one serve with the default settings, synced, for the tests where the server is not the subject ---


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServe]:
    """A `scree serve --http` started once for this module (the tests below read from it and change no file);
    the module's last test stops it and checks how it ended."""
    root = tmp_path_factory.mktemp("shared-serve")
    serve = start_serve(notes_in(root), serve_env(root / "data"))
    wait_first_sync(serve)
    yield serve
    serve.stop()


def refusals(serve: HttpServe, status: int | None = None) -> int:
    """The refusals `serve` has logged so far (of one status when given)."""
    return sum(
        r.get("event") == "http request refused" and (status is None or r.get("status") == status)
        for r in serve.records()
    )


# --- the tools, through the SDK's client ---


def test_the_three_tools_answer_over_streamable_http(shared: HttpServe) -> None:
    serve = shared

    async def body(client: Client) -> tuple[list[str], str, str, str]:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        hits = text_of(await client.call_tool("search_docs", {"query": "bearer tokens rotate", "mode": "keyword"}))
        doc = text_of(await client.call_tool("read_doc", {"path": "docs/guide.md", "start": 3}))
        again = text_of(await client.call_tool("reindex", {"path": "README.md"}))
        return tools, hits, doc, again

    tools, hits, doc, again = run_client(serve.url, TOKEN, body)
    assert tools == ["read_doc", "reindex", "search_docs"]
    assert hits.startswith('<hit n="1" path="docs/guide.md"') and "Bearer tokens rotate monthly." in hits
    assert doc.startswith('<doc path="docs/guide.md" lines="3-5">')
    assert again == '"README.md" is already up to date.'


def test_eight_clients_at_once_all_get_answers(shared: HttpServe) -> None:
    serve = shared

    async def one(results: list[str]) -> None:
        async def body(client: Client) -> None:
            for _ in range(3):
                results.append(text_of(await client.call_tool("search_docs", {"query": "when are releases cut"})))

        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http_client:
            async with Client(streamable_http_client(serve.url, http_client=http_client), mode="legacy") as client:
                await body(client)

    async def main() -> list[str]:
        results: list[str] = []
        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(one, results)
        return results

    results = anyio.run(main)
    assert len(results) == 24
    assert all('path="README.md"' in text for text in results)


# --- refusals, before any tool runs ---


def test_forged_host_and_origin_are_refused_on_every_route(shared: HttpServe) -> None:
    serve = shared
    port = serve.port
    before = refusals(serve)
    for path, method, body in (("/mcp", "POST", INITIALIZE), ("/healthz", "GET", None)):
        headers = mcp_headers(port) if body else local(port)
        forged = raw(port, method, path, {**headers, "Host": f"evil.example:{port}"}, body)
        assert (forged.status, forged.text) == (421, f'refused: Host "evil.example:{port}" is not one this server '
                                                     f"answers to ({NAMES})\n")  # fmt: skip
        nameless = raw(port, method, path, {k: v for k, v in headers.items() if k != "Host"}, body)
        # HTTP/1.1 requires Host: uvicorn's parser turns such a request away before any route
        assert (nameless.status, nameless.text) == (400, "Invalid HTTP request received.")
        page = raw(port, method, path, {**headers, "Origin": "http://evil.example"}, body)
        assert (page.status, page.text) == (403, f'refused: Origin "http://evil.example" may not call this server '
                                                 f"({NAMES})\n")  # fmt: skip
        for allowed in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
            assert raw(port, method, path, {**headers, "Origin": allowed}, body).status == 200
    assert raw(port, "GET", "/healthz", {"Host": f"localhost:{port}", **AUTH}).status == 200
    assert raw(port, "GET", "/healthz", {"Host": f"[::1]:{port}", **AUTH}).status == 200
    wait_until(lambda: refusals(serve) == before + 4, "each refusal logged once", DEADLINE_S)
    # uvicorn's own warning comes as one of scree's JSON lines (records() parses every line that starts with "{")
    parser = lambda: [r for r in serve.records() if r.get("logger") == "uvicorn.error"]  # noqa: E731
    assert wait_until(parser, "uvicorn's warning logged", DEADLINE_S)[0]["event"] == "Invalid HTTP request received."


def test_allow_host_adds_a_name(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    serve = launch(started, folder, serve_env(tmp_path / "data", SCREE_HTTP_ALLOWED_HOSTS="notes.internal"),
                   "--allow-host", "scree.example")  # fmt: skip
    wait_first_sync(serve)
    for name in ("notes.internal", "scree.example", "SCREE.example"):
        assert raw(serve.port, "GET", "/healthz", {"Host": f"{name}:{serve.port}", **AUTH}).status == 200, name
    refused = raw(serve.port, "GET", "/healthz", {"Host": "other.example"})
    assert refused.status == 421 and "notes.internal, scree.example" in refused.text


def test_token_missing_or_wrong_is_refused_and_never_logged(shared: HttpServe) -> None:
    serve = shared  # its SCREE_HTTP_TOKEN is TOKEN
    port = serve.port
    before = refusals(serve, 401)
    for path, method, body in (("/mcp", "POST", INITIALIZE), ("/healthz", "GET", None)):
        headers = mcp_headers(port, token=None) if body else local(port, None)
        missing = raw(port, method, path, headers, body)
        assert (missing.status, missing.text) == (401, MISSING_TOKEN + "\n")
        assert missing.headers["www-authenticate"] == 'Bearer realm="scree"'
        for wrong in (f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer ", f"Basic {TOKEN}"):
            answer = raw(port, method, path, {**headers, "Authorization": wrong}, body)
            assert answer.status == 401 and answer.text in (WRONG_TOKEN + "\n", MISSING_TOKEN + "\n"), wrong
        assert raw(port, method, path, {**headers, "Authorization": f"Bearer {TOKEN}"}, body).status == 200
    assert MISSING_TOKEN == 'refused: this server needs a bearer token: send "Authorization: Bearer <token>"'
    assert WRONG_TOKEN == "refused: wrong bearer token"

    async def body(client: Client) -> str:
        return text_of(await client.call_tool("search_docs", {"query": "tokens", "mode": "keyword"}))

    assert "Bearer tokens rotate monthly." in run_client(serve.url, TOKEN, body)
    with pytest.raises(ExceptionGroup) as refused:  # the SDK's client without the token does not get in
        run_client(serve.url, None, body)
    assert "Server returned an error response" in repr(refused.value)
    wait_until(lambda: refusals(serve, 401) > before, "the refusals logged", DEADLINE_S)
    assert TOKEN not in "\n".join(serve.lines)  # and again once it stopped: the module's last test


# --- the shared serve's end (after the last test that uses it: it stops the module's server, so the tests
# below, which start servers of their own, run beside no other) ---


def test_the_shared_serve_stops_cleanly_having_printed_nothing_and_logged_no_token(shared: HttpServe) -> None:
    assert shared.stop() == 0
    assert shared.stdout == ""  # R-P5: nothing on stdout
    assert TOKEN not in "\n".join(shared.lines)
    assert shared.records()  # it logged, as JSON lines on stderr


def test_token_file_is_read_only_when_private(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)
    env = serve_env(tmp_path / "data", None)
    done = subprocess.run([SCREE, "serve", "--http", "--notes", str(folder), "--token-file", str(token_file)],
                          env=env, capture_output=True, text=True, timeout=DEADLINE_S)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == (f"scree: refusing the token file {token_file}: other users can read or write it "
                           f"(mode 644); run: chmod 600 {token_file}\n")  # fmt: skip
    token_file.chmod(0o600)
    serve = launch(started, folder, env, "--token-file", str(token_file))
    wait_first_sync(serve, TOKEN)
    assert raw(serve.port, "GET", "/healthz", local(serve.port, None)).status == 401
    assert raw(serve.port, "GET", "/healthz", local(serve.port, Authorization=f"Bearer {TOKEN}")).status == 200


@pytest.mark.parametrize(
    ("args", "env", "message", "code"),
    [
        (["--host", "0.0.0.0", "--no-token"], {}, "scree: serve --http --host 0.0.0.0 listens beyond this machine and "
         "needs a token: --no-token is only for loopback", 2),
        (["--no-token"], {"SCREE_HTTP_TOKEN": TOKEN}, "scree: --no-token: a token is also given (SCREE_HTTP_TOKEN)", 2),
        (["--host", "0.0.0.0"], {"SCREE_HTTP_TOKEN": "short"}, "scree: SCREE_HTTP_TOKEN: the token must be at least "
         "16 printable characters with no spaces (e.g. from: openssl rand -hex 32)", 1),
        (["--token-file", "/nonexistent/token"], {}, "scree: cannot read the token file /nonexistent/token: "
         "No such file or directory", 1),
    ],
)  # fmt: skip
def test_refusals_to_start_are_one_line(
    folder: Path, tmp_path: Path, args: list[str], env: dict[str, str], message: str, code: int
) -> None:
    done = subprocess.run([SCREE, "serve", "--http", "--notes", str(folder), *args],
                          env=serve_env(tmp_path / "data", None, **env), capture_output=True, text=True,
                          timeout=DEADLINE_S)  # fmt: skip
    assert (done.returncode, done.stderr, done.stdout) == (code, message + "\n", "")


def test_http_flags_without_http_are_a_usage_error(folder: Path, tmp_path: Path) -> None:
    done = subprocess.run([SCREE, "serve", "--notes", str(folder), "--port", "9000"],
                          env=serve_env(tmp_path / "data"), capture_output=True, text=True,
                          timeout=DEADLINE_S)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == "scree: --port: only with --http (without it, serve speaks MCP on stdin/stdout)\n"


def test_oversized_bodies_are_refused(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    serve = launch(started, folder, serve_env(tmp_path / "data", SCREE_HTTP_MAX_BODY_BYTES="4096"))
    port = serve.port
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 5000}}).encode()
    declared = raw(port, "POST", "/mcp", mcp_headers(port), big)
    assert (declared.status, declared.text) == (413, "Request body too large")

    # no Content-Length: the limit counts the bytes as they arrive
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE_S)
    conn.request("POST", "/mcp", body=iter([big[:3000], big[3000:]]), headers=mcp_headers(port),
                 encode_chunked=True)  # fmt: skip
    response = conn.getresponse()
    assert (response.status, response.read()) == (413, b"Request body too large")
    conn.close()
    assert raw(port, "POST", "/mcp", mcp_headers(port), INITIALIZE).status == 200  # under the limit: served


# --- sessions: bounded, idle ones expire ---


def test_unknown_and_expired_sessions_get_404(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    serve = launch(started, folder, serve_env(tmp_path / "data", SCREE_HTTP_SESSION_IDLE_SECONDS=str(IDLE_S)))
    port = serve.port
    unknown = ping(port, "0" * 32)
    assert unknown.status == 404 and unknown.json()["error"]["message"] == "Session not found"
    session = open_session(port)
    assert ping(port, session).status == 200
    # each probe is activity that keeps the session alive: probe less often than the idle timeout
    for _ in range(20):
        time.sleep(IDLE_S * 1.5)
        expired = ping(port, session)
        if expired.status != 200:
            break
    assert expired.status == 404 and expired.json()["error"]["message"] == "Session not found"
    assert ping(port, open_session(port)).status == 200  # a client that initializes again is served


def test_sessions_are_bounded(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    serve = launch(started, folder, serve_env(tmp_path / "data", SCREE_HTTP_MAX_SESSIONS="2"))
    port = serve.port
    first, _second = open_session(port), open_session(port)
    over = raw(port, "POST", "/mcp", mcp_headers(port), INITIALIZE)
    assert over.status == 503 and over.json()["error"]["message"] == "Too many open sessions"
    assert ping(port, first).status == 200  # the open ones are unaffected
    closed = raw(port, "DELETE", "/mcp", mcp_headers(port, first))
    assert closed.status == 200
    assert raw(port, "POST", "/mcp", mcp_headers(port), INITIALIZE).status == 200  # room again


# --- /healthz from the database ---


def test_healthz_present_missing_and_corrupted(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    env = serve_env(tmp_path / "data", SCREE_LOCK_RETRY_SECONDS="0.3")  # the takeover below: not 5 s of waiting
    settings = load_settings(env, notes=str(folder))
    prepare_index_dir(settings.index_dir, custom_db=False)
    holder = WriterLock(settings.lock_path)  # another process keeps the index: serve's writer waits
    assert holder.try_acquire()
    serve = launch(started, folder, env)
    missing = raw(serve.port, "GET", "/healthz", local(serve.port))
    assert (missing.status, missing.json()) == (503, {"ok": False, "error": f"no index at {settings.db_path} yet"})
    check = status_check(env, folder)  # the container's HEALTHCHECK asks the same
    assert (check.returncode, check.stderr) == (1, f"scree: unhealthy: no index at {settings.db_path} yet\n")

    settings.db_path.write_bytes(b"this is not a database" * 200)
    corrupt = raw(serve.port, "GET", "/healthz", local(serve.port))
    assert corrupt.status == 503 and corrupt.json()["ok"] is False
    assert corrupt.json()["error"].startswith(f"cannot open index {settings.db_path}: ")
    assert "not a database" in corrupt.json()["error"]

    settings.db_path.unlink()
    holder.release()  # serve's supervisor takes over within its lock retry and syncs first (R-P4)
    present = wait_first_sync(serve)
    assert present == {
        "ok": True,
        "folder": str(folder.resolve()),
        "files": 2,
        "chunks": present["chunks"],
        "writer_pid": present["writer_pid"],
        "first_sync_done": True,
        "last_sync": present["last_sync"],
        "last_error": None,
    }
    assert present["chunks"] >= 2 and isinstance(present["writer_pid"], int) and present["last_sync"]
    check = status_check(env, folder)
    assert check.returncode == 0, check.stderr
    assert check.stdout == (
        f"healthy: 2 files, {present['chunks']} chunks, writer pid {present['writer_pid']}, first sync done\n"
    )
    assert serve.stop() == 0
    check = status_check(env, folder)
    assert (check.returncode, check.stderr) == (
        1,
        f"scree: unhealthy: no scree process keeps the index of {folder.resolve()} current (writer.lock is free)\n",
    )


def status_check(env: dict[str, str], folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCREE, "status", "--check", "--notes", str(folder)], env=env, capture_output=True,
                          text=True, timeout=DEADLINE_S)  # fmt: skip


# --- shutdown ---


def test_sigterm_stops_with_a_client_connected_within_5s(
    folder: Path, tmp_path: Path, started: list[HttpServe]
) -> None:
    env = serve_env(tmp_path / "data")
    serve = launch(started, folder, env)
    wait_first_sync(serve)
    session = open_session(serve.port)
    # a client holding the standalone GET stream open, as the SDK's client does
    stream = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=DEADLINE_S)
    stream.request("GET", "/mcp", headers={**local(serve.port), "Accept": "text/event-stream",
                                           "Mcp-Session-Id": session, "Mcp-Protocol-Version": PROTOCOL})  # fmt: skip
    assert stream.getresponse().status == 200
    started_at = time.monotonic()
    code = serve.stop()  # one SIGTERM: a second, sent before serve has exited, is R-W5's "exit at once" (143)
    took = time.monotonic() - started_at
    stream.close()
    assert code == 0, serve.lines[-5:]
    assert took < STOP_BAR_S, took
    assert lock_holder(load_settings(env, notes=str(folder)).lock_path) is None


def test_a_port_in_use_is_one_line_and_leaves_the_lock_alone(folder: Path, tmp_path: Path) -> None:
    env = serve_env(tmp_path / "data")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([SCREE, "serve", "--http", "--notes", str(folder), "--port", str(port)], env=env,
                              capture_output=True, text=True, timeout=DEADLINE_S)  # fmt: skip
    assert (done.returncode, done.stderr) == (1, f"scree: cannot listen on 127.0.0.1:{port}: Address already in use\n")
    assert not load_settings(env, notes=str(folder)).lock_path.exists()
