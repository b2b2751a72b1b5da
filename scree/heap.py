"""Handing freed memory back to the OS: glibc keeps freed heap pages for reuse unless asked to let them go."""

from __future__ import annotations


def trim_heap() -> None:
    """malloc_trim(0): return free heap pages to the OS; a no-op where the C library is not glibc."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do
