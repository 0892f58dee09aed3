"""How worker processes start on this machine (a screen's and an evaluation's batches).

Fork while this process has a single thread: the workers inherit everything loaded and
start at once. Otherwise (a progress bar's refresh thread, a checkpoint connection) a fork
copies no other thread, so a lock one of them held would stay held in the worker forever:
then a fork server that has loaded ``preload`` once, so each worker forks from it ready
instead of importing everything again.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from multiprocessing.context import BaseContext

__all__ = ["can_fork", "exit_with_parent", "start_method"]


def can_fork() -> bool:
    """Whether workers can be forked from this process (it has a single thread)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def start_method(preload: Sequence[str]) -> BaseContext:
    """The context to start workers with (see the module's docstring)."""
    if can_fork():
        return multiprocessing.get_context("fork")
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    return context


def exit_with_parent(every_s: float = 1.0) -> None:
    """In a worker: end this process soon after the one that started it is gone (killed
    with SIGKILL, it can tell no one), instead of waiting for work forever."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
