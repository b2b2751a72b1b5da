"""Run the installed `scree` command in a subprocess with a private data home, as a user would."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

SCREE = str(Path(sys.executable).parent / "scree")
TEST_KEY = "sk-test-secret-4f9c2e"


def scree_env(data_home: Path, server_url: str | None = None, **extra: str) -> dict[str, str]:
    """An environment with no real key, an isolated XDG_DATA_HOME, and the test server as the API when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env["XDG_DATA_HOME"] = str(data_home)
    env["XDG_CONFIG_HOME"] = str(data_home / "config")
    if server_url is not None:
        env.update(SCREE_API_BASE=server_url, SCREE_API_KEY=TEST_KEY)
    env.update(extra)
    return env


def run_scree(
    *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCREE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


# run_scree, main_here, or run_main with its capsys: (*args, env=, cwd=)
Run = Callable[..., subprocess.CompletedProcess[str]]


def run_main(
    capsys: pytest.CaptureFixture[str],
    *args: str,
    env: dict[str, str],
    cwd: Path | None = None,
    timeout: float | None = None,  # run_scree's; here pytest's own per-test timeout applies
) -> subprocess.CompletedProcess[str]:
    """`scree ARGS` run in this process through `scree.__main__.main(argv)`, what the installed command calls, with
    `env` as the whole environment and `cwd` as the working directory (both put back after), its output from capsys:
    for the wording of commands that start no process of their own. The logging main configures is put back too."""
    capsys.readouterr()  # what came before is not this command's
    code = _main_here(args, env, cwd)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["scree", *args], code, out, err)


def main_here(
    *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """run_main without a capsys: stdout and stderr caught by redirecting sys.stdout and sys.stderr, for helpers that
    read the index's state (`status --json`, a keyword search) while a test waits on the process it is about, where
    starting a `scree` per poll would only spend the CPU the processes under test need."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _main_here(args, env, cwd)
    return subprocess.CompletedProcess(["scree", *args], code, out.getvalue(), err.getvalue())


def reindex_here(env: dict[str, str], folder: Path) -> None:
    """`scree reindex` run in this process (main_here), for a test's set-up: the index a test's own processes then
    meet, without a scree process of its own where the reindex is not the subject."""
    done = main_here("reindex", "--notes", str(folder), env=env)
    assert done.returncode == 0, done.stderr


def doctor_lines(env: dict[str, str], folder: Path, label: str) -> tuple[list[str], str]:
    """The lines of `scree doctor` over `folder`, indexed first in this process, that report `label`, and all of
    its output (for an assertion's message)."""
    reindex_here(env, folder)  # set-up: doctor is the subject
    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    return [line for line in doctor.stdout.splitlines() if f"{label}:" in line], doctor.stdout


def _main_here(args: Sequence[str], env: dict[str, str], cwd: Path | None) -> int:
    import logging

    import structlog

    from scree.__main__ import main

    saved_env, saved_cwd = dict(os.environ), Path.cwd()
    saved_log, saved_handlers = structlog.get_config(), list(logging.getLogger().handlers)
    os.environ.clear()
    os.environ.update({"COLUMNS": "80", **env})  # argparse wraps help as for a pipe, not the terminal pytest runs in
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            return main(list(args))
        except SystemExit as exc:  # argparse: a usage error (2), or --help and --version (0)
            return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        structlog.configure(**saved_log)
        logging.getLogger().handlers[:] = saved_handlers
        logging.captureWarnings(False)


def search_json(folder: Path, query: str, env: dict[str, str], *extra: str, run: Run = run_scree) -> dict[str, Any]:
    proc = run("search", "--notes", str(folder), "--json", *extra, query, env=env)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


POLL_S = 0.02


def wait_until(condition: Callable[[], Any], what: str, deadline_s: float) -> Any:
    """Poll `condition` until it returns something truthy (returned), failing the test after `deadline_s`."""
    end = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"not within {deadline_s} s: {what}")
        time.sleep(POLL_S)


def write_text(path: Path, text: str | bytes) -> Path:
    """Write `text` to `path`, creating its folders: a str as UTF-8 exactly as given (no newline translation, so a
    test's CRLF stays CRLF), bytes as they are; returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def write_file(folder: Path, rel: str, text: str | bytes) -> Path:
    """`write_text` at `rel` inside `folder`."""
    return write_text(folder / rel, text)


# Each client `scree init` writes for: (client, its config file, the servers' key, scree's entry there).
CLIENT_ENTRIES = [
    ("claude", ".mcp.json", "mcpServers", {"type": "stdio", "command": "scree-mcp", "args": [], "alwaysLoad": True}),
    ("cursor", ".cursor/mcp.json", "mcpServers", {"command": "scree-mcp", "args": ["--notes", "${workspaceFolder}"]}),
    (
        "vscode",
        ".vscode/mcp.json",
        "servers",
        {"type": "stdio", "command": "scree-mcp", "args": ["--notes", "${workspaceFolder}"]},
    ),
    (
        "copilot",
        ".github/mcp.json",
        "mcpServers",
        {"type": "stdio", "command": "scree-mcp", "args": [], "tools": ["*"], "deferTools": "never"},
    ),
]
