"""The settings file and scree's own folders under odd conditions (issue 13, item 11 and the smaller list): a FIFO
or a directory where the settings file should be, an unclosed quote, umask 000, a missing or wrong `root` file,
a folder path over PATH_MAX."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import write_file
from fault_helpers import hash_env, no_traceback, scree

from scree.paths import index_dir_for

PATH_MAX = 4096
LONG_NAME = "d" * 200


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "a.md", "# A\n\nalpha\n")
    return root


def settings_path(env: dict[str, str]) -> Path:
    path = Path(env["XDG_CONFIG_HOME"]) / "scree" / "env"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_fifo_as_the_settings_file_is_refused_at_once(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data")
    os.mkfifo(settings_path(env), 0o600)
    done = scree(env, "status", "--notes", str(folder), timeout=30)  # it hung here before: no writer ever opens it
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert (
        done.stderr.strip() == f"scree: the settings file {settings_path(env)} is not a regular file; it must be a "
        "file of KEY=VALUE lines"
    )


def test_a_directory_as_the_settings_file_is_named_as_such(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data")
    settings_path(env).mkdir(mode=0o755)
    done = scree(env, "status", "--notes", str(folder))
    assert done.returncode == 1
    assert "is a directory; it must be a file of KEY=VALUE lines" in done.stderr
    assert "readable" not in done.stderr


def test_an_unclosed_quote_is_refused_not_kept(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data")
    path = settings_path(env)
    path.write_text('SCREE_MODEL="openai/text-embedding-3-small\n', encoding="utf-8")
    path.chmod(0o600)
    done = scree(env, "status", "--notes", str(folder))
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == f"scree: {path}: settings file line 1: SCREE_MODEL's value has a quote that is never closed"
    )


def test_umask_000_still_makes_private_folders(folder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = hash_env(data)
    done = subprocess.run(
        [sys.executable, "-m", "scree.cli", "reindex", "--notes", str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.umask(0),  # noqa: PLW1509 - the fault itself: the user's umask
    )
    assert done.returncode == 0, done.stderr
    index_dir = index_dir_for(folder, env)
    for path in (data, data / "scree", data / "scree" / "indexes", index_dir):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for name in ("index.db", "root"):
        assert stat.S_IMODE((index_dir / name).stat().st_mode) == 0o600, name


@pytest.mark.parametrize("root_text", [None, "/somewhere/else\n"])
def test_doctor_fails_on_a_missing_or_wrong_root_file(folder: Path, tmp_path: Path, root_text: str | None) -> None:
    env = hash_env(tmp_path / "data")
    assert scree(env, "reindex", "--notes", str(folder)).returncode == 0
    root_file = index_dir_for(folder, env) / "root"
    if root_text is None:
        root_file.unlink()
    else:
        root_file.write_text(root_text, encoding="utf-8")
    done = scree(env, "doctor", "--notes", str(folder))
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "index root file" in line)
    assert ("is missing" if root_text is None else "names '/somewhere/else'") in line


def make_deep(root: Path) -> str:
    """Folders nested until the path is over PATH_MAX, made relative to each other (a full path could not be)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        while len(str(root)) + depth * (len(LONG_NAME) + 1) <= PATH_MAX + 200:
            os.mkdir(LONG_NAME, dir_fd=fd)
            next_fd = os.open(LONG_NAME, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = next_fd
            depth += 1
        note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(note, b"# Deep\n\nabyssal\n")
        os.close(note)
    finally:
        os.close(fd)
    return "/".join([LONG_NAME] * depth)


def test_a_path_over_path_max_is_named_not_skipped_silently(folder: Path, tmp_path: Path) -> None:
    make_deep(folder)
    env = hash_env(tmp_path / "data")
    done = scree(env, "reindex", "--notes", str(folder))
    no_traceback(done.stderr)
    assert done.returncode == 1
    skipped = [line for line in done.stdout.splitlines() if line.startswith("  skipped ")]
    assert len(skipped) == 1 and skipped[0].endswith(": cannot read folder: File name too long"), done.stdout
    assert "1 indexed" in done.stdout
