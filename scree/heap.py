"""Handing freed memory back to the OS: glibc keeps freed heap pages for reuse unless asked to let them go, and
serves blocks from its heap that it would otherwise map on their own. Everything here is a no-op where the C library
is not glibc."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

M_MMAP_THRESHOLD = -3  # mallopt's parameter number in glibc's malloc.h
EACH_BIG_BLOCK_MAPPED = 128 * 1024  # glibc's starting threshold: every block this large is a memory map of its own
HEAP_THRESHOLD_AFTER = 32 * 1024 * 1024  # DEFAULT_MMAP_THRESHOLD_MAX: where glibc's own raising of it ends up


def _libc_call(name: str) -> Callable[..., Any] | None:
    import ctypes  # on first use: a reader that is never called never loads it

    try:
        function: Callable[..., Any] = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError, TypeError):  # TypeError: Windows has no handle on the process's own symbols
        return None  # not glibc
    return function


def trim_heap() -> None:
    """malloc_trim(0): return free heap pages to the OS."""
    trim = _libc_call("malloc_trim")
    if trim is not None:
        trim(0)


@contextmanager
def big_blocks_mapped() -> Iterator[None]:
    """Inside, every block of 128 KiB or more is a memory map of its own, unmapped the moment it is freed.

    glibc starts so, but raises the threshold to the size of each mapped block freed: after the first big temporary,
    the next ones come from the heap, where the long-lived blocks allocated among them pin the freed space (a model
    load left 6 MB so, which malloc_trim could not return). On leaving, the threshold is set where glibc's raising
    ends up (32 MiB), so work after it (chunk batches) keeps reusing heap blocks instead of faulting in fresh maps.
    """
    mallopt = _libc_call("mallopt")
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, EACH_BIG_BLOCK_MAPPED)
    try:
        yield
    finally:
        if mallopt is not None:
            mallopt(M_MMAP_THRESHOLD, HEAP_THRESHOLD_AFTER)


class TrimWhenQuiet:
    """Trims the heap once `quiet_s` seconds have passed since the last `poke`: a burst of work pays nothing, and the
    pages it freed go back before the process sits idle (a reader's tool calls run on worker threads, whose malloc
    arenas keep ~1 MB freed by a search otherwise, issue 24)."""

    def __init__(self, quiet_s: float, trim: Callable[[], None] = trim_heap) -> None:
        self._quiet_s = quiet_s
        self._trim = trim
        self._poked = threading.Event()
        self._started = False
        self._start_lock = threading.Lock()

    def poke(self) -> None:
        self._poked.set()
        with self._start_lock:
            if not self._started:
                threading.Thread(target=self._run, name="scree-trim", daemon=True).start()
                self._started = True

    def _run(self) -> None:
        while True:
            self._poked.wait()
            self._poked.clear()
            while self._poked.wait(self._quiet_s):  # poked again within quiet_s: the burst goes on
                self._poked.clear()
            self._trim()
