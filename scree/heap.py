"""Handing memory back to the OS: glibc keeps freed heap pages for reuse unless asked to let them go, and serves
blocks from its heap that it would otherwise map on their own; a library's code pages stay in the process once run.
Everything here is a no-op where the C library is not glibc (or, for library pages, /proc/self/smaps is missing)."""

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


MADV_RANDOM = 1  # Linux's madvise advice: no read-ahead and no fault-around in the range
MADV_DONTNEED = 4  # drop the range's pages from this process


def release_library_pages(*folders: str) -> float:
    """Drop from this process the resident pages of the libraries mapped from under `folders` that are the files'
    own (never-written code and read-only data); returns the MiB dropped.

    Only mappings that cannot be written and hold no page of their own (smaps' Anonymous: 0, so no relocated copy
    that dropping would lose) are touched: their pages stay in the OS's page cache, and the next call into the code
    maps the few it needs back (a minor fault). OpenVINO's libraries left ~42 MB resident after compiling the offline
    model, most of it graph transformations that never run again; running the compiled model maps ~12 MB back.
    """
    import ctypes

    madvise: Any = _libc_call("madvise")
    if madvise is None:
        return 0.0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]  # addresses do not fit a C int
    dropped_kb = 0
    for start, end, resident_kb in _clean_library_mappings(*folders):
        # MADV_RANDOM first: a fault then maps back the one page it needs, not the 64 KiB around it
        madvise(start, end - start, MADV_RANDOM)
        if madvise(start, end - start, MADV_DONTNEED) == 0:
            dropped_kb += resident_kb
    return dropped_kb / 1024


def _clean_library_mappings(*folders: str) -> list[tuple[int, int, int]]:
    """(start, end, resident KiB) of the mappings from files under `folders` that cannot be written and hold no
    anonymous page, from /proc/self/smaps; [] where it cannot be read."""
    prefixes = tuple(folder.rstrip("/") + "/" for folder in folders)
    found: list[tuple[int, int, int]] = []
    current: list[int] | None = None  # start, end, resident KiB, anonymous KiB of a candidate mapping
    try:
        with open("/proc/self/smaps", encoding="utf-8", errors="replace") as smaps:
            for line in smaps:
                fields = line.split()
                if not fields:
                    continue
                if fields[0].endswith(":"):
                    if current is not None and fields[0] in ("Rss:", "Anonymous:"):
                        current[2 if fields[0] == "Rss:" else 3] = int(fields[1])
                    continue
                if current is not None and current[2] > 0 and current[3] == 0:
                    found.append((current[0], current[1], current[2]))
                current = None
                # a mapping's first line: start-end perms offset device inode [path]
                if len(fields) >= 6 and fields[5].startswith(prefixes) and "w" not in fields[1]:
                    start, end = (int(part, 16) for part in fields[0].split("-"))
                    current = [start, end, 0, -1]
    except OSError:
        return []
    if current is not None and current[2] > 0 and current[3] == 0:
        found.append((current[0], current[1], current[2]))
    return found


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
