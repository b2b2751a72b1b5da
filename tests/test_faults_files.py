"""Faults of the folder itself (issue 13, items 1-4; SPEC §11, R-I1): bad names, unreadable files and folders,
a failed `reindex --all`, a full disk. Each is injected for real and must lose no row and print no traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import reindex_here, wait_until, write_file
from embed_server import EmbedServer
from fault_helpers import api_env, hash_env, keyword_paths, no_traceback, scree, status, unprivileged

BAD_NAME = b"bad\xff.md"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "good.md", "# Good\n\ngooseberries in the garden\n")
    for i in range(3):
        write_file(root, f"docs/d{i}.md", f"# Doc {i}\n\ndamsons number{i} in the docs\n")
    return root


@pytest.fixture
def restore_modes(folder: Path) -> Iterator[None]:
    """Give every path its owner's rights back, so pytest can remove the tree."""
    yield
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            os.chmod(os.path.join(dirpath, name), 0o700)


def make_bad_name(folder: Path) -> None:
    fd = os.open(os.path.join(os.fsencode(folder), BAD_NAME), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"# Bad\n\nbadgers\n")
    os.close(fd)


# --- item 1: a name that is not valid UTF-8 ---


def start_watch(env: dict[str, str], folder: Path, prefix: list[str] | None = None) -> subprocess.Popen[str]:
    """`scree watch` on `folder` (run under `prefix`, e.g. without root's file-access override), its stderr piped."""
    return subprocess.Popen(
        [*(prefix or []), sys.executable, "-m", "scree.cli", "watch", "--notes", str(folder)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(folder: Path, tmp_path: Path) -> None:
    make_bad_name(folder)
    env = hash_env(tmp_path / "data")
    done = scree(env, "reindex", "--notes", str(folder))
    no_traceback(done.stderr)
    assert done.returncode == 0, done.stderr
    assert "Scanned 5 files: 4 indexed, 0 removed, 0 failed, 0 deferred." in done.stdout
    assert "  skipped bad\\xff.md: file name is not valid UTF-8" in done.stdout
    assert keyword_paths(env, folder, "gooseberries") == ["good.md"]
    again = scree(env, "reindex", "--notes", str(folder))  # a second sync against a full index: same answer
    assert again.returncode == 0 and "0 indexed" in again.stdout, again.stderr


def test_a_bad_name_created_while_watching_does_not_stop_indexing(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data", SCREE_LOG_FORMAT="json")
    reindex_here(env, folder)
    watch = start_watch(env, folder)
    try:
        wait_until(lambda: status(env, folder)["writer_pid"] == watch.pid, "watch holds the lock", 15)
        make_bad_name(folder)
        write_file(folder, "good.md", "# Good\n\nquinces now\n")
        wait_until(lambda: keyword_paths(env, folder, "quinces") == ["good.md"], "the edit indexed", 15)
        assert watch.poll() is None
    finally:
        watch.terminate()
        _, err = watch.communicate(timeout=10)
    no_traceback(err)
    assert "file name is not valid UTF-8" in err


# --- item 3: unreadable is not deleted ---


@pytest.mark.usefixtures("restore_modes")
def test_an_unreadable_folder_keeps_its_rows_counts_as_failed_and_exits_1(
    folder: Path, tmp_path: Path, index_backend: Backend
) -> None:
    env = hash_env(tmp_path / "data", **index_backend.env())
    reindex_here(env, folder)
    os.chmod(folder / "docs", 0)
    done = scree(env, "reindex", "--notes", str(folder), prefix=unprivileged())
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert "Scanned 4 files: 0 indexed, 0 removed, 3 failed, 0 deferred." in done.stdout
    assert "  skipped docs/d0.md: cannot read folder docs: Permission denied" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == (
        "scree: 3 files could not be read and kept their old rows (see the skipped lines above)"
    )
    assert status(env, folder)["files"] == 4
    assert keyword_paths(env, folder, "damsons") == ["docs/d0.md", "docs/d1.md", "docs/d2.md"]


@pytest.mark.usefixtures("restore_modes")
def test_an_unreadable_file_keeps_its_rows_in_a_full_and_a_one_path_reindex(
    folder: Path, tmp_path: Path, index_backend: Backend
) -> None:
    env = hash_env(tmp_path / "data", **index_backend.env())
    reindex_here(env, folder)
    os.chmod(folder / "good.md", 0)
    done = scree(env, "reindex", "--notes", str(folder), prefix=unprivileged())
    assert done.returncode == 1, done.stdout
    assert "Scanned 4 files: 0 indexed, 0 removed, 1 failed, 0 deferred." in done.stdout
    assert "  skipped good.md: cannot read: Permission denied" in done.stdout
    one = scree(env, "reindex", "--notes", str(folder), "good.md", prefix=unprivileged())
    no_traceback(one.stderr)
    assert one.returncode == 1
    assert '"good.md" is not indexed: cannot read: Permission denied.' in one.stdout
    assert keyword_paths(env, folder, "gooseberries") == ["good.md"]


@pytest.mark.usefixtures("restore_modes")
def test_too_few_file_descriptors_never_read_as_deleted(folder: Path, tmp_path: Path) -> None:
    """`ulimit -n` so low that opening the index, folders or files fails with EMFILE: nothing is removed, no
    traceback, and a run that could not read everything exits 1."""
    env = hash_env(tmp_path / "data")
    for i in range(10):
        write_file(folder, f"deep/a/b/c/e/f{i}.md", f"# F{i}\n\nfigs {i}\n")
    reindex_here(env, folder)
    before = status(env, folder)["files"]
    outcomes = set()
    for limit in (6, 7, 8, 10):
        done = scree(env, "reindex", "--notes", str(folder), prefix=["prlimit", f"--nofile={limit}"])
        no_traceback(done.stderr)
        assert " 0 removed" in done.stdout or not done.stdout, done.stdout
        assert done.returncode == (0 if "0 failed, 0 deferred" in done.stdout else 1), (limit, done.stderr)
        outcomes.add(done.returncode)
    assert outcomes == {0, 1}  # some limits were too low: the fault was really injected
    assert status(env, folder)["files"] == before


# --- item 2: reindex --all keeps the old index until the new one is complete ---


def test_a_failed_reindex_all_keeps_the_old_index_and_says_so(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, index_backend: Backend
) -> None:
    env = api_env(tmp_path / "data", embed_server.url, **index_backend.env())
    reindex_here(env, folder)
    write_file(folder, "new.md", "# New\n\nnectarines\n")
    embed_server.set(fail_status=500, retry_after="0")  # no backoff to sit through
    done = scree(env, "reindex", "--all", "--notes", str(folder))
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert "the old index is kept" in done.stderr
    info = status(env, folder)
    assert info["files"] == 4 and info["first_sync_done"] is True
    assert keyword_paths(env, folder, "gooseberries") == ["good.md"]
    embed_server.set(fail_status=401)
    refused = scree(env, "reindex", "--all", "--notes", str(folder))
    assert refused.returncode == 1 and "rejected the key" in refused.stderr
    assert status(env, folder)["files"] == 4
    embed_server.set(fail_status=None)
    rebuilt = scree(env, "reindex", "--all", "--notes", str(folder))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "Scanned 5 files: 5 indexed" in rebuilt.stdout
    assert status(env, folder)["files"] == 5
    assert not list((tmp_path / "data").rglob("*.rebuild*"))


def test_outage_line_counts_new_files_apart_from_those_keeping_rows(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, index_backend: Backend
) -> None:
    env = api_env(tmp_path / "data", embed_server.url, **index_backend.env())
    reindex_here(env, folder)
    write_file(folder, "new.md", "# New\n\nnectarines\n")
    write_file(folder, "good.md", "# Good\n\nchanged\n")
    embed_server.set(fail_status=503, retry_after="0")
    done = scree(env, "reindex", "--notes", str(folder))
    assert done.returncode == 1
    assert "Scanned 5 files: 0 indexed, 0 removed, 0 failed, 2 deferred." in done.stdout
    assert "2 files not indexed (1 keeps its old rows, 1 new one is not in the index yet)" in done.stderr


# --- item 4: a full disk ---

FULL_DISK_SCRIPT = """
set -u
mount -t tmpfs -o size=3m tmpfs "$DISK" || exit 99
"$PY" -m scree.cli reindex --notes "$NOTES"
echo "reindex-exit=$?"
"$PY" -c 'import sys; from pathlib import Path; from scree.store import SqliteReader
s = SqliteReader.open(Path(sys.argv[1]), Path(sys.argv[2])); print("integrity=" + s.integrity_check())
print("files=%d chunks=%d" % s.counts())' "$DISK/index.db" "$NOTES"
"""


def test_a_full_disk_is_one_line_exit_1_and_the_index_stays_consistent(folder: Path, tmp_path: Path) -> None:
    """SCREE_DB on a 3 MB tmpfs, mounted in a private mount namespace (unshare -m) that ends with the test."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.fail("the full-disk test mounts a tmpfs: it needs root and unshare(1)")
    for i in range(600):
        write_file(folder, f"many/m{i}.md", f"# M{i}\n\n" + f"mulberries{i} and more words " * 100 + "\n")
    disk = tmp_path / "disk"
    disk.mkdir()
    env = hash_env(tmp_path / "data", SCREE_DB=str(disk / "index.db"), DISK=str(disk), NOTES=str(folder))
    env["PY"] = sys.executable
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", FULL_DISK_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 99, done.stderr
    no_traceback(done.stderr)
    assert "reindex-exit=1" in done.stdout, (done.stdout, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("scree:")]
    assert errors == [
        f"scree: cannot write the index {disk / 'index.db'}: the disk is full (or the file size limit was "
        "reached); nothing was lost, free some space and retry"
    ]
    assert "integrity=ok" in done.stdout


def test_an_outage_part_way_counts_every_listed_file_once(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, index_backend: Backend
) -> None:
    """Scanned N adds up: files never visited because the API failed part way are deferred and counted as scanned
    (it once said 'Scanned 18 files: ... 20 deferred')."""
    env = api_env(tmp_path / "data", embed_server.url, SCREE_BATCH_SIZE="1", **index_backend.env())
    reindex_here(env, folder)
    for rel in ("good.md", "docs/d0.md", "docs/d1.md", "docs/d2.md"):
        write_file(folder, rel, f"# Changed\n\nchanged {rel}\n")
    embed_server.set(fail_status=503, retry_after="0")
    done = scree(env, "reindex", "--notes", str(folder))
    assert done.returncode == 1
    assert "Scanned 4 files: 0 indexed, 0 removed, 0 failed, 4 deferred." in done.stdout
    assert "4 files not indexed (4 keep their old rows)" in done.stderr


@pytest.mark.usefixtures("restore_modes")
def test_a_folder_made_unreadable_under_a_running_watch_keeps_its_rows(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data", SCREE_LOG_FORMAT="json")
    reindex_here(env, folder)
    watch = start_watch(env, folder, unprivileged())
    try:
        wait_until(lambda: status(env, folder)["writer_pid"] is not None, "watch holds the lock", 15)
        os.chmod(folder / "docs", 0)
        write_file(folder, "good.md", "# Good\n\nquinces now\n")  # an edit after it: proof the events were taken
        wait_until(lambda: keyword_paths(env, folder, "quinces") == ["good.md"], "the edit indexed", 15)
        assert status(env, folder)["files"] == 4
        os.chmod(folder / "docs", 0o755)
        assert keyword_paths(env, folder, "damsons") == ["docs/d0.md", "docs/d1.md", "docs/d2.md"]
        assert watch.poll() is None
    finally:
        watch.terminate()
        _, err = watch.communicate(timeout=10)
    no_traceback(err)


# --- issue 25 item 9: a folder with no markdown says so ---

ENDINGS = ".md, .markdown, .mdx, .rst, .rest, .txt, .adoc, .asciidoc, .asc"  # issue 33: the table of formats' endings


@pytest.mark.parametrize("content", [{}, {"requirements.txt": "alpha\n", "sub/readme.org": "alpha\n"}])
def test_a_folder_without_markdown_says_so_naming_scree_extensions(tmp_path: Path, content: dict[str, str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    for rel, text in content.items():
        write_file(folder, rel, text)
    env = hash_env(tmp_path / "data")
    done = scree(env, "reindex", "--notes", str(folder))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Scanned 0 files")
    assert lines[1] == (
        f"No docs files in {folder}: scree indexes files ending in {ENDINGS}; SCREE_EXTENSIONS "
        "adds other endings (SCREE_EXTENSIONS=.org)."
    )
    for mode in ("keyword", "hybrid"):
        found = scree(env, "search", "--mode", mode, "--notes", str(folder), "alpha")
        assert found.returncode == 0, found.stderr
        assert found.stdout.splitlines() == [
            "No matching documents.",
            f"[no docs files: {folder} has no files ending in {ENDINGS}; SCREE_EXTENSIONS adds other endings]",
        ]
