"""`scree init` against hostile or unusual config files (issue 25 item 8): what it cannot write back exactly, or
safely, it refuses in one line and leaves byte for byte as it was; a symlink is written through, a custom entry
kept, and concurrent edits are serialised under a lock so none is lost. What a file is and holds is tested through
`scree.__main__.main(argv)` in this process (the `cli` fixture); a folder name that is not UTF-8, a FIFO that would
block, the lock and concurrent inits run the installed `scree`."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import SCREE, Run, run_scree, scree_env, wait_until

from scree.commands.init import CLIENTS

CLAUDE_ENTRY = CLIENTS["claude"].entry
VSCODE_ENTRY = CLIENTS["vscode"].entry


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def assert_refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 1 and one line on stderr starting `scree: `, with no traceback and nothing on stdout."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("scree: "), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def no_temp_files(folder: Path) -> bool:
    return not [p.name for p in folder.iterdir() if p.name.startswith(".mcp.json.")]


# --- what JSON cannot carry exactly ---


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"mcpServers": {}, "timeout": NaN}\n', "NaN"),
        ('{"mcpServers": {}, "timeout": Infinity}\n', "Infinity"),
        ('{"mcpServers": {}, "timeout": -Infinity}\n', "-Infinity"),
        ('{"mcpServers": {}, "timeout": 1e400}\n', "1e400"),  # Python reads inf, and would write Infinity
        ('{"mcpServers": {}, "ratio": 0.10000000000000000000001}\n', "0.10000000000000000000001"),  # read as 0.1
    ],
)
def test_init_refuses_numbers_json_cannot_write_back(cli: Run, tmp_path: Path, text: str, why: str) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text(text)
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert_refused(proc, why, "by hand")
    assert (repo / ".mcp.json").read_text() == text


def test_init_refuses_duplicate_keys(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    text = '{"mcpServers": {"a": {"command": "a"}}, "mcpServers": {"b": {"command": "b"}}}'
    (repo / ".mcp.json").write_text(text)
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert_refused(proc, 'duplicate key "mcpServers"')
    assert (repo / ".mcp.json").read_text() == text


@pytest.mark.parametrize(
    "text",
    ['{"mcpServers": {}, "note": "\\ud800"}', '{"mcpServers": {"\\udfff": {"command": "x"}}}'],
)
def test_init_refuses_a_lone_surrogate_in_the_file(cli: Run, tmp_path: Path, text: str) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text(text)
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert_refused(proc, "lone surrogate")
    assert (repo / ".mcp.json").read_text() == text
    assert no_temp_files(repo)


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes in a name")
def test_init_in_a_folder_whose_name_is_not_utf8(tmp_path: Path) -> None:
    repo = git_repo(Path(os.fsdecode(os.fsencode(tmp_path) + b"/r\xffx")))
    proc = run_scree("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"scree": CLAUDE_ENTRY}}


# --- what the file is ---


def test_init_writes_through_a_symlink_and_keeps_the_link(cli: Run, tmp_path: Path) -> None:
    # a link inside the repository (one leaving it is refused: tests/test_symlink_faults.py)
    repo = git_repo(tmp_path / "repo")
    shared = repo / "shared" / "mcp.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"mcpServers": {"other": {"command": "other"}}}))
    shared.chmod(0o640)
    (repo / ".mcp.json").symlink_to(Path("shared") / "mcp.json")
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".mcp.json").is_symlink() and os.readlink(repo / ".mcp.json") == "shared/mcp.json"
    assert json.loads(shared.read_text()) == {"mcpServers": {"other": {"command": "other"}, "scree": CLAUDE_ENTRY}}
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    assert no_temp_files(repo) and [p.name for p in shared.parent.iterdir()] == ["mcp.json"]


def test_init_refuses_a_dangling_symlink(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").symlink_to(tmp_path / "nowhere" / "mcp.json")
    assert_refused(cli("init", env=scree_env(tmp_path / "data"), cwd=repo), "does not exist")
    assert (repo / ".mcp.json").is_symlink() and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("mode", [0o444, 0o400])
def test_init_refuses_a_read_only_file(cli: Run, tmp_path: Path, mode: int) -> None:
    repo = git_repo(tmp_path / "repo")
    text = '{"mcpServers": {}}'
    (repo / ".mcp.json").write_text(text)
    (repo / ".mcp.json").chmod(mode)
    assert_refused(cli("init", env=scree_env(tmp_path / "data"), cwd=repo), "read-only")
    assert (repo / ".mcp.json").read_text() == text
    assert stat.S_IMODE((repo / ".mcp.json").stat().st_mode) == mode


def test_init_refuses_a_file_with_another_hard_link(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    text = '{"mcpServers": {}}'
    (repo / ".mcp.json").write_text(text)
    os.link(repo / ".mcp.json", tmp_path / "twin.json")
    assert_refused(cli("init", env=scree_env(tmp_path / "data"), cwd=repo), "hard link")
    assert (repo / ".mcp.json").read_text() == text
    assert os.stat(repo / ".mcp.json").st_ino == os.stat(tmp_path / "twin.json").st_ino


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket"])
def test_init_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path, kind: str) -> None:
    repo = git_repo(tmp_path / "repo")
    target = repo / ".mcp.json"
    listener = None
    if kind == "fifo":
        os.mkfifo(target)  # opened for reading in blocking mode, this waits for a writer for ever
    elif kind == "folder":
        target.mkdir()
    else:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(target))
    try:
        proc = run_scree("init", env=scree_env(tmp_path / "data"), cwd=repo, timeout=60)
    finally:
        if listener is not None:
            listener.close()
    assert_refused(proc, "not a regular file")
    assert {"fifo": stat.S_ISFIFO, "folder": stat.S_ISDIR, "socket": stat.S_ISSOCK}[kind](target.lstat().st_mode)


# --- an entry of the user's own ---


@pytest.mark.parametrize(
    "custom",
    [
        {"command": "/opt/scree/bin/scree-mcp", "args": [], "type": "stdio"},
        {"type": "stdio", "command": "scree-mcp", "args": ["--notes", "docs"]},
        {"type": "stdio", "command": "scree-mcp", "args": [], "env": {"SCREE_LOG_LEVEL": "debug"}},
        {"type": "http", "url": "http://localhost:8080/mcp"},
        "not an object",
    ],
)
def test_init_keeps_a_custom_scree_entry_unless_forced(cli: Run, tmp_path: Path, custom: Any) -> None:
    repo = git_repo(tmp_path / "repo")
    env = scree_env(tmp_path / "data")
    text = json.dumps({"mcpServers": {"scree": custom, "other": {"command": "x"}}})
    (repo / ".mcp.json").write_text(text)
    kept = cli("init", env=env, cwd=repo)
    assert kept.returncode == 0 and kept.stderr == "", kept.stderr
    assert len(kept.stdout.splitlines()) == 1 and "kept" in kept.stdout and "--force" in kept.stdout
    assert (repo / ".mcp.json").read_text() == text

    forced = cli("init", "--force", env=env, cwd=repo)
    assert forced.returncode == 0, forced.stderr
    assert json.loads((repo / ".mcp.json").read_text()) == {
        "mcpServers": {"scree": CLAUDE_ENTRY, "other": {"command": "x"}}
    }


def test_init_brings_an_older_default_entry_up_to_date(cli: Run, tmp_path: Path) -> None:
    """An entry an earlier scree wrote (same command, args and env, without alwaysLoad) is scree's, not custom: the
    keys scree sets are brought up to date, a key of the user's (timeout) is kept."""
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"scree": {"type": "stdio", "command": "scree-mcp", "args": [], "timeout": 30}}})
    )
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 0 and "kept" not in proc.stdout, proc.stdout + proc.stderr
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"scree": {**CLAUDE_ENTRY, "timeout": 30}}}


def test_init_help_names_force() -> None:
    proc = subprocess.run([SCREE, "init", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--force" in proc.stdout


# --- concurrent edits ---


def flock_waiters(inode: int) -> bool:
    """Whether /proc/locks shows a process blocked on an flock of the file or folder with inode `inode`."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and "FLOCK" in fields and fields[fields.index("->") + 5].split(":")[-1] == str(inode):
            return True
    return False


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/locks to see scree wait for the lock")
def test_init_waits_for_the_lock_and_rereads_the_file_under_it(tmp_path: Path) -> None:
    """An editor holding the lock (flock on the config's folder) changes the file; init waits and keeps its edit."""
    repo = git_repo(tmp_path / "repo")
    target = repo / ".mcp.json"
    target.write_text(json.dumps({"mcpServers": {}}))
    folder_fd = os.open(repo, os.O_RDONLY)
    try:
        fcntl.flock(folder_fd, fcntl.LOCK_EX)
        init = subprocess.Popen(
            [SCREE, "init"], env=scree_env(tmp_path / "data"), cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            wait_until(
                lambda: init.poll() is not None or flock_waiters(os.fstat(folder_fd).st_ino),
                "scree init waiting on the lock (or ending without it)",
                60,
            )
            assert init.poll() is None, "scree init did not wait for the lock held on the config's folder"
            target.write_text(json.dumps({"mcpServers": {"mine": {"command": "mine"}}}))  # the editor's change
        finally:
            fcntl.flock(folder_fd, fcntl.LOCK_UN)
            _, err = init.communicate(timeout=60)
    finally:
        os.close(folder_fd)
    assert init.returncode == 0, err
    assert json.loads(target.read_text()) == {"mcpServers": {"mine": {"command": "mine"}, "scree": CLAUDE_ENTRY}}


EDITOR = """
import fcntl, json, os, sys, tempfile
target, name = sys.argv[1], sys.argv[2]
fd = os.open(os.path.dirname(target), os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
with open(target, encoding="utf-8") as f:
    data = json.load(f)
data.setdefault("mcpServers", {})[name] = {"command": name}
tmp = tempfile.NamedTemporaryFile("w", dir=os.path.dirname(target), delete=False)
json.dump(data, tmp)
tmp.close()
os.replace(tmp.name, target)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="scree takes no lock on Windows")
def test_concurrent_inits_and_edits_keep_every_entry(tmp_path: Path) -> None:
    """8 inits (Claude Code's and VS Code's entries in one file the two names link to) and 8 other editors at once."""
    repo = git_repo(tmp_path / "repo")
    shared = repo / "mcp.json"
    shared.write_text("{}")
    (repo / ".mcp.json").symlink_to("mcp.json")
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "mcp.json").symlink_to("../mcp.json")
    env = scree_env(tmp_path / "data")
    procs = [
        subprocess.Popen(
            [SCREE, "init", "--client", ("claude", "vscode")[i % 2]],
            env=env,
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(8)
    ]
    procs += [
        subprocess.Popen([sys.executable, "-c", EDITOR, str(shared), f"editor{i}"], stderr=subprocess.PIPE)
        for i in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    data = json.loads(shared.read_text())
    assert data["servers"] == {"scree": VSCODE_ENTRY}
    assert data["mcpServers"] == {"scree": CLAUDE_ENTRY, **{f"editor{i}": {"command": f"editor{i}"} for i in range(8)}}
    assert (repo / ".mcp.json").is_symlink() and sorted(p.name for p in repo.iterdir()) == [
        ".git",
        ".mcp.json",
        ".vscode",
        "mcp.json",
    ]
