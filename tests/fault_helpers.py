"""Shared pieces of the fault tests (issue 13): a `scree` run with the test embedder, and one without root's override.

Permission faults need a process the kernel checks file modes for. Root ignores chmod 000 through CAP_DAC_OVERRIDE
and CAP_DAC_READ_SEARCH, so as root the command runs under `setpriv` with both dropped from its bounding set: still
uid 0 (it owns the test's files and the index), but a folder or file with mode 000 is refused as for any user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import main_here

FAST_ENV = {
    "SCREE_DEBOUNCE_SECONDS": "0.2",
    "SCREE_OUTAGE_PAUSE_SECONDS": "0.3",
    "SCREE_OUTAGE_PAUSE_MAX_SECONDS": "0.6",
    "SCREE_HEALTH_SECONDS": "0.3",
    "SCREE_LOCK_RETRY_SECONDS": "0.3",
}
RUN_TIMEOUT_S = 60.0
DROP_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def hash_env(data: Path, **extra: str) -> dict[str, str]:
    """No key, an isolated data and config home, the deterministic test embedder (SCREE_EMBEDDER=hash)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env.update(
        {"XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(data / "config"), "SCREE_EMBEDDER": "hash", **FAST_ENV}
    )
    env.update(extra)
    return env


def api_env(data: Path, url: str, key: str = "sk-test-secret-4f9c2e", **extra: str) -> dict[str, str]:
    return hash_env(data, SCREE_EMBEDDER="api", SCREE_API_BASE=url, SCREE_API_KEY=key, **extra)


def unprivileged() -> list[str]:
    """The prefix that makes a command subject to file modes (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.fail("running as root without setpriv: cannot drop CAP_DAC_OVERRIDE for a permission test")
    return DROP_OVERRIDE


def scree(
    env: dict[str, str], *args: str, prefix: list[str] | None = None, timeout: float = RUN_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "scree.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def status(env: dict[str, str], folder: Path) -> dict[str, Any]:
    """`scree status --json`, run in this process (main_here): it reads the index while a test waits on a process."""
    done = main_here("status", "--notes", str(folder), "--json", env=env)
    assert done.returncode == 0, done.stderr
    info: dict[str, Any] = json.loads(done.stdout)
    return info


def keyword_paths(env: dict[str, str], folder: Path, query: str) -> list[str]:
    """The paths a keyword search finds, run in this process as `status` is."""
    done = main_here("search", "--notes", str(folder), "--json", "--mode", "keyword", "-k", "50", query, env=env)
    assert done.returncode == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)["hits"]]


def no_traceback(text: str) -> None:
    assert "Traceback" not in text, text


class RawMcp:
    """`scree serve` driven by hand over stdio: JSON-RPC lines written as given (even invalid ones), replies
    collected by id on a thread, so a test sees exactly which requests got an answer."""

    def __init__(self, env: dict[str, str], folder: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scree.cli", "serve", "--notes", str(folder)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: dict[Any, dict[str, Any]] = {}
        self.other: list[bytes] = []  # lines on stdout that are not a reply with an id
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err: list[bytes] = []
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            with self._lock:
                if isinstance(message, dict) and "id" in message and ("result" in message or "error" in message):
                    self.replies[message["id"]] = message
                else:
                    self.other.append(line)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._err.append(line)

    def stderr(self) -> str:
        return b"".join(self._err).decode("utf-8", "replace")

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode("utf-8"))

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )

    def reply(self, request_id: Any, deadline_s: float = 30.0) -> dict[str, Any]:
        from cli_helpers import wait_until

        def found() -> dict[str, Any] | None:
            with self._lock:
                return self.replies.get(request_id)

        reply: dict[str, Any] = wait_until(found, f"a reply to request {request_id!r}", deadline_s)
        return reply

    def initialize(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "fault-test", "version": "0"},
                },
            }
        )
        self.reply(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._reader.join(10)
        self._err_reader.join(10)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def text_of(reply: dict[str, Any]) -> str:
    """The text of a tools/call result, or the JSON-RPC error's message."""
    if "error" in reply:
        return f"JSON-RPC error {reply['error'].get('code')}: {reply['error'].get('message')}"
    return "".join(item.get("text", "") for item in reply["result"].get("content", []))
