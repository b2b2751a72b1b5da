"""Safe reading of notes (R-I2, R-I3): FIFOs, symlinks, swaps, binary and odd bytes, size caps."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import pytest

from scree.content.files import FileContent, Skipped, _open_folder, read_markdown, stat_file

MAX = 1_000_000
DEADLINE_S = 5.0
T = TypeVar("T")
TraceFunction = Callable[[FrameType, str, Any], Any]


def _within_deadline(call: Callable[[], T], unblock: Path | None = None) -> T:
    """Run `call` in a thread; a call that blocks fails the test instead of hanging it."""
    results: list[T] = []
    worker = threading.Thread(target=lambda: results.append(call()), daemon=True)
    worker.start()
    worker.join(DEADLINE_S)
    if worker.is_alive():
        if unblock is not None:  # let the stuck open() return so the thread can end
            os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"call still blocked after {DEADLINE_S} s")
    return results[0]


def _content(result: FileContent | Skipped | None) -> FileContent:
    assert isinstance(result, FileContent), result
    return result


def test_fifo_named_md_is_skipped_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.md")
    result = _within_deadline(lambda: read_markdown(tmp_path, "x.md", MAX), unblock=tmp_path / "x.md")
    assert result == Skipped("not a regular file")


def test_directory_named_md_is_not_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "x.md").mkdir()
    assert read_markdown(tmp_path, "x.md", MAX) == Skipped("not a regular file")


def test_symlink_named_md_is_never_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.md").write_text("outside\n")
    (root / "inside.md").write_text("inside\n")
    (root / "x.md").symlink_to(tmp_path / "secret.md")
    (root / "y.md").symlink_to(root / "inside.md")
    assert read_markdown(root, "x.md", MAX) == Skipped("symlink")
    assert read_markdown(root, "y.md", MAX) == Skipped("symlink")


def test_symlinked_folder_in_the_path_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("outside\n")
    (root / "docs" / "real.md").write_text("inside\n")
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "docs" / "deeper").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "alias").symlink_to(root / "docs", target_is_directory=True)
    assert read_markdown(root, "escape/secret.md", MAX) == Skipped("a folder in its path is a symlink")
    assert read_markdown(root, "docs/deeper/secret.md", MAX) == Skipped("a folder in its path is a symlink")
    # Even a symlink that stays inside the folder: the walk never follows one, so neither does reading.
    assert read_markdown(root, "alias/real.md", MAX) == Skipped("a folder in its path is a symlink")
    assert _content(read_markdown(root, "docs/real.md", MAX)).text == "inside\n"


def test_root_below_a_symlink_is_fine(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("hello\n")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert _content(read_markdown(tmp_path / "link", "a.md", MAX)).text == "hello\n"


def test_missing_file_or_folder_is_none(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\n")
    assert read_markdown(tmp_path, "gone.md", MAX) is None
    assert read_markdown(tmp_path, "no/such/dir.md", MAX) is None
    assert read_markdown(tmp_path, "a.md/below.md", MAX) is None
    assert read_markdown(tmp_path / "nowhere", "a.md", MAX) is None


@pytest.mark.parametrize("rel", ["../x.md", "/etc/x.md", "a//b.md", "./a.md", "", "a/../b.md", "a\0.md"])
def test_paths_leaving_the_folder_are_refused(tmp_path: Path, rel: str) -> None:
    (tmp_path / "a").mkdir()
    assert read_markdown(tmp_path / "a", rel, MAX) == Skipped("not a relative path inside the folder")


def test_nul_bytes_early_mean_binary(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"# title\n\x00\x01\x02 data")
    assert read_markdown(tmp_path, "bin.md", MAX) == Skipped("binary (NUL bytes)")
    # git's rule: only the first 8000 bytes are looked at.
    (tmp_path / "late.md").write_bytes(b"a" * 8000 + b"\x00tail")
    assert _content(read_markdown(tmp_path, "late.md", MAX)).text.endswith("\x00tail")


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        pytest.param(
            b"caf\xe9 \xff\xfe ok \xc3\xa9\n",
            "caf\ufffd \ufffd\ufffd ok \u00e9\n",
            id="invalid-utf8-replaced-not-fatal",
        ),
        pytest.param(b"", "", id="empty-file-is-empty-text"),
        pytest.param(
            b"\xef\xbb\xbf# Title\r\nline two\rline three\n\r\n",
            "# Title\nline two\nline three\n\n",
            id="line-endings-normalised-and-bom-dropped",
        ),
    ],
)
def test_odd_bytes_decode_to_text_while_hash_and_size_are_of_the_bytes_on_disk(
    tmp_path: Path, raw: bytes, text: str
) -> None:
    (tmp_path / "note.md").write_bytes(raw)
    content = _content(read_markdown(tmp_path, "note.md", MAX))
    assert content.text == text
    assert content.sha256 == hashlib.sha256(raw).hexdigest()
    assert content.size == len(raw)


def test_size_cap(tmp_path: Path) -> None:
    (tmp_path / "exact.md").write_bytes(b"x" * 100)
    (tmp_path / "over.md").write_bytes(b"x" * 101)
    assert _content(read_markdown(tmp_path, "exact.md", 100)).size == 100
    assert read_markdown(tmp_path, "over.md", 100) == Skipped("larger than SCREE_MAX_FILE_BYTES (100 bytes)")


def test_mtime_and_nested_paths(tmp_path: Path) -> None:
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    path = tmp_path / "docs" / "deep" / "n.md"
    path.write_text("# n\n")
    os.utime(path, ns=(1_000_000_000, 1_700_000_000_123_456_789))
    content = _content(read_markdown(tmp_path, "docs/deep/n.md", MAX))
    assert content.mtime_ns == 1_700_000_000_123_456_789


def test_stat_file(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("12345")
    (tmp_path / "l.md").symlink_to(tmp_path / "a.md")
    found = stat_file(tmp_path, "a.md")
    assert found is not None and found.st_size == 5
    link = stat_file(tmp_path, "l.md")
    assert link is not None and link.st_ino != found.st_ino  # lstat: the link itself
    assert stat_file(tmp_path, "missing.md") is None
    assert stat_file(tmp_path, "a.md/x.md") is None


def test_swapping_the_file_underneath_never_blocks_or_leaks(tmp_path: Path) -> None:
    """Another process keeps replacing x.md with a FIFO, a symlink out of the folder and a regular file."""
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.md").write_text("SECRET\n")
    target = root / "x.md"
    target.write_text("regular\n")
    stop = threading.Event()

    def swap() -> None:
        turn = 0
        while not stop.is_set():
            staged = root / f"staged{turn % 3}"
            if turn % 3 == 0:
                os.mkfifo(staged)
            elif turn % 3 == 1:
                staged.symlink_to(tmp_path / "secret.md")
            else:
                staged.write_text("regular\n")
            os.replace(staged, target)
            turn += 1

    def read_many() -> set[str]:
        seen: set[str] = set()
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            result = read_markdown(root, "x.md", MAX)
            seen.add(result.text if isinstance(result, FileContent) else repr(result))
        return seen

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        seen = _within_deadline(read_many)
    finally:
        stop.set()
        swapper.join(DEADLINE_S)
    assert not any("SECRET" in item for item in seen), seen
    allowed = {"regular\n", repr(Skipped("symlink")), repr(Skipped("not a regular file")), "None"}
    allowed.add(repr(Skipped("replaced while being opened")))
    assert seen <= allowed, seen


def _interrupted_at(line: int, call: Callable[[], object], code_names: frozenset[str]) -> BaseException | None:
    """Run `call`, raising KeyboardInterrupt before the `line`-th statement executed in the functions named
    `code_names` (a Ctrl-C lands between any two statements); what escaped, None when it ran to the end first."""
    seen = [0]

    def local(frame: FrameType, event: str, arg: object) -> TraceFunction:
        if event == "line":
            seen[0] += 1
            if seen[0] == line:
                raise KeyboardInterrupt
        return local

    def outer(frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        return local if frame.f_code.co_name in code_names else None

    sys.settrace(outer)
    try:
        call()
    except BaseException as exc:  # what escaped is what the test looks at
        return exc
    finally:
        sys.settrace(None)
    return None


def test_a_ctrl_c_between_any_two_statements_of_a_read_escapes_as_itself(tmp_path: Path) -> None:
    """A Ctrl-C during `scree reindex` once ended 'scree: Bad file descriptor', exit 1: read_markdown closed the
    folder it had walked through, was interrupted before it held the next one, and its finally closed the first
    again (EBADF replaced the KeyboardInterrupt; the descriptor could also have been another thread's by then).
    Interrupted before each statement in turn, the read lets KeyboardInterrupt out and closes no descriptor twice."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "page.md").write_text("# Page\n\nText.\n")
    names = frozenset({"read_markdown", "_read_in", "_read_open", "_folder_error"})
    escaped: list[BaseException] = []
    line = 1
    while (got := _interrupted_at(line, lambda: read_markdown(tmp_path, "a/b/page.md", MAX), names)) is not None:
        escaped.append(got)
        line += 1
    assert line > 10 and all(type(exc) is KeyboardInterrupt for exc in escaped), escaped
    assert _content(read_markdown(tmp_path, "a/b/page.md", MAX)).text == "# Page\n\nText.\n"
    # the walk that lists a folder whose path is over PATH_MAX (scandir_by_names) goes down one name at a time alike
    escaped, line, walk = [], 1, frozenset({"_open_folder"})
    while (got := _interrupted_at(line, lambda: os.close(_open_folder(str(tmp_path), "a/b")), walk)) is not None:
        escaped.append(got)
        line += 1
    assert line > 4 and all(type(exc) is KeyboardInterrupt for exc in escaped), escaped
