"""The reindex progress line on a terminal (R-L1): its wording (pure), and a stderr that ends the line before any
other output, so a log line or `scree: interrupted` never lands on it. Without a terminal (a pipe, CI, a service
log), a plain line every SCREE_PROGRESS_SECONDS instead, so a long reindex is not silent for minutes (issue 25)."""

from __future__ import annotations

import io
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from scree.replies import size_text

if TYPE_CHECKING:
    from scree.writer_proc.sync import SyncReport

REDRAW_S = 0.2  # at most five redraws a second: a fast sync would otherwise spend its time on the terminal
CLEAR_TO_END = "\x1b[K"
FALLBACK_COLUMNS = 80  # a terminal that reports no width


@dataclass(frozen=True, slots=True)
class Snapshot:
    """How far one reindex got: files and bytes visited of those it will visit, chunks embedded, seconds so far."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    chunks_embedded: int
    elapsed_s: float


def duration_text(seconds: float) -> str:
    """7s, 4m10s, 1h02m."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def rate_text(bytes_done: int, elapsed_s: float) -> str:
    """Bytes a second in a unit that shows the digits (13.2 KB/s, not 0.0 MB/s)."""
    return size_text(bytes_done / max(elapsed_s, 1e-3)) + "/s"


def progress_line(s: Snapshot) -> str:
    """`312/1685 files, 1.2/4.8 MB, 448 chunks embedded, 13.2 KB/s, ETA 4m10s`: the ETA from bytes, which is what
    embedding time follows (a file count is off by the spread of file sizes)."""
    line = (
        f"{s.files_done}/{s.files_total} files, {size_text(s.bytes_done)}/{size_text(s.bytes_total)}, "
        f"{s.chunks_embedded} chunks embedded"
    )
    if s.bytes_done <= 0 or s.elapsed_s <= 0:
        return line + ", ETA unknown"
    left = max(s.bytes_total - s.bytes_done, 0) * s.elapsed_s / s.bytes_done
    return f"{line}, {rate_text(s.bytes_done, s.elapsed_s)}, ETA {duration_text(left)}"


def final_line(files: int, chunks: int, embedded: int, bytes_done: int, elapsed_s: float) -> str:
    """The last line: what the index holds now (the figures `scree status` shows) and what this run did."""
    return (
        f"done: {files} files, {chunks} chunks in the index ({embedded} embedded now), "
        f"{size_text(bytes_done)} in {duration_text(elapsed_s)}, {rate_text(bytes_done, elapsed_s)}"
    )


class LineAwareStream(io.TextIOBase):
    """A terminal's stderr with one redrawable status line: any other write ends that line first."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._lock = threading.RLock()
        self._line_open = False

    def show(self, text: str, *, cut: bool = True) -> None:
        """Redraw the status line, cut to the terminal's width (a wrapped line cannot be redrawn in place)."""
        try:
            width = os.get_terminal_size(self._stream.fileno()).columns or FALLBACK_COLUMNS
        except (OSError, ValueError):
            width = FALLBACK_COLUMNS
        with self._lock:
            self._line_open = True  # first: a ^C that lands during the write below still finds the line open
            self._stream.write("\r" + (text[: max(width - 1, 10)] if cut else text) + CLEAR_TO_END)
            self._stream.flush()

    def end_line(self) -> None:
        with self._lock:
            if self._line_open:  # cleared after the write: a ^C during it leaves the line to be ended again
                self._stream.write("\n")
                self._stream.flush()
                self._line_open = False

    def write(self, text: str) -> int:
        with self._lock:
            if text:
                self.end_line()
            return self._stream.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()


class ProgressPrinter:
    """The Progress callback of a terminal reindex: redraws `progress_line` at most every REDRAW_S."""

    every_s = REDRAW_S

    def __init__(self, line: LineAwareStream) -> None:
        self._line = line
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._bytes_done = 0  # never drawn going back: text queued for the embedder is taken off what was visited

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._started

    def __call__(self, report: SyncReport, total: int) -> None:
        now = time.monotonic()
        if now - self._last_draw < self.every_s:
            return
        self._last_draw = now
        self._bytes_done = max(self._bytes_done, report.bytes_visited - report.bytes_waiting)
        snapshot = Snapshot(
            files_done=report.scanned,
            files_total=total,
            bytes_done=self._bytes_done,
            bytes_total=report.bytes_total,
            chunks_embedded=report.chunks_embedded,
            elapsed_s=now - self._started,
        )
        self._draw(progress_line(snapshot))

    def _draw(self, text: str) -> None:
        self._line.show(text)

    def finish(self, text: str) -> None:
        """Replace the status line with its last words and end it."""
        self._line.show(text, cut=False)  # not redrawn again: it may wrap
        self._line.end_line()


class PlainProgress(ProgressPrinter):
    """The Progress callback of a reindex without a terminal: `scree: reindex: <progress_line>` on a line of its own
    every `every_s` (the first after `every_s` too, so a short run stays quiet); no final line (stdout has it)."""

    def __init__(self, stream: TextIO, every_s: float) -> None:
        super().__init__(LineAwareStream(stream))
        self._stream = stream
        self.every_s = every_s
        self._last_draw = time.monotonic()  # the first line after every_s, not at once

    def _draw(self, text: str) -> None:
        self._stream.write(f"scree: reindex: {text}\n")
        self._stream.flush()

    def finish(self, text: str) -> None:
        return
