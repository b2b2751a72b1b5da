"""What the installed `scree` does with its terminal and its pipes: a reader that goes away early, and the reindex
progress line on a real pty (R-L1)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest
from cli_helpers import SCREE, reindex_here, run_scree, scree_env, write_file
from embed_server import EmbedServer

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
    reindex_here(env, big_folder)  # set-up
    whole = run_scree("search", "--notes", str(big_folder), "-k", "50", "--json", "--mode", "keyword", "cors", env=env)
    assert whole.returncode == 0 and len(whole.stdout) > 2 * 65536  # the pipe fills long before the end
    for read_first in (100, 100, 100, 0, 0):
        done = _search_into_closed_pipe(big_folder, env, read_first)
        assert done.returncode == EXIT_BROKEN_PIPE, done
        assert done.stderr == "", done.stderr  # no "Exception ignored ... BrokenPipeError", no traceback
        assert done.stdout == whole.stdout[:read_first]
    small = _search_into_closed_pipe(big_folder, env, 0, k=1)  # held in stdout's buffer until the end: flushed late
    assert (small.returncode, small.stderr) == (EXIT_BROKEN_PIPE, ""), small


# --- R-L1: the progress line on a real terminal ---

MID_RUN = re.compile(
    r"^(\d+)/40 files, ([\d.]+) (B|KB)/([\d.]+) KB, (\d+) chunks embedded, ([\d.]+) (B|KB|MB)/s, ETA (\d+m)?\d+s$"
)
FINAL = re.compile(r"^done: (\d+) files, (\d+) chunks in the index \((\d+) embedded now\), [\d.]+ KB in \d+s, .+/s$")


@pytest.fixture
def forty_files(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for n in range(40):
        write_file(root, f"docs/note{n:02}.md", f"# Note {n}\n\nAbout topic {n}.\n\n## More\n\n" + "words " * 60 + "\n")
    return root


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """`scree` with its stderr on a real pty (120 columns) and its stdout on a pipe; everything the pty got."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        command = [SCREE, *args]
        # as at an interactive shell's prompt, Ctrl-C does what it does by default: a suite run in the background
        # (`cmd &` in a script) inherits SIGINT ignored, and the interrupt test then saw the sync finish (exit 0)
        self.proc = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            preexec_fn=_default_sigint,
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, pattern: bytes, deadline_s: float) -> None:
        end = time.monotonic() + deadline_s
        while pattern not in self.seen:
            assert time.monotonic() < end, f"no {pattern!r} on the terminal: {self.seen!r}"
            if not self._read_some(0.1):
                raise AssertionError(f"terminal closed before {pattern!r}: {self.seen!r}")

    def _read_some(self, timeout: float) -> bool:
        if select.select([self.master], [], [], timeout)[0]:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: every writer of the pty has exited
                return False
            if not data:
                return False
            self.seen += data
        return True

    def finish(self) -> tuple[int, str, str]:
        assert self.proc.stdout is not None
        out = self.proc.stdout.read().decode()
        self.proc.stdout.close()
        code = self.proc.wait(timeout=60)
        while self._read_some(0.2):
            pass
        os.close(self.master)
        return code, out, self.seen.decode()


def _redraws(screen: str) -> list[str]:
    """The status lines as they were drawn: each redraw starts with a carriage return and clears to the end."""
    return [part.replace("\x1b[K", "") for part in screen.replace("\r\n", "\n").split("\r") if part]


def test_progress_line_on_a_terminal_shows_bytes_rate_eta_and_ends_matching_status(
    forty_files: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_BATCH_SIZE="4")
    embed_server.set(delay_s=0.05)  # a few seconds in all: the line is redrawn mid-run
    term = Terminal(["reindex", "--notes", str(forty_files)], env)
    code, out, screen = term.finish()
    assert code == 0, screen
    assert out == "Scanned 40 files: 40 indexed, 0 removed, 0 failed, 0 deferred.\n"  # stdout is the pipe's
    lines = _redraws(screen)
    mid = [m for m in map(MID_RUN.match, lines[:-1]) if m]
    assert len(mid) >= 3, lines
    assert all(float(m.group(6)) > 0 for m in mid)  # a rate in a unit that shows it
    done_bytes = [float(m.group(2)) * (1000 if m.group(3) == "KB" else 1) for m in mid]
    assert done_bytes == sorted(done_bytes) and any(0 < b < float(mid[0].group(4)) * 1000 for b in done_bytes)
    final = FINAL.match(lines[-1].removesuffix("\n"))
    assert final is not None and lines[-1].endswith("\n"), lines[-1]
    status = json.loads(run_scree("status", "--json", "--notes", str(forty_files), env=env).stdout)
    assert (int(final.group(1)), int(final.group(2))) == (status["files"], status["chunks"]) == (40, 80)

    piped = run_scree("reindex", "--all", "--notes", str(forty_files), env=env)  # no terminal: no progress
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr


def test_an_interrupt_ends_the_progress_line_before_its_message(
    forty_files: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_BATCH_SIZE="4")
    embed_server.set(delay_s=0.3)
    term = Terminal(["reindex", "--notes", str(forty_files)], env)
    term.read_until(b"chunks embedded, ", deadline_s=60)
    embed_server.set(delay_s=30.0)  # the rest of the sync waits on the server, so the interrupt lands mid-sync
    term.proc.send_signal(signal.SIGINT)
    code, _, screen = term.finish()
    assert code == 130, screen[-300:]
    assert screen.endswith("\x1b[K\r\nscree: interrupted\r\n"), screen[-200:]  # its own line, not the status line's


def test_without_a_terminal_reindex_prints_a_progress_line_now_and_then(
    forty_files: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    """Issue 25 item 9: without a terminal (CI, a pipe, a service log) a long reindex printed nothing for minutes. Now
    a plain line on stderr every SCREE_PROGRESS_SECONDS (10 s; shortened here), stdout kept for the result."""
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_BATCH_SIZE="4", SCREE_PROGRESS_SECONDS="0.1")
    embed_server.set(delay_s=0.2)  # ten batches of 0.2 s: several lines at 0.1 s apart
    piped = run_scree("reindex", "--notes", str(forty_files), env=env)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == "Scanned 40 files: 40 indexed, 0 removed, 0 failed, 0 deferred.\n"
    lines = piped.stderr.splitlines()
    assert len(lines) >= 2, piped.stderr
    for line in lines:
        assert re.fullmatch(r"scree: reindex: \d+/40 files, .* chunks embedded, .*", line), line
    assert "\r" not in piped.stderr and "\x1b" not in piped.stderr


def test_an_interrupted_reindex_keeps_the_batches_it_committed(
    forty_files: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    """Issue 25 item 9: Ctrl-C during `scree reindex` (no terminal) keeps what was already committed, exits 130 with
    one line and no traceback; the next reindex embeds only the rest."""
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_BATCH_SIZE="4", SCREE_PROGRESS_SECONDS="0.05")
    embed_server.set(delay_s=0.2)
    command = [SCREE, "reindex", "--notes", str(forty_files)]
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint
    ) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        seen = b""
        while not re.search(rb"\n(?:scree: reindex: )?(?:[1-9]\d*)/40 files, .* [1-9]\d* chunks embedded", seen):
            line = proc.stderr.readline()
            assert line, seen
            seen += line  # a progress line with chunks embedded: at least one batch went through
        embed_server.set(delay_s=30.0)
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        code = proc.wait(timeout=60)
        out = proc.stdout.read()
    assert code == 130, rest
    assert rest.decode().splitlines()[-1] == "scree: interrupted" and b"Traceback" not in rest
    assert out == b""
    embed_server.set(delay_s=0.0)
    kept = json.loads(run_scree("status", "--json", "--notes", str(forty_files), env=env).stdout)
    assert kept["files"] > 0, kept
    again = run_scree("reindex", "--notes", str(forty_files), env=env)
    assert again.returncode == 0
    assert again.stdout.startswith(f"Scanned 40 files: {40 - kept['files']} indexed"), again.stdout
