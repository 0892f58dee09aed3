"""Giving a finished run's heap back to the system (the process's memory; *memory* in
alphadesk is the vector memory of past decisions, ``alphadesk.memory``).

A run's objects are freed when it ends (nothing of it stays referenced), but glibc's malloc
keeps the freed heap of every thread's arena for reuse: without help, a server's resident
memory stays at the peak of its busiest moment. When the last run in progress ends, the
server or the worker process asks malloc to return its free pages (``malloc_trim``, in a
thread of its own: it takes a fraction of a second on a large heap and releases the GIL).
Elsewhere than glibc, a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from functools import cache

__all__ = ["trim_heap"]

_trimming = threading.Lock()  # one trim at a time


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc
        return None
    return trim


def trim_heap() -> None:
    """Return the heap's free pages to the system, in the background."""
    trim = _malloc_trim()
    if trim is None or not _trimming.acquire(blocking=False):
        return

    def run() -> None:
        try:
            trim(0)
        finally:
            _trimming.release()

    threading.Thread(target=run, name="malloc-trim", daemon=True).start()
