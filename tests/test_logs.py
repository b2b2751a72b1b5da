"""scree/logs.py in real processes: with SCREE_LOG_FORMAT=json, every stderr line is one whole JSON record (R-P5)
even when the reader, its threads (uvicorn's and the SDK's stdlib records) and a child sharing fd 2 all log at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

DEADLINE_S = 120.0  # a guard against a hang on a loaded machine, never a measure
RECORDS = 2000  # per thread and per process: enough overlap that a record cut in two writes meets another's
PIPE_BUF = 4096  # POSIX: a write of at most this many bytes reaches a pipe whole; larger ones may interleave

# Both processes log the same way: the reader (with a stdlib library logger routed like `serve --http` does) starts
# a child that inherits its fd 2, as the spawned writer does, and both begin once the child's logging is set up.
SCRIPT = r"""
import logging, subprocess, sys, threading
from scree.logs import configure_logging, get_logger

role, records = sys.argv[1], int(sys.argv[2])
configure_logging(role, "json")
log = get_logger("scree.test")
sizes = [40, 900, 3000]  # short, middling and near PIPE_BUF messages

def burst(logger, prefix):
    for n in range(records):
        logger.info(f"{prefix} {n} " + "x" * sizes[n % len(sizes)], n=n)

if role == "reader":
    from scree.reader_proc.http import route_library_logs
    route_library_logs()
    child = subprocess.Popen([sys.executable, "-c", sys.argv[3], "writer", str(records)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    child.stdout.read(1)  # the child has configured its logging
    library = logging.getLogger("uvicorn.error")
    libs = threading.Thread(target=lambda: [library.warning("uvicorn %d %s", n, "y" * 500) for n in range(records)])
    child.stdin.write(b"g"); child.stdin.close()
    libs.start()
    burst(log, "reader")
    libs.join()
    sys.exit(child.wait())
else:
    sys.stdout.buffer.write(b"r"); sys.stdout.flush()
    sys.stdin.read(1)
    burst(log, "writer")
"""


def test_json_records_of_a_reader_its_threads_and_its_child_are_whole_lines(tmp_path: Path) -> None:
    # PYTHONUNBUFFERED=1, as the Dockerfile sets: stderr is then unbuffered, so each write() call is one syscall
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCREE_")} | {"PYTHONUNBUFFERED": "1"}
    lines: list[bytes] = []
    with subprocess.Popen(
        [sys.executable, "-c", SCRIPT, "reader", str(RECORDS), SCRIPT],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    ) as proc:
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
        reader.start()  # drained from the start: a full pipe never blocks the writers
        assert proc.wait(timeout=DEADLINE_S) == 0
        reader.join(DEADLINE_S)
        assert not reader.is_alive()

    bad = [line for line in lines if not _one_record(line)]
    assert not bad, f"{len(bad)} of {len(lines)} stderr lines are not one JSON record each: {bad[0][:300]!r}"
    records = [json.loads(line) for line in lines]
    assert all(len(line) <= PIPE_BUF for line in lines)  # the test stays inside what a pipe keeps whole
    senders = ("reader", "writer", "uvicorn")
    counts = {who: sum(1 for r in records if r["event"].startswith(f"{who} ")) for who in senders}
    assert counts == {"reader": RECORDS, "writer": RECORDS, "uvicorn": RECORDS}  # nothing lost or cut either


def _one_record(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def test_structlog_is_imported_without_asyncio_and_its_async_methods_still_log() -> None:
    """A watching writer's RSS holds no asyncio (ssl, socket, ... issue 17 item 5) nor uuid; structlog's async
    methods, which use asyncio, import it on their first call, and a later `import asyncio` gets the real module."""
    code = (
        "import sys\n"
        "from scree.logs import configure_logging, get_logger\n"
        "print(sorted({'asyncio', 'ssl', 'uuid'} & set(sys.modules)))\n"
        "configure_logging('cli', 'json')\n"
        "get_logger('scree.test').info('plain')\n"
        "import asyncio\n"
        "print(type(sys.modules['asyncio']).__name__, asyncio.run(asyncio.sleep(0, 'ran')))\n"
        "asyncio.run(get_logger('scree.test').ainfo('from a coroutine', n=1))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCREE_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "module ran"]
    records = [json.loads(line) for line in done.stderr.splitlines()]
    events = [(r["event"], r["role"], r.get("n")) for r in records]
    assert events == [("plain", "cli", None), ("from a coroutine", "cli", 1)]


def test_stdlib_records_of_the_sdk_in_scree_serve_are_json_lines(tmp_path: Path) -> None:
    """The mcp SDK warns through a stdlib logger scree does not configure ("dropped ...: malformed params" for a
    client's bad notification); under SCREE_LOG_FORMAT=json it came out as a bare text line among the JSON ones."""
    from cli_helpers import wait_until, write_file
    from fault_helpers import RawMcp, hash_env

    folder = tmp_path / "notes"
    write_file(folder, "a.md", "# A\n\nalpha\n")
    server = RawMcp(hash_env(tmp_path / "data", SCREE_LOG_FORMAT="json"), folder)
    try:
        server.initialize()
        for method in ("notifications/cancelled", "notifications/progress"):
            server.send({"jsonrpc": "2.0", "method": method, "params": {"requestId": {"not": "an id"}}})
        server.call(1, "search_docs", {"query": "alpha", "mode": "keyword"})
        server.reply(1)  # the server read both notifications before this request
        wait_until(lambda: server.stderr().count("malformed params") == 2, "the SDK's two warnings", 30)
    finally:
        server.close()
    lines = server.stderr().splitlines()
    bad = [line for line in lines if not _one_record(line.encode())]
    assert not bad, bad
    dropped = [json.loads(line) for line in lines if "malformed params" in line]
    assert [(r["logger"], r["level"], r["role"]) for r in dropped] == [("mcp.server.runner", "warning", "reader")] * 2
    assert dropped[0]["event"] == "dropped 'notifications/cancelled': malformed params"


STDLIB_SCRIPT = r"""
import logging, sys, warnings
from scree.logs import configure_logging
from scree.redact import register_secret

secret = sys.argv[1]
register_secret(secret)
configure_logging("writer", sys.argv[2])
logging.getLogger("urllib3.connectionpool").warning("Retrying after %s with key %s", "a reset", secret)
logging.getLogger("numba.core").info("compiling")  # below the root's WARNING: libraries' chatter stays out
try:
    raise RuntimeError(f"refused key {secret}")
except RuntimeError:
    logging.getLogger("scree.direct").exception("a module that logs through logging")
logging.getLogger("custom").log(35, "a level of its own")
warnings.warn(f"a library warning naming {secret}", UserWarning)
"""


def test_stdlib_records_and_warnings_are_json_with_secrets_masked(tmp_path: Path) -> None:
    """Records of loggers scree does not configure (urllib3, numba, a scree module using logging directly), with
    an exception, a custom level and a Python warning: each is one JSON object, and the API key is masked."""
    secret = "sk-or-v1-" + "7f3a9c" * 8
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCREE_")}
    done = subprocess.run(
        [sys.executable, "-c", STDLIB_SCRIPT, secret, "json"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    bad = [line for line in lines if not _one_record(line.encode())]
    assert not bad, bad
    assert secret[9:30] not in done.stderr
    records = [json.loads(line) for line in lines]
    assert [(r["logger"], r["level"], r["role"]) for r in records] == [
        ("urllib3.connectionpool", "warning", "writer"),
        ("scree.direct", "error", "writer"),
        ("custom", "warning", "writer"),
        ("py.warnings", "warning", "writer"),
    ]
    assert records[0]["event"] == "Retrying after a reset with key [redacted]"
    assert records[1]["exception"].startswith("Traceback (most recent call last):")
    assert records[1]["exception"].endswith("RuntimeError: refused key [redacted]")
    assert "UserWarning: a library warning naming [redacted]" in records[3]["event"]
    console = subprocess.run(
        [sys.executable, "-c", STDLIB_SCRIPT, secret, "console"], capture_output=True, text=True, env=env, timeout=60
    )
    assert console.returncode == 0 and secret[9:30] not in console.stderr, console.stderr
    assert "[redacted] [urllib3.connectionpool] role=writer" in console.stderr
