"""Files scree reads a secret from (issue 34 items 1 and 7): a FIFO as `--token-file` must not hang `serve --http`
at start, and a token or settings file owned by another user (who can read or replace it) is refused like a group-
or world-readable one. Real `scree` processes, a real FIFO, a real file given to another user (the suite runs as
root; elsewhere that part is skipped: only root can give a file away)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from fault_helpers import hash_env, no_traceback

TOKEN = "0123456789abcdef-token-34"
START_S = 20.0  # a refusal comes at once; `serve --http` hanging past this never listened


def serve_http(env: dict[str, str], folder: Path, token_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scree.cli", "serve", "--http", "--port", "0", "--notes", str(folder), "--token-file",
         str(token_file)],
        env=env, capture_output=True, text=True, timeout=START_S, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def one_line_refusal(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 1, done.stdout
    no_traceback(done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_fifo_as_the_token_file_is_refused_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    fifo = tmp_path / "token"
    os.mkfifo(fifo, 0o600)
    one_line_refusal(serve_http(hash_env(tmp_path / "data"), folder, fifo), str(fifo), "not a regular file")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_secret_files_owned_by_another_user_are_refused(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    folder = tmp_path / "notes"
    folder.mkdir()
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    os.chown(token, nobody.pw_uid, nobody.pw_gid)
    env = hash_env(tmp_path / "data")
    one_line_refusal(serve_http(env, folder, token), str(token), "owned by another user")

    settings = tmp_path / "data" / "config" / "scree" / "env"
    settings.parent.mkdir(parents=True)
    settings.write_text("SCREE_API_KEY=sk-from-another-user-34\n")
    settings.chmod(0o600)
    os.chown(settings, nobody.pw_uid, nobody.pw_gid)
    done = subprocess.run(
        [sys.executable, "-m", "scree.cli", "status", "--notes", str(folder)],
        env=env, capture_output=True, text=True, timeout=START_S,
    )  # fmt: skip
    one_line_refusal(done, str(settings), "owned by another user")
