"""A complete index on a read-only file system (a container's `:ro` volume) is searched, read and reported on
(issue 25): SQLite cannot make the -shm file a WAL reader needs there, so scree opens it as an immutable snapshot.

The read-only location is real: scree runs inside a private mount namespace (`unshare -m`) where the data folder is
bind-mounted read-only, which stops root's writes too (tests and CI run as root, where chmod would not)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from cli_helpers import SCREE, scree_env, write_file
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

# $1 is the folder made read-only for the command after it; private propagation (unshare's default) keeps the
# read-only bind inside this namespace.
READ_ONLY_BIND = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
CLIENT_TIMEOUT_S = 60.0


def read_only(folder: Path, *command: str) -> list[str]:
    """`command` run with `folder` mounted read-only for it alone."""
    return ["unshare", "-m", "sh", "-c", READ_ONLY_BIND, "sh", str(folder), *command]


@functools.cache
def read_only_mounts_work() -> bool:
    """Can this machine make a read-only bind mount in a private namespace (root with CAP_SYS_ADMIN)?"""
    if shutil.which("unshare") is None:
        return False
    probe = Path(f"/tmp/scree-ro-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        done = subprocess.run(
            read_only(probe, "touch", str(probe / "x")), capture_output=True, text=True, timeout=30, check=False
        )
        return done.returncode != 0 and "Read-only file system" in done.stderr
    finally:
        shutil.rmtree(probe, ignore_errors=True)


needs_mounts = pytest.mark.skipif(not read_only_mounts_work(), reason="no read-only bind mounts here (unshare -m)")


def built_index(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A git folder with two notes, indexed completely by `scree reindex` into a private data folder."""
    folder = tmp_path / "notes"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
    write_file(folder, "docs/roof.md", "# Roof\n\nMoss grows on the north side of the roof.\n")
    write_file(folder, "gutters.md", "# Gutters\n\nClear the gutters every autumn.\n")
    data = tmp_path / "data"
    env = scree_env(data, SCREE_EMBEDDER="hash", SCREE_LOG_LEVEL="warning")
    done = subprocess.run([SCREE, "reindex", "--notes", str(folder)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder, data, env


def files_under(folder: Path) -> dict[str, int]:
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*")}


@needs_mounts
def test_search_and_status_read_an_index_on_a_read_only_mount(tmp_path: Path) -> None:
    folder, data, env = built_index(tmp_path)
    before = files_under(data)
    search = subprocess.run(
        read_only(data, SCREE, "search", "--notes", str(folder), "--json", "moss roof"),
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert search.returncode == 0, search.stderr  # was: "cannot open index ...: unable to open database file"
    assert '"path": "docs/roof.md"' in search.stdout
    status = subprocess.run(
        read_only(data, SCREE, "status", "--notes", str(folder)), env=env, capture_output=True, text=True, timeout=90
    )
    assert status.returncode == 0, status.stderr
    assert "files: 2" in status.stdout and "first sync done: True" in status.stdout
    assert files_under(data) == before  # nothing written (no -shm, no -wal)


@needs_mounts
def test_serve_answers_search_and_read_doc_from_a_read_only_mount(tmp_path: Path) -> None:
    """Over MCP on stdio: both read tools answer, and the note says why nothing keeps the index current."""
    folder, data, env = built_index(tmp_path)
    command = read_only(data, SCREE, "serve", "--notes", str(folder))
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    replies: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT_S) as client:
            replies["search"] = await client.call_tool("search_docs", {"query": "moss roof", "mode": "keyword"})
            replies["read"] = await client.call_tool("read_doc", {"path": "gutters.md"})

    anyio.run(main)

    def text(result: CallToolResult) -> str:
        assert result.is_error is False and isinstance(result.content[0], TextContent), result
        return result.content[0].text

    found = text(replies["search"])
    assert found.startswith('<hit n="1" path="docs/roof.md"')
    assert "[index not updating:" in found and "Read-only file system" in found
    assert text(replies["read"]).startswith('<doc path="gutters.md" lines="1-3">')


@needs_mounts
def test_a_leftover_write_ahead_log_on_a_read_only_mount_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    """A -wal file means committed pages may be outside the main file: an immutable open could show a torn index,
    so it is refused, in one line, naming the way out."""
    folder, data, env = built_index(tmp_path)
    (db,) = data.rglob("index.db")
    Path(f"{db}-wal").write_bytes(b"")
    search = subprocess.run(
        read_only(data, SCREE, "search", "--notes", str(folder), "moss"), env=env, capture_output=True, text=True
    )
    assert search.returncode == 1 and search.stderr.count("\n") == 1 and "Traceback" not in search.stderr
    assert "write-ahead log" in search.stderr and "can be written" in search.stderr
