"""What the installed `scree` does with its terminal and its pipes: a reader that goes away early, and the reindex
progress line on a real pty (R-L1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_helpers import SCREE, run_scree, scree_env, write_file

EXIT_BROKEN_PIPE = 141


@pytest.fixture
def big_folder(tmp_path: Path) -> Path:
    """Sixty files of one long section each about CORS: 50 hits of JSON are far over a pipe's 64 KiB buffer."""
    root = tmp_path / "notes"
    for n in range(60):
        body = " ".join(f"cors header {n} allows origin {i}." for i in range(120))
        write_file(root, f"docs/page{n:02}.md", f"# Page {n}\n\n{body}\n")
    return root


def _search_into_closed_pipe(
    folder: Path, env: dict[str, str], read_first: int, k: int = 50
) -> subprocess.CompletedProcess[str]:
    """`scree search -k K --json cors | head -c N`: read `read_first` bytes (0: none), then close the pipe."""
    command = [SCREE, "search", "--notes", str(folder), "-k", str(k), "--json", "--mode", "keyword", "cors"]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        head = proc.stdout.read(read_first) if read_first else b""
        proc.stdout.close()
        err = proc.stderr.read()
        code = proc.wait(timeout=60)
    return subprocess.CompletedProcess(command, code, head.decode(), err.decode())


def test_a_closed_pipe_ends_the_command_quietly(big_folder: Path, tmp_path: Path) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    assert run_scree("reindex", "--notes", str(big_folder), env=env).returncode == 0
    whole = run_scree("search", "--notes", str(big_folder), "-k", "50", "--json", "--mode", "keyword", "cors", env=env)
    assert whole.returncode == 0 and len(whole.stdout) > 2 * 65536  # the pipe fills long before the end
    for read_first in (100, 100, 100, 0, 0):
        done = _search_into_closed_pipe(big_folder, env, read_first)
        assert done.returncode == EXIT_BROKEN_PIPE, done
        assert done.stderr == "", done.stderr  # no "Exception ignored ... BrokenPipeError", no traceback
        assert done.stdout == whole.stdout[:read_first]
    small = _search_into_closed_pipe(big_folder, env, 0, k=1)  # held in stdout's buffer until the end: flushed late
    assert (small.returncode, small.stderr) == (EXIT_BROKEN_PIPE, ""), small
