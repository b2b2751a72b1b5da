"""A stderr that never blocks the thread writing to it (issue 34): serve's stderr is a pipe to the MCP client, and a
client that stops reading it froze every writer thread at its next log line.

Lines go to a bounded buffer that one daemon thread writes out; when the buffer is full, lines are dropped and
counted, and the count is written once the pipe takes lines again. The thread writes through an open file of the
pipe of its own, non-blocking, and waits for room in poll(): no thread of the process ever sleeps in a pipe write,
and the flag never reaches the other processes sharing fd 2 (O_NONBLOCK on fd 2 itself would be theirs too).
"""

from __future__ import annotations

import io
import os
import select
import stat
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

MAX_PENDING_BYTES = 256 * 1024  # a few thousand log lines: a burst while the reader is slow, not a leak
POLL_MS = 1000


class NonBlockingStderr(io.TextIOBase):
    """A text stream over `fd` (2) whose write() only queues. `on_dropped(count)` is called from the writing thread
    when lines were dropped and the pipe takes lines again, to log how many (scree.logs, in the log's own format);
    by default a plain line says so."""

    encoding = "utf-8"  # what libraries that print to sys.stderr ask of it
    errors = "backslashreplace"

    def __init__(self, fd: int = 2, on_dropped: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self._fd = fd
        self._out, self._waits = _own_description(fd)
        self._on_dropped = on_dropped or (lambda count: self.write(f"{count} log lines dropped: stderr was not read\n"))
        self._pending: deque[bytes] = deque()
        self._size = 0
        self._dropped = 0
        self._busy = False  # the thread holds a line it has not written yet
        self._lines_written = 0  # progress, for drain()
        self._direct = False  # direct(): write() writes itself
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._drain, name="scree-stderr", daemon=True)
        self._thread.start()

    @property
    def dropped(self) -> int:
        """Lines dropped and not yet reported."""
        with self._changed:
            return self._dropped

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd  # faulthandler and the like write to the real fd themselves

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    @contextmanager
    def direct(self) -> Iterator[None]:
        """Within: write() writes in the calling thread, blocking, as a plain stderr does; for the last lines of a
        process whose exit a kernel deadline already bounds (signals.hard_exit_in), which must not wait on a thread."""
        self._direct = True
        try:
            yield
        finally:
            self._direct = False

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        if self._direct:
            self._write(data, self._fd)
            return len(text)
        with self._changed:
            if self._size + len(data) > MAX_PENDING_BYTES:
                self._dropped += max(1, text.count("\n"))
            else:
                self._pending.append(data)
                self._size += len(data)
                self._changed.notify_all()
        return len(text)

    def flush(self) -> None:
        """Never waits (structlog flushes after every line): drain() waits, with a deadline."""

    def drain(self, timeout: float) -> bool:
        """Wait for every queued line to be written while the pipe takes one at least every `timeout` seconds: a
        reader that is slow but reading gets them all (the last line, often why the process ends, is behind the
        others), a pipe nobody reads costs `timeout`. Whether they all were."""
        with self._changed:
            while self._pending or self._busy:
                if not self._changed.wait_for(partial(self._wrote_since, self._lines_written), timeout):
                    return False
            return True

    def _wrote_since(self, lines: int) -> bool:
        return self._lines_written != lines

    def _drain(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._pending))
                data = self._pending.popleft()
                self._size -= len(data)
                self._busy = True
            written = self._write(data)
            with self._changed:
                dropped, self._dropped = (self._dropped, 0) if written else (0, self._dropped)
            if dropped:  # the pipe takes lines again: say how many it missed
                self._on_dropped(dropped)
            with self._changed:
                self._busy = False
                self._lines_written += 1
                self._changed.notify_all()

    def _write(self, data: bytes, out: int | None = None) -> bool:
        """Write all of `data` to `out` (this stream's own non-blocking file unless given: direct() gives the blocking
        fd), waiting in poll() for room; False when the pipe is gone (nothing left to read it)."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._out if out is None else out, view) :]
            except BlockingIOError:
                self._waits.poll(POLL_MS)
            except InterruptedError:
                continue
            except OSError:
                return False
        return True


def _own_description(fd: int) -> tuple[int, select.poll]:
    """A non-blocking open file of the pipe `fd` is, of this process alone (reopened through /proc), and a poll
    that waits for room in it; `fd` itself (blocking, only in the writing thread) when it is no pipe or /proc is
    not there."""
    out = fd
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            out = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        out = fd
    waits = select.poll()
    waits.register(out, select.POLLOUT)
    return out, waits
