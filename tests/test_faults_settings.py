"""The settings file and scree's own folders under odd conditions (issue 13, item 11 and the smaller list): a FIFO
or a directory where the settings file should be, an unclosed quote, umask 000, a missing or wrong `root` file,
a folder path over PATH_MAX."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import reindex_here, write_file
from fault_helpers import api_env, hash_env, keyword_paths, no_traceback, scree, status

from scree.index.folder import index_dir_for

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
    reindex_here(env, folder)
    root_file = index_dir_for(folder, env) / "root"
    if root_text is None:
        root_file.unlink()
    else:
        root_file.write_text(root_text, encoding="utf-8")
    done = scree(env, "doctor", "--notes", str(folder))
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "index root file" in line)
    assert ("is missing" if root_text is None else "names '/somewhere/else'") in line


def make_deep(root: Path, note: str = "deep.md", *, over: int = 200) -> str:
    """Folders nested until the path is `over` bytes past PATH_MAX (a negative `over` stops short of it), made
    relative to each other (a full path could not be), with `note` at the bottom; its path relative to `root`."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        while len(str(root)) + (depth + 1) * (len(LONG_NAME) + 1) <= PATH_MAX + over:
            os.mkdir(LONG_NAME, dir_fd=fd)
            next_fd = os.open(LONG_NAME, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = next_fd
            depth += 1
        made = os.open(note, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(made, b"# Deep\n\nabyssal\n")
        os.close(made)
    finally:
        os.close(fd)
    return "/".join([*[LONG_NAME] * depth, note])


def test_a_path_over_path_max_is_skipped_by_name_and_the_rest_indexed(folder: Path, tmp_path: Path) -> None:
    """A note below a folder whose path is over PATH_MAX, and one whose own name takes its path over: each is named
    in one short skipped line and one short warning, the rest is indexed, and the sync (a rebuild too) succeeds:
    the path is a property of the name, like an unshowable one, so it is not a failure that every run repeats."""
    deep = make_deep(folder)
    write_file(folder, "b/crabs.md", "# Crabs\n\ncrabs walk sideways along the shore\n")
    long_note = make_deep(folder / "b", "n" * 240 + ".md", over=-150)
    assert len(str(folder / "b" / long_note)) > PATH_MAX > len(str(folder / "b" / long_note)) - 244
    env = hash_env(tmp_path / "data")
    for args in (("reindex",), ("reindex", "--all")):
        done = scree(env, *args, "--notes", str(folder))
        no_traceback(done.stderr)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Scanned 4 files: 2 indexed, 0 removed, 0 failed, 0 deferred." in done.stdout, done.stdout[:2000]
        skipped = [line for line in done.stdout.splitlines() if line.startswith("  skipped ")]
        reason = f": path longer than the system allows (PATH_MAX, {PATH_MAX} bytes)"
        assert [line.removesuffix(reason)[-12:] for line in skipped] == ["nnnnnnnnn.md", "dddd/deep.md"], skipped
        assert all(len(line) < 300 and line.endswith(reason) for line in skipped), skipped
        warnings = [line for line in done.stderr.splitlines() if "file skipped" in line]
        assert len(warnings) == 2 and all(len(line) < 400 for line in warnings), done.stderr[-2000:]
        assert warnings[1].split(" path=", 1)[1].startswith(LONG_NAME[:60] + "…" + LONG_NAME[:40]), warnings
    assert status(env, folder)["files"] == 2
    assert keyword_paths(env, folder, "sideways") == ["b/crabs.md"]
    assert keyword_paths(env, folder, "abyssal") == []
    assert deep.endswith("/deep.md")


def test_a_name_over_name_max_given_to_reindex_is_not_indexed_and_no_failure(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data")
    name = "x" * 300 + ".md"
    done = scree(env, "reindex", "--notes", str(folder), name)
    no_traceback(done.stderr)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f'"{name}" is not indexed: file name too long for the system (ENAMETOOLONG).'


# --- issue 25 item 9: a password inside SCREE_API_BASE ---


@pytest.mark.parametrize("password", ["pw9", "s3cret-Passw0rd-41"])
def test_a_password_in_the_api_base_is_masked_wherever_it_is_shown(folder: Path, tmp_path: Path, password: str) -> None:
    base = f"http://alice:{password}@127.0.0.1:9/v1"
    env = api_env(tmp_path / "data", base, SCREE_INDEX_TIMEOUT_SECONDS="1")
    for args in (("config",), ("config", "--json")):
        done = scree(env, *args, "--notes", str(folder))
        assert done.returncode == 0, done.stderr
        assert password not in done.stdout + done.stderr
        assert "alice:[redacted]@127.0.0.1:9/v1" in done.stdout
    failed = scree(env, "reindex", "--notes", str(folder))
    no_traceback(failed.stderr)
    assert failed.returncode == 1
    assert "cannot reach http://alice:[redacted]@127.0.0.1:9/v1" in failed.stderr
    assert password not in failed.stdout + failed.stderr


# --- issue 25 item 9: every number setting has a sane range, and inf, nan and 1e300 are refused in one line ---

NUMBER_SETTINGS = (
    "SCREE_DIMENSIONS",
    "SCREE_BATCH_SIZE",
    "SCREE_MAX_FILE_BYTES",
    "SCREE_FIRST_SYNC_MB",
    "SCREE_DEBOUNCE_SECONDS",
    "SCREE_OUTAGE_PAUSE_SECONDS",
    "SCREE_OUTAGE_PAUSE_MAX_SECONDS",
    "SCREE_HEALTH_SECONDS",
    "SCREE_LOCK_RETRY_SECONDS",
    "SCREE_QUERY_TIMEOUT_SECONDS",
    "SCREE_INDEX_TIMEOUT_SECONDS",
    "SCREE_WRITER_MAX_RSS_MB",
    "SCREE_WRITER_RESTART_SECONDS",
    "SCREE_WRITER_RESTART_MAX_SECONDS",
    "SCREE_WRITER_HEARTBEAT_SECONDS",
    "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS",
    "SCREE_HTTP_MAX_SESSIONS",
    "SCREE_HTTP_SESSION_IDLE_SECONDS",
    "SCREE_HTTP_MAX_BODY_BYTES",
    "SCREE_HTTP_HEADER_TIMEOUT_SECONDS",
    "SCREE_HTTP_BODY_TIMEOUT_SECONDS",
    "SCREE_HTTP_IDLE_SECONDS",
    "SCREE_HTTP_MAX_CONNECTIONS",
    "SCREE_VECTOR_CACHE_MB",
)


@pytest.mark.parametrize("raw", ["1e300", "inf", "-inf", "nan", "1e12"])
@pytest.mark.parametrize("name", NUMBER_SETTINGS)
def test_a_huge_or_endless_number_setting_is_refused_naming_its_range(
    folder: Path, tmp_path: Path, name: str, raw: str
) -> None:
    from scree.config import load_settings
    from scree.errors import ConfigError
    from scree.reader_proc.http_options import HttpOptions

    env = hash_env(tmp_path / "data", **{name: raw})
    with pytest.raises(ConfigError) as caught:
        load_settings(env, notes=str(folder))
        HttpOptions.load(None, None, None, (), env)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{name}={raw!r} ")
    assert re.search(r"from [\d.]+ to [\d.]+", message), message


@pytest.mark.parametrize("name", ["SCREE_DEBOUNCE_SECONDS", "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS"])
def test_the_writer_breaking_values_are_refused_by_the_command(folder: Path, tmp_path: Path, name: str) -> None:
    done = scree(hash_env(tmp_path / "data", **{name: "1e300"}), "config", "--notes", str(folder))
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert done.stderr.startswith(f"scree: {name}='1e300' is out of range: ") and done.stderr.count("\n") == 1


def test_a_whole_number_setting_refuses_a_fraction(folder: Path, tmp_path: Path) -> None:
    from scree.config import load_settings
    from scree.errors import ConfigError

    with pytest.raises(ConfigError, match=r"SCREE_BATCH_SIZE='8.5' is not a whole number"):
        load_settings(hash_env(tmp_path / "data", SCREE_BATCH_SIZE="8.5"), notes=str(folder))


# --- issue 25 item 9: a setting given in one shell only does not silently remove pages on the next sync ---


def test_a_writer_without_the_extensions_the_index_was_built_with_refuses_to_remove_pages(
    folder: Path, tmp_path: Path, index_backend: Backend
) -> None:
    write_file(folder, "guide.org", "# Guide\n\ntext pages about zebras.\n")
    shell = hash_env(tmp_path / "data", SCREE_EXTENSIONS=".org", **index_backend.env())
    done = scree(shell, "reindex", "--notes", str(folder))
    assert done.returncode == 0 and done.stdout.startswith("Scanned 2 files: 2 indexed"), done.stdout
    plain = hash_env(tmp_path / "data", **index_backend.env())  # another shell, without SCREE_EXTENSIONS
    watched = scree(plain, "watch", "--notes", str(folder), timeout=30)  # it synced and watched forever before
    no_traceback(watched.stderr)
    assert watched.returncode == 1, watched.stderr
    last = watched.stderr.strip().splitlines()[-1]
    assert "SCREE_EXTENSIONS=.org" in last and "would remove" in last and '"scree reindex"' in last, last
    assert keyword_paths(shell, folder, "zebras") == ["guide.org"]  # the page is still there

    again = scree(plain, "reindex", "--notes", str(folder))  # on purpose: done, and said
    assert again.returncode == 0 and "1 removed" in again.stdout, again.stdout
    assert again.stderr.startswith("scree: warning: the index was built with SCREE_EXTENSIONS=.org"), again.stderr
    assert keyword_paths(shell, folder, "zebras") == []
    quiet = scree(plain, "reindex", "--notes", str(folder))  # the new shape is the index's now
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def test_a_lower_max_file_bytes_is_refused_by_the_writer_too(folder: Path, tmp_path: Path) -> None:
    write_file(folder, "big.md", "# Big\n\n" + "elephants roam. " * 200 + "\n")
    shell = hash_env(tmp_path / "data", SCREE_MAX_FILE_BYTES="2000000")
    reindex_here(shell, folder)
    watched = scree(hash_env(tmp_path / "data", SCREE_MAX_FILE_BYTES="1000"), "watch", "--notes", str(folder))
    assert watched.returncode == 1 and "SCREE_MAX_FILE_BYTES=2000000" in watched.stderr, watched.stderr
