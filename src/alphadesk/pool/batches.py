"""Batches of work spread over worker processes of this machine or a Ray cluster's actors.

A batch worker is built once per process (or actor) by ``make`` (a picklable callable:
a module-level class, or a ``functools.partial`` of one) and then called on batch after
batch; it keeps what is costly to build (a desk, a runner, an event loop) for all of
them. Each batch's result comes back as soon as it is done, in the order they finish.
Locally the workers are a ``ProcessPoolExecutor`` started as :mod:`.processes` says; on
a cluster they are Ray actors, one batch in flight each, so the work in flight never
exceeds what they were sized for. A caller stopped midway leaves no batch queued, and on
Ray no actor alive.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Generic, TypeVar

from alphadesk.cluster import RayCluster, cluster_cpus
from alphadesk.pool.processes import exit_with_parent, start_method

__all__ = ["BatchWorker", "in_processes", "on_ray", "start_processes"]

B = TypeVar("B")
R = TypeVar("R")

BatchWorker = Callable[[B], R]

# The batch worker of this process, when it is a worker: set once by its initializer, read
# by every batch it is sent (a process pool can hand its tasks no other state).
_WORKER: list[BatchWorker[Any, Any]] = []


def start_processes(
    make: Callable[[], BatchWorker[Any, Any]], workers: int, preload: Sequence[str] = ()
) -> ProcessPoolExecutor:
    """``workers`` processes, each building its batch worker with ``make`` as it starts
    (``preload``: the modules a fork server loads once for all of them)."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=start_method(preload),
        initializer=_start,
        initargs=(make,),
    )


async def in_processes(
    pool: ProcessPoolExecutor, batches: Iterable[B]
) -> AsyncGenerator[Any, None]:
    """Every batch sent to ``pool``'s workers; yields each result as it is done. Closing
    the generator early cancels the batches not yet started."""
    loop = asyncio.get_running_loop()
    pending = [loop.run_in_executor(pool, _call, batch) for batch in batches]
    try:
        for finished in asyncio.as_completed(pending):
            yield await finished
    finally:
        for future in pending:
            future.cancel()


async def on_ray(
    cluster: RayCluster,
    make: Callable[[], BatchWorker[Any, Any]],
    batches: Iterable[B],
    *,
    workers: int,
) -> AsyncGenerator[Any, None]:
    """Every batch sent to Ray actors, each building its batch worker with ``make``: no
    more actors than ``workers``, than batches, nor than the cluster's CPUs (an actor
    beyond them would wait for one forever). Yields each result as it is done; the actors
    are killed at the end, whatever happens."""
    ray = cluster.connect()
    todo = deque(batches)
    count = max(1, min(workers, cluster_cpus(ray), len(todo)))
    actor = ray.remote(num_cpus=1)(_Actor)
    actors = [actor.remote(make) for _ in range(count)]
    running: dict[asyncio.Future[Any], Any] = {}

    def give(one: Any) -> None:
        if todo:
            call: Future[Any] = one.call.remote(todo.popleft()).future()
            running[asyncio.wrap_future(call)] = one

    try:
        for one in actors:
            give(one)
        while running:
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for finished in done:
                give(running.pop(finished))
                yield finished.result()
    finally:
        for one in actors:
            ray.kill(one)


def _start(make: Callable[[], BatchWorker[Any, Any]]) -> None:
    exit_with_parent()
    _WORKER[:] = [make()]


def _call(batch: Any) -> Any:
    return _WORKER[0](batch)


class _Actor(Generic[B, R]):
    """A Ray actor holding one batch worker."""

    def __init__(self, make: Callable[[], BatchWorker[B, R]]) -> None:
        self.worker = make()

    def call(self, batch: B) -> R:
        return self.worker(batch)
