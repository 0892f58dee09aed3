"""Batches over worker processes: each worker is built once per process and keeps its
state from batch to batch; every batch's result comes back; a caller that stops early
leaves no batch queued."""

from __future__ import annotations

import os
from contextlib import aclosing
from functools import partial

from alphadesk.pool.batches import in_processes, start_processes


class _Counter:
    """A batch worker that remembers how many batches its process was sent."""

    def __init__(self, scale: int) -> None:
        self.scale, self.batches = scale, 0

    def __call__(self, batch: list[int]) -> tuple[int, int, list[int]]:
        self.batches += 1
        return os.getpid(), self.batches, [n * self.scale for n in batch]


async def test_every_batch_comes_back_done_by_a_worker_built_once_per_process() -> None:
    pool = start_processes(partial(_Counter, 10), workers=2)
    batches = [[i, i + 1] for i in range(0, 20, 2)]
    try:
        async with aclosing(in_processes(pool, batches)) as results:
            done = [result async for result in results]
    finally:
        pool.shutdown(wait=True)
    assert sorted(n for _pid, _count, ns in done for n in ns) == [n * 10 for n in range(20)]
    by_process: dict[int, list[int]] = {}
    for pid, count, _ns in done:
        by_process.setdefault(pid, []).append(count)
    assert os.getpid() not in by_process
    # One worker per process, counting its own batches: 1, 2, 3... with no gap nor repeat.
    assert all(sorted(c) == list(range(1, len(c) + 1)) for c in by_process.values())
    assert sum(len(c) for c in by_process.values()) == len(batches)


async def test_a_caller_that_stops_early_leaves_no_batch_queued() -> None:
    pool = start_processes(partial(_Counter, 1), workers=1)
    try:
        async with aclosing(in_processes(pool, [[i] for i in range(200)])) as results:
            async for _first in results:
                break
        # Every batch not started was cancelled: one more batch runs at once, as the only one.
        async with aclosing(in_processes(pool, [[7]])) as results:
            after = [result async for result in results]
    finally:
        pool.shutdown(wait=True)
    _pid, count, ns = after[0]
    assert ns == [7]
    assert count < 200  # the 200 batches were not all run before it
