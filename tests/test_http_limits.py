"""`scree serve --http` against hostile connections and local users (issue 25), with real sockets on 127.0.0.1:
silent and trickling connections are closed by their deadlines, 1,100 connections neither lock a real client out
nor run the server out of file descriptors nor flood its log; and a bearer token is required by default, loopback
too, made into a private file when none is given, never printed."""

from __future__ import annotations

import os
import resource
import select
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import wait_until, write_file
from test_http import (
    DEADLINE_S,
    SCREE,
    TOKEN,
    HttpServe,
    launch,
    local,
    raw,
    serve_env,
    wait_first_sync,
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_file(tmp_path / "notes", "README.md", "# Project\n\nReleases are cut from main every second week.\n")
    return tmp_path / "notes"


@pytest.fixture
def started() -> Iterator[list[HttpServe]]:
    servers: list[HttpServe] = []
    yield servers
    for serve in servers:
        serve.stop()


SHORT_S = "1"  # the header and body deadlines these tests run with
PACE_S = 0.2  # a trickling client's pause between bytes (select's timeout: also how it sees the close)


def closed_by_server(sock: socket.socket, trickle: bytes = b"") -> tuple[bytes, float]:
    """Send `trickle` a byte at a time (PACE_S apart) until the server closes the connection; what it answered and
    how long that took. Fails after DEADLINE_S: a server without read deadlines holds the connection for ever."""
    start = time.monotonic()
    got = b""
    sent = 0
    while time.monotonic() - start < DEADLINE_S:
        readable, _, _ = select.select([sock], [], [], PACE_S)
        if readable:
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return got, time.monotonic() - start
            got += chunk
        elif sent < len(trickle):
            sock.sendall(trickle[sent : sent + 1])
            sent += 1
    pytest.fail(f"the server still held the connection after {DEADLINE_S} s (sent {sent} bytes)")


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)


def test_silent_and_trickling_connections_are_closed(folder: Path, tmp_path: Path, started: list[HttpServe]) -> None:
    env = serve_env(
        tmp_path / "data", SCREE_HTTP_HEADER_TIMEOUT_SECONDS=SHORT_S, SCREE_HTTP_BODY_TIMEOUT_SECONDS=SHORT_S
    )
    serve = launch(started, folder, env)
    wait_first_sync(serve)
    with connect(serve.port) as silent:
        answer, took = closed_by_server(silent)
    assert answer.startswith(b"HTTP/1.1 408 ") and answer.endswith(b"refused: the request did not arrive in time\n")
    print(f"silent connection closed after {took:.2f} s (header deadline {SHORT_S} s)")
    headers = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{serve.port}\r\nX-Pad: {'a' * 200}\r\n\r\n".encode()
    with connect(serve.port) as trickling:
        answer, took = closed_by_server(trickling, headers)  # 200+ bytes at 5 a second: over 40 s if let through
    assert answer.startswith(b"HTTP/1.1 408 ")
    print(f"trickled headers closed after {took:.2f} s")
    body_head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{serve.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n"
    ).encode()
    with connect(serve.port) as slow_body:
        slow_body.sendall(body_head)
        _answer, took = closed_by_server(slow_body, b"{" + b" " * 399)
    print(f"trickled body closed after {took:.2f} s")
    assert raw(serve.port, "GET", "/healthz", local(serve.port)).status == 200  # a real client still gets in


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_1100_silent_connections_neither_lock_out_a_client_nor_flood_the_log(
    folder: Path, tmp_path: Path, started: list[HttpServe]
) -> None:
    """The issue's attack: 1,100 connections that send nothing, against a server allowed 512 descriptors (prlimit),
    so that without a cap it runs out of them. A real client still gets its answer, the server keeps its
    descriptors under its limit, and says so in a line or two, not one a connection."""
    wanted = 1100 + 200
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"this test opens {wanted} sockets; RLIMIT_NOFILE allows {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    env = serve_env(tmp_path / "data", SCREE_HTTP_HEADER_TIMEOUT_SECONDS="120", SCREE_HTTP_IDLE_SECONDS="120")
    proc = subprocess.Popen(["prlimit", "--nofile=512:512", "--", SCREE, "serve", "--http", "--port", "0", "--notes",
                             str(folder)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    serve = HttpServe(proc)
    started.append(serve)
    serve.reader = threading.Thread(target=serve.read, daemon=True)
    serve.reader.start()
    ports = lambda: [r["port"] for r in serve.records() if r.get("event") == "serving MCP over HTTP"]  # noqa: E731
    serve.port = wait_until(ports, "serve --http listening", DEADLINE_S)[0]
    wait_first_sync(serve)
    lines_before = len(serve.lines)
    crowd: list[socket.socket] = []
    try:
        for _ in range(1100):
            crowd.append(connect(serve.port))
        answer = raw(serve.port, "GET", "/healthz", local(serve.port))
        assert answer.status == 200, answer
        peak = open_fds(proc.pid)
        assert peak < 512
        print(f"1,100 silent connections: the server holds {peak} descriptors (limit 512)")
    finally:
        for sock in crowd:
            sock.close()
    assert raw(serve.port, "GET", "/healthz", local(serve.port)).status == 200
    new_lines = serve.lines[lines_before:]
    loud = [line for line in new_lines if '"level": "warning"' in line or '"level": "error"' in line]
    print(f"{len(new_lines)} log lines meanwhile, {len(loud)} warnings: {[line[:100] for line in loud]}")
    assert len(loud) <= 2 and not any("Traceback" in line for line in new_lines)
    assert sum('"http connections at the cap' in line for line in loud) == 1


# --- the token, required by default (issue 25, item 7) ---


def test_a_token_is_required_on_loopback_and_made_privately_when_none_is_given(
    folder: Path, tmp_path: Path, started: list[HttpServe]
) -> None:
    env = serve_env(tmp_path / "data", None)
    serve = launch(started, folder, env)
    token_file = tmp_path / "data" / "config" / "scree" / "http-token"
    assert raw(serve.port, "GET", "/healthz", local(serve.port, None)).status == 401  # was 200: no token on loopback
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    token = token_file.read_text().strip()
    assert len(token) == 64
    wait_first_sync(serve, token)
    made = [r for r in serve.records() if r.get("event", "").startswith("made a bearer token")]
    assert made and made[0]["token_file"] == str(token_file)
    serve.stop()
    assert token not in "\n".join(serve.lines) + serve.stdout  # the path is shown, the token never
    again = launch(started, folder, env)  # the next start reads the same file: clients keep working
    wait_first_sync(again, token)
    assert token_file.read_text().strip() == token
    assert not any(r.get("event", "").startswith("made a bearer token") for r in again.records())


def test_no_token_serves_loopback_without_one_and_says_so(
    folder: Path, tmp_path: Path, started: list[HttpServe]
) -> None:
    serve = launch(started, folder, serve_env(tmp_path / "data", None), "--no-token")
    wait_first_sync(serve, None)
    assert any(r.get("event", "").startswith("serving HTTP without a token") for r in serve.records())
    assert not (tmp_path / "data" / "config" / "scree" / "http-token").exists()


def test_an_unusable_token_file_is_one_line(folder: Path, tmp_path: Path) -> None:
    config = tmp_path / "data" / "config" / "scree"
    config.mkdir(parents=True)
    (config / "http-token").write_text("short\n")
    (config / "http-token").chmod(0o600)
    done = subprocess.run([SCREE, "serve", "--http", "--notes", str(folder)], env=serve_env(tmp_path / "data", None),
                          capture_output=True, text=True, timeout=DEADLINE_S)  # fmt: skip
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert str(config / "http-token") in done.stderr
