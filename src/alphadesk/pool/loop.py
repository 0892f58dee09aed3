"""A worker's event loop: the steps of a run that is just starting go before the others'.

A worker runs many runs on one loop, and asyncio runs whatever is ready in turn. A desk
run takes about 25 steps before its first event (its checkpoint file opened through
SQLite's thread, its graph compiled and entered), and each waited for a full round of the
other runs' CPU work (a tool's analytics take up to 0.1-0.2 s at a time): with 25 runs to a
worker, a new run's first event came after 4-5 s. On :class:`StartFirstLoop`, the steps of
a task marked by :func:`run_first` (and of the tasks it starts) go ahead of every other
waiting step until it calls the function that mark returned (on its first event), and so
does every callback from another thread (a thread's result, which those steps wait on; the
step it wakes is queued by its own mark). The runs under way lose nothing but the order.

The reordering is of the loop's queue of ready callbacks (``_ready``, a deque in every
CPython asyncio loop since 3.4); a loop without one runs its callbacks in the usual order.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import time
import weakref
from collections.abc import Callable
from typing import TypeVarTuple

__all__ = ["StartFirstLoop", "call_first", "run_first"]

_Ts = TypeVarTuple("_Ts")

_LONGEST_START_S = 5.0  # a run that emits nothing for this long goes on in turn


class _Start:
    """One task's mark: first until ``done`` is called, or for ``_LONGEST_START_S``."""

    __slots__ = ("until",)

    def __init__(self) -> None:
        self.until = time.monotonic() + _LONGEST_START_S

    def done(self) -> None:
        self.until = 0.0

    @property
    def on(self) -> bool:
        return self.until > 0.0 and time.monotonic() < self.until


_starting: contextvars.ContextVar[_Start | None] = contextvars.ContextVar("starting", default=None)


def run_first() -> Callable[[], None]:
    """Mark the current task, and the tasks it starts from now on, as starting: on a
    :class:`StartFirstLoop` their steps go first. Returns the function that ends the mark
    (calling it again does nothing)."""
    start = _Start()
    _starting.set(start)
    return start.done


def call_first(callback: Callable[[], object]) -> None:
    """``callback`` on the running loop right after the current step, ahead of the other
    waiting ones (on a :class:`StartFirstLoop`; in turn on another loop)."""
    loop = asyncio.get_running_loop()
    if isinstance(loop, StartFirstLoop):
        loop.call_first(callback)
    else:
        loop.call_soon(callback)


class StartFirstLoop(asyncio.SelectorEventLoop):
    """An event loop that runs starting tasks' steps, and threads' callbacks, first."""

    def __init__(self) -> None:
        super().__init__()
        ready = getattr(self, "_ready", None)
        self._queue: collections.deque[asyncio.Handle] | None = (
            ready if isinstance(ready, collections.deque) else None
        )
        self._first: weakref.WeakSet[asyncio.Handle] = weakref.WeakSet()

    def call_soon(
        self,
        callback: Callable[[*_Ts], object],
        *args: *_Ts,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        handle = super().call_soon(callback, *args, context=context)
        start = context.get(_starting) if context is not None else None
        if start is not None and start.on:
            self._to_front(handle)
        return handle

    def call_first(self, callback: Callable[[], object]) -> asyncio.Handle:
        """``callback`` after the current step and the other first ones already waiting."""
        handle = super().call_soon(callback)
        self._to_front(handle)
        return handle

    def call_soon_threadsafe(
        self,
        callback: Callable[[*_Ts], object],
        *args: *_Ts,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        """``callback`` from another thread, ahead of every waiting step: the latest such
        callback goes first, so callbacks from threads keep no order among themselves."""
        handle = super().call_soon_threadsafe(callback, *args, context=context)
        if self._queue is not None:
            # From another thread: the loop may be taking handles meanwhile (then the
            # handle may already be gone, which is as good). Each deque call is atomic.
            with contextlib.suppress(ValueError):
                self._queue.remove(handle)
                self._queue.appendleft(handle)
        return handle

    def _to_front(self, handle: asyncio.Handle) -> None:
        """Move ``handle`` (just queued last, on the loop's thread) behind the first ones."""
        queue = self._queue
        if queue is None or queue[-1] is not handle:
            return
        queue.pop()
        ahead = 0
        while ahead < len(queue) and queue[ahead] in self._first:
            ahead += 1
        queue.insert(ahead, handle)
        self._first.add(handle)
